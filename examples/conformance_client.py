"""An mcp_sync client for the official MCP conformance suite's client scenarios.

The suite (``@modelcontextprotocol/conformance``, see ``.ci/conformance``) starts a mock
server for a scenario, then runs this program with the server's URL as the last argument
and the scenario's name in ``MCP_CONFORMANCE_SCENARIO``::

    npx @modelcontextprotocol/conformance client --scenario tools_call \\
        --command "python examples/conformance_client.py"

Each scenario is a short, ordinary use of :class:`~mcp_sync.Client` over Streamable HTTP;
the mock server checks what it was sent. The version offered is the one named in
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (our newest if unset). The ``auth/*`` scenarios
connect with :class:`mcp_sync.auth.OAuth` (or :class:`~mcp_sync.auth.ClientCredentials`)
and a headless browser step: the authorization URL is fetched without following its
redirect, and the redirect's ``Location`` is the callback. Credentials the scenario
gives (``MCP_CONFORMANCE_CONTEXT``) are used as a pre-registered client. A scenario
whose server or authorization server misbehaves on purpose ends with status 1 and the
error that stopped it; an unknown scenario with status 2.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import requests

from mcp_sync import Client, ElicitationRequest, ElicitationResult, types

#: The tool whose input schema json-schema-2020-12-preservation checks, and the tool to
#: echo it back with.
SCHEMA_TOOL = "json_schema_2020_12_tool"
ECHO_TOOL = "json_schema_echo"


def connect(url: str, **options: Any) -> Client:
    """A client of ``url``, offering the version the suite asked for."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    if version:
        options["protocol_version"] = version
    return Client.http(url, name="mcp-sync-conformance-client", timeout=20, **options)


def text_of(result: types.CallToolResult) -> str:
    """The text items of a tool result, joined."""
    return " ".join(item.text for item in result.content if isinstance(item, types.TextContent))


def initialize(url: str) -> None:
    """Connect (``initialize``, then ``notifications/initialized``) and disconnect."""
    with connect(url) as client:
        print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")


def tools_call(url: str) -> None:
    """Call ``add_numbers`` with two numbers."""
    with connect(url) as client:
        names = [tool.name for tool in client.list_tools()]
        if "add_numbers" not in names:
            raise RuntimeError(f"the server offers no add_numbers tool: {names}")
        print(text_of(client.call_tool("add_numbers", {"a": 5, "b": 3})))


def accept_with_defaults(request: ElicitationRequest) -> ElicitationResult[Any]:
    """Answer an elicitation as a user who accepts the form as it was pre-filled: every
    field that has a default keeps it (SEP-1034)."""
    return request.accept(request.defaults)


def elicitation_defaults(url: str) -> None:
    """Call the tool that elicits a form with defaults, and accept it unchanged."""
    with connect(url, elicitation_handler=accept_with_defaults) as client:
        print(text_of(client.call_tool("test_client_elicitation_defaults", {})))


def sse_retry(url: str) -> None:
    """Call ``test_reconnection``, whose event stream the server closes before answering:
    the answer arrives after reconnecting (SEP-1699). Without the optional GET stream for
    the server's own messages, the only GET the server sees is the reconnection."""
    with connect(url, listen=False) as client:
        print(text_of(client.call_tool("test_reconnection", {})))


def json_schema_preservation(url: str) -> None:
    """Send the input schema of a tool back to the server exactly as it was listed."""
    with connect(url) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        if SCHEMA_TOOL not in tools:
            raise RuntimeError(f"the server offers no {SCHEMA_TOOL} tool: {sorted(tools)}")
        schema = tools[SCHEMA_TOOL].input_schema
        print(text_of(client.call_tool(ECHO_TOOL, {"schema": schema})))


# --- 2026-07-28 (the modern era) ------------------------------------------------------------


def confirm(request: ElicitationRequest) -> ElicitationResult[Any]:
    """Accept a form by ticking every boolean field, keeping the other defaults."""
    values = dict(request.defaults)
    for name, field in (request.requested_schema or {}).get("properties", {}).items():
        if isinstance(field, dict) and field.get("type") == "boolean":
            values.setdefault(name, True)
    return request.accept(values)


def modern_client(url: str, **options: Any) -> Client:
    """A client that declares roots, sampling and elicitation (request-metadata checks
    them in every request's ``_meta``)."""
    return connect(url, roots=[], elicitation_handler=confirm,
                   sampling_handler=lambda params: {
                       "role": "assistant", "model": "none",
                       "content": {"type": "text", "text": "no model here"}}, **options)


def request_metadata(url: str) -> None:
    """Discover (retrying with a version the server names after -32022), then ping (a
    discover again in this era): every request carries its ``_meta`` and
    MCP-Protocol-Version. The server declares no features, so nothing else is asked."""
    with modern_client(url) as client:
        client.ping()
        print(f"speaking {client.protocol_version} with {client.server_info.name}")


def request_state(url: str) -> None:
    """Tools whose first answer asks for input (with and without requestState), one
    called in between, and one whose result has no resultType."""
    with modern_client(url) as client:
        for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state",
                     "test_mrtr_no_result_type"):
            print(name, text_of(client.call_tool(name, {})))


def standard_headers(url: str) -> None:
    """Every kind of request, each POST naming its method (and tool, prompt or URI)."""
    with modern_client(url) as client:
        tools = client.list_tools()
        for tool in tools:
            client.call_tool(tool.name, _sample_arguments(tool.input_schema))
        resources = client.list_resources()
        for resource in resources[:1]:
            client.read_resource(resource.uri)
        prompts = client.list_prompts()
        for prompt in prompts[:1]:
            client.get_prompt(prompt.name, {a.name: "x" for a in prompt.arguments or []
                                            if a.required})


def custom_headers(url: str) -> None:
    """Call the tools whose arguments are mirrored in Mcp-Param-* headers."""
    with modern_client(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, _header_arguments(tool.name))


def invalid_tool_headers(url: str) -> None:
    """List tools (those with invalid x-mcp-header are left out) and call each kept one."""
    with modern_client(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, _sample_arguments(tool.input_schema))


def schema_ref_no_deref(url: str) -> None:
    """List tools whose schema has a network $ref; the client never fetches it."""
    with modern_client(url) as client:
        print([tool.name for tool in client.list_tools()])


def _sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    samples = {"string": "us-west", "integer": 1, "number": 1.5, "boolean": True}
    return {name: samples.get(field.get("type"), "x")
            for name, field in schema.get("properties", {}).items()
            if name in schema.get("required", ()) and isinstance(field, dict)}


def _header_arguments(tool: str) -> dict[str, Any]:
    if tool == "test_custom_headers_null":
        return {"region": "us-west1", "priority": 2, "verbose": None, "query": "q"}
    return {"region": "us-west1", "priority": 5, "verbose": True, "debug": False,
            "empty_val": "", "method_val": "GET", "float_val": 1.5,
            "non_ascii_val": "Zürich", "whitespace_val": "  padded  ",
            "leading_space_val": " lead", "trailing_space_val": "trail ",
            "internal_space_val": "a b c", "control_char_val": "a\x01b",
            "crlf_val": "line1\r\nline2", "tab_val": "\tindented", "query": "search"}


# --- authorization (auth/*) ---------------------------------------------------------------

#: The client metadata document URL the suite expects where CIMD is offered (auth/basic-cimd).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
#: Where the headless browser step says the user comes back; nothing listens there.
REDIRECT_URI = "http://localhost:3000/callback"


def follow_without_redirect(authorization_url: str) -> str:
    """The browser step, headless: the authorization server (which approves at once)
    answers with a redirect whose Location is the callback URL."""
    response = requests.get(authorization_url, allow_redirects=False, timeout=10)
    with response:
        location = response.headers.get("Location")
    if not location:
        raise RuntimeError(f"the authorization endpoint answered HTTP {response.status_code} "
                           "without a redirect")
    return location


def scenario_context() -> dict[str, Any]:
    """What the suite passes to the client in MCP_CONFORMANCE_CONTEXT (may be nothing)."""
    try:
        value = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def authorized(url: str) -> None:
    """Connect with OAuth (discovery, registration, authorization code with PKCE), list
    the tools and call each: the server asks for authorization, and for more scopes, on
    the way."""
    from mcp_sync.auth import ClientCredentials, OAuth

    context = scenario_context()
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    auth: Any
    if scenario.startswith("auth/client-credentials"):
        auth = ClientCredentials(context["client_id"], context["client_secret"],
                                 http_timeout=10)
    else:
        auth = OAuth(client_name="mcp-sync-conformance-client",
                     client_id=context.get("client_id"),
                     client_secret=context.get("client_secret"),
                     client_metadata_url=CLIENT_METADATA_URL, redirect_uri=REDIRECT_URI,
                     authorize=follow_without_redirect, http_timeout=10)
    with connect(url, auth=auth) as client:
        for tool in client.list_tools():
            print(tool.name, text_of(client.call_tool(tool.name, {})))


#: The client scenarios of the suite that this program runs, by name.
SCENARIOS: dict[str, Callable[[str], None]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
    # 2026-07-28
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": schema_ref_no_deref,
}


#: auth/* extension scenarios this client does not take part in (private_key_jwt client
#: authentication, DPoP, enterprise-managed authorization, workload identity federation).
UNSUPPORTED_AUTH = frozenset({
    "auth/client-credentials-jwt", "auth/dpop", "auth/dpop-nonce",
    "auth/enterprise-managed-authorization", "auth/wif-jwt-bearer",
})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scenario named by ``MCP_CONFORMANCE_SCENARIO`` against the URL in ``argv``.

    Args:
        argv: the command-line arguments; ``sys.argv[1:]`` if None. The last one is the
            server's URL.

    Returns:
        0 when the scenario ran to its end, 1 when it failed, 2 when it cannot be run.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if not args:
        print("usage: conformance_client.py URL (with MCP_CONFORMANCE_SCENARIO set)",
              file=sys.stderr)
        return 2
    run = SCENARIOS.get(scenario)
    if run is None and scenario.startswith("auth/") and scenario not in UNSUPPORTED_AUTH:
        run = authorized
    if run is None:
        print(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}",
              file=sys.stderr)
        return 2
    try:
        run(args[-1])
    except Exception as exc:  # reported to the suite through stderr and the status
        print(f"scenario {scenario!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

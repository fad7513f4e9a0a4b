"""The fixtures of the official MCP conformance suite, served by mcp_sync.

The suite (``@modelcontextprotocol/conformance``, see ``.ci/conformance``) runs its server
scenarios against a live server and calls tools, resources and prompts of fixed names
with fixed arguments; this server offers every one of them. Over Streamable HTTP::

    python examples/conformance_server.py --http --host 127.0.0.1 --port 3000
    npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3000/mcp \\
        --requirements 2025-11-25

``--port 0`` picks a free port; the URL is printed to stderr. Over stdio (the default) a
client spawns it. For gunicorn or any WSGI server, ``app`` is the application, serving
the endpoint at ``/mcp`` and answering only requests addressed to a loopback host::

    gunicorn -k gthread --threads 16 --chdir examples conformance_server:app

It offers:

* tools ``test_simple_text``, ``test_image_content``, ``test_audio_content``,
  ``test_embedded_resource``, ``test_multiple_content_types`` (each returns what its name
  says), ``test_tool_with_logging`` (three log messages), ``test_tool_with_progress``
  (progress 0, 50 and 100 of 100), ``test_error_handling`` (always fails),
  ``test_sampling`` (asks the client's model), ``test_elicitation``,
  ``test_elicitation_sep1034_defaults`` and ``test_elicitation_sep1330_enums`` (ask the
  client's user, with default values and with every enum form) and
  ``test_reconnection`` (a call that takes a moment) and ``json_schema_2020_12_tool``
  (its input schema uses ``$defs``, ``$anchor``, ``allOf`` and ``if``/``then``/``else``);
* for the modern era over HTTP: ``test_header_param`` (its ``region`` is mirrored into the
  ``Mcp-Param-Region`` header), ``test_logging_tool`` (logs, for requests that opted in),
  ``test_streaming_elicitation`` and ``test_missing_capability`` (ask the client's user
  and model);
* for ``subscriptions/listen``, tools ``test_trigger_tool_change`` and
  ``test_trigger_prompt_change`` (each adds a tool or prompt, or removes it again; with
  ``MCP_SYNC_STORE`` set, both, so that every process lists the same);
* resources ``test://static-text``, ``test://static-binary`` (a PNG),
  ``test://watched-resource`` (to subscribe to) and the template
  ``test://template/{id}/data``;
* prompts ``test_simple_prompt``, ``test_prompt_with_arguments`` (its ``arg1`` and ``arg2``
  complete from a short list), ``test_prompt_with_embedded_resource`` and
  ``test_prompt_with_image``;
* for the 2026-07-28 ``input-required-result-*`` scenarios, the tools and the prompt of
  :func:`add_input_required_fixtures`, which ask the client for input in one tool body
  for both eras (an input-required result in a modern request). ``requestState`` is
  signed with ``MCP_SYNC_REQUEST_STATE_KEY`` when that is set (the same in every process
  behind one endpoint), else with a key of this process.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import wave
from collections.abc import Sequence
from typing import Annotated, Any

from mcp_sync import CapabilityError, Context, Server, types
from mcp_sync.content import Audio, Image
from mcp_sync.server import Header
from mcp_sync.transports.http_server import LOOPBACK_HOSTS, session_store_from_env

# A 1x1 red pixel.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

STEP_DELAY = 0.05  # between the log messages and the progress notifications

WORDS = ["paris", "park", "party", "test", "testing"]


def make_wav(frames: int = 800, rate: int = 8000) -> bytes:
    """A WAV file of silence: mono, 8-bit, ``frames / rate`` seconds long."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * frames)  # 8-bit samples are unsigned: 128 is silence
    return buffer.getvalue()


WAV = make_wav()

#: Asked for by ``test_elicitation``.
CONTACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

#: A default for each primitive type (SEP-1034).
DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status",
                   "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status",
                     "default": True},
    },
}

#: The five forms of an enum (SEP-1330).
ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array",
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"},
            {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"},
        ]}},
    },
}


#: A hand-written JSON Schema 2020-12 with what type hints cannot express ($defs with an
#: $anchor, $ref, allOf/anyOf, if/then/else); published exactly as it is.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"},
                                         "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def elicit(ctx: Context, message: str, schema: dict[str, Any]) -> str:
    """Ask the client's user (``elicitation/create``); the answer as ``action=..., content=...``.

    The request is sent as the suite specifies it, field for field.
    """
    answer = ctx.send_request("elicitation/create",
                              {"message": message, "requestedSchema": schema})
    content = json.dumps(answer.get("content", {}), sort_keys=True)
    return f"action={answer.get('action')}, content={content}"


# --- subscriptions/listen (2026-07-28): changes to make while a client listens -------------

def add_listen_fixtures(server: Server, restore: bool = False) -> None:
    """Tools that change the server's lists, for the ``server-stateless`` scenario's
    listen checks: ``test_trigger_tool_change`` adds the tool ``test_dynamic_tool``, or
    removes it when present; ``test_trigger_prompt_change`` does the same with the
    prompt ``test_dynamic_prompt``. Either way the listening clients are told.

    With ``restore`` (several processes serve the endpoint, sharing a session store)
    each trigger adds its tool or prompt and removes it again before it returns: a
    change kept in the one process that served the call would make the lists of the
    processes differ, and a client's consecutive ``tools/list`` disagree. The listening
    clients, on any process, are told of both changes.
    """

    def dynamic_tool() -> str:
        return "here for now"

    def dynamic_prompt() -> str:
        return "Here for now."

    def toggle_tool() -> str:
        if any(tool.name == "test_dynamic_tool" for tool in server.tools):
            server.remove_tool("test_dynamic_tool")
            return "removed test_dynamic_tool"
        server.add_tool(dynamic_tool, name="test_dynamic_tool",
                        description="A tool test_trigger_tool_change adds and removes.")
        return "added test_dynamic_tool"

    def toggle_prompt() -> str:
        if any(prompt.name == "test_dynamic_prompt" for prompt in server.prompts):
            server.remove_prompt("test_dynamic_prompt")
            return "removed test_dynamic_prompt"
        server.add_prompt(dynamic_prompt, name="test_dynamic_prompt",
                          description="A prompt test_trigger_prompt_change adds and removes.")
        return "added test_dynamic_prompt"

    @server.tool()
    def test_trigger_tool_change() -> str:
        """Add the tool test_dynamic_tool, or remove it when present."""
        said = toggle_tool()
        return f"{said}, then {toggle_tool()}" if restore else said

    @server.tool()
    def test_trigger_prompt_change() -> str:
        """Add the prompt test_dynamic_prompt, or remove it when present."""
        said = toggle_prompt()
        return f"{said}, then {toggle_prompt()}" if restore else said


def make_server() -> Server:
    """Build the server with every fixture of the conformance suite.

    Returns:
        A new :class:`~mcp_sync.Server` named ``mcp-sync-conformance``.
    """
    server = Server("mcp-sync-conformance", version="1.0.0",
                    instructions="The fixtures of the MCP conformance suite.",
                    tools=True, resources=True, prompts=True, completions=True, logging=True,
                    request_state_key=os.environ.get("MCP_SYNC_REQUEST_STATE_KEY"))

    # --- tools --------------------------------------------------------------------------
    add_listen_fixtures(server, restore=bool(os.environ.get("MCP_SYNC_STORE", "").strip()))

    @server.tool()
    def test_simple_text() -> str:
        """Return a simple text."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> Image:
        """Return a PNG image."""
        return Image(PNG, "image/png")

    @server.tool()
    def test_audio_content() -> Audio:
        """Return a WAV clip."""
        return Audio(WAV, "audio/wav")

    @server.tool()
    def test_embedded_resource() -> types.EmbeddedResource:
        """Return an embedded text resource."""
        return types.EmbeddedResource(resource=types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain",
            text="This is an embedded resource content."))

    @server.tool()
    def test_multiple_content_types() -> list[Any]:
        """Return text, an image and an embedded resource."""
        return ["Multiple content types test:", Image(PNG, "image/png"),
                types.EmbeddedResource(resource=types.TextResourceContents(
                    uri="test://mixed-content-resource", mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123})))]

    @server.tool()
    def test_tool_with_logging(ctx: Context) -> str:
        """Send three log messages while running."""
        ctx.info("Tool execution started")
        ctx.wait_cancelled(STEP_DELAY)
        ctx.info("Tool processing data")
        ctx.wait_cancelled(STEP_DELAY)
        ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    def test_tool_with_progress(ctx: Context) -> str:
        """Report progress 0, 50 and 100 of 100 while running."""
        for progress in (0, 50, 100):
            if progress and ctx.wait_cancelled(STEP_DELAY):
                return "cancelled"
            ctx.report_progress(progress, 100)
        return "Tool with progress executed successfully"

    @server.tool()
    def test_error_handling() -> str:
        """Always fail."""
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool()
    def test_sampling(prompt: str, ctx: Context) -> str:
        """Ask the client's model to answer a prompt.

        Args:
            prompt: the prompt to send to the model.
        """
        reply = ctx.sample(prompt, max_tokens=100)
        text = reply.content.text if isinstance(reply.content, types.TextContent) else \
            f"{reply.content.type} content"
        return f"LLM response: {text}"

    @server.tool()
    def test_elicitation(message: str, ctx: Context) -> str:
        """Ask the client's user for a user name and an e-mail address.

        Args:
            message: the message to show the user.
        """
        return "User response: " + elicit(ctx, message, CONTACT_SCHEMA)

    @server.tool()
    def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Ask the client's user for fields of every primitive type, each with a default."""
        answer = elicit(ctx, "Please review and update the form fields with defaults",
                        DEFAULTS_SCHEMA)
        return f"Elicitation completed: {answer}"

    @server.tool()
    def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Ask the client's user to choose, with every form of enum."""
        answer = elicit(ctx, "Please select options from the enum fields", ENUMS_SCHEMA)
        return f"Elicitation completed: {answer}"

    @server.tool()
    def test_reconnection(ctx: Context) -> str:
        """Take a moment, then answer."""
        ctx.wait_cancelled(STEP_DELAY)
        return "Reconnection test completed successfully"

    @server.tool(input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(**contact: Any) -> str:
        """Tool with JSON Schema 2020-12 features."""
        return f"ok: {json.dumps(contact, sort_keys=True)}"

    # --- resources ----------------------------------------------------------------------

    @server.resource("test://static-text", mime_type="text/plain",
                     description="A static text resource.")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", mime_type="image/png",
                     description="A static binary resource (a PNG).")
    def static_binary() -> bytes:
        return PNG

    @server.resource("test://watched-resource", mime_type="text/plain",
                     description="A resource to subscribe to.")
    def watched_resource() -> str:
        return "Watched resource content."

    @server.resource("test://template/{id}/data", mime_type="application/json",
                     description="Data for an ID, from a template.")
    def template_data(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"},
                          separators=(",", ":"))

    # --- prompts ------------------------------------------------------------------------

    @server.prompt()
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt(complete={"arg1": WORDS, "arg2": WORDS})
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two arguments.

        Args:
            arg1: First test argument.
            arg2: Second test argument.
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt()
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        """A prompt embedding a resource.

        Args:
            resourceUri: URI of the resource to embed.
        """
        return [types.EmbeddedResource(resource=types.TextResourceContents(
                    uri=resourceUri, mime_type="text/plain",
                    text="Embedded resource content for testing.")),
                "Please process the embedded resource above."]

    @server.prompt()
    def test_prompt_with_image() -> list[Any]:
        """A prompt with an image."""
        return [Image(PNG, "image/png"), "Please analyze the image above."]

    # --- the modern era (2026-07-28) over Streamable HTTP ----------------------------------

    @server.tool()
    def test_header_param(region: Annotated[str, Header("Region")]) -> str:
        """Echo an argument that a modern client also sends as Mcp-Param-Region.

        Args:
            region: any text; over HTTP it travels in the header too.
        """
        return f"region={region}"

    @server.tool()
    def test_logging_tool(ctx: Context) -> str:
        """Log a message; only a request that set a log level in _meta receives it."""
        ctx.info("test_logging_tool ran")
        return "logged"

    @server.tool()
    def test_streaming_elicitation(ctx: Context) -> str:
        """Ask the client's user; a modern request never carries a request to the client
        on its stream."""
        try:
            answer = ctx.elicit("Your name?", schema={"name": str})
        except CapabilityError as exc:
            return f"no elicitation here: {exc}"
        return f"User response: {answer.action}"

    @server.tool()
    def test_missing_capability(ctx: Context) -> str:
        """Ask the client's model: a client that declared no sampling gets -32021."""
        return ctx.sample("Say hello", max_tokens=10).content.text

    add_input_required_fixtures(server)
    return server


# --- input-required results (2026-07-28, SEP-2322) ------------------------------------------

NAME_FORM = {"name": str}


def _said(reply: types.CreateMessageResult) -> str:
    return reply.content.text if isinstance(reply.content, types.TextContent) else \
        f"{reply.content.type} content"


def _roots(roots: list[types.Root]) -> str:
    return ", ".join(root.uri for root in roots) or "no roots"


def add_input_required_fixtures(server: Server) -> None:
    """Add the tools and the prompt the ``input-required-result-*`` scenarios call.

    Each asks through :class:`~mcp_sync.Context` as any tool would: in a legacy session
    the request goes to the client and is waited for; in a modern request the call
    ends with an input-required result and runs again with the answers. The keys the
    suite expects are given with ``key=``.
    """

    @server.tool()
    def test_input_required_result_elicitation(ctx: Context) -> str:
        """Ask the user's name (key ``user_name``) and greet them."""
        answer = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        if answer.value is None:
            return f"No name given ({answer.action})"
        return f"Hello, {answer.value['name']}!"

    @server.tool()
    def test_input_required_result_sampling(ctx: Context) -> str:
        """Ask the client's model a question (key ``capital_question``)."""
        reply = ctx.sample("What is the capital of France?", max_tokens=100,
                           key="capital_question")
        return f"The model said: {_said(reply)}"

    @server.tool()
    def test_input_required_result_list_roots(ctx: Context) -> str:
        """Ask for the client's roots (key ``client_roots``) and name them."""
        return f"Client roots: {_roots(ctx.list_roots(key='client_roots'))}"

    @server.tool()
    def test_input_required_result_request_state(ctx: Context) -> str:
        """Ask for a confirmation (key ``confirm``); "state-ok" once the state carried
        from the first round came back intact."""
        ctx.state.setdefault("asked_at_round", "first")
        answer = ctx.elicit("Please confirm", {"ok": bool}, key="confirm")
        carried = ctx.state.get("asked_at_round") == "first"
        return f"{'state-ok' if carried else 'state-missing'}: confirmed={answer.value}"

    @server.tool()
    def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Ask for a name, a greeting from the model and the roots, all in one round."""
        name, greeting, roots = ctx.gather(
            lambda: ctx.elicit("What is your name?", NAME_FORM, key="user_name"),
            lambda: ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
            lambda: ctx.list_roots(key="client_roots"))
        who = name.value["name"] if name.value else name.action
        return f"{who}; {_said(greeting)}; {_roots(roots)}"

    @server.tool()
    def test_input_required_result_multi_round(ctx: Context) -> str:
        """Ask a name, then (a round later) a favourite colour."""
        name = ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
        color = ctx.elicit("Step 2: What is your favorite color?", {"color": str},
                           key="step2")
        who = name.value["name"] if name.value else name.action
        return f"{who} likes {color.value['color'] if color.value else color.action}"

    @server.tool()
    def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Ask for a confirmation; a changed requestState is refused (-32602)."""
        answer = ctx.elicit("Please confirm", {"ok": bool}, key="confirm")
        return f"confirmed={answer.value}"

    @server.tool()
    def test_input_required_result_capabilities(ctx: Context) -> str:
        """Ask only what the client declared: its model, its user, its roots."""
        caps = ctx.client_capabilities or types.ClientCapabilities()
        asks: list[Any] = []
        if caps.sampling is not None:
            asks.append(lambda: _said(ctx.sample("Say hello", max_tokens=20, key="hello")))
        if caps.elicitation is not None:
            asks.append(lambda: ctx.elicit("What is your name?", NAME_FORM,
                                           key="user_name").action)
        if caps.roots is not None:
            asks.append(lambda: _roots(ctx.list_roots(key="client_roots")))
        return "; ".join(str(answer) for answer in ctx.gather(*asks)) or "nothing to ask"

    @server.prompt()
    def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that first asks the user what context to use."""
        answer = ctx.elicit("What context should the prompt use?", {"context": str},
                            key="user_context")
        context = answer.value["context"] if answer.value else "none"
        return f"Answer with this context in mind: {context}"


server = make_server()

#: The WSGI application for gunicorn and the like, with the MCP endpoint at ``/mcp``. A
#: Host header naming anything but a loopback address is refused (421), as a local
#: server must to resist DNS rebinding. ``MCP_SYNC_STORE=redis://HOST:PORT/DB`` keeps
#: its sessions in Redis, so that several processes serve them (docs/http.md).
app = server.wsgi_app(allowed_hosts=LOOPBACK_HOSTS, session_store=session_store_from_env())


def main(argv: Sequence[str] | None = None) -> None:
    """Serve over stdio, or over Streamable HTTP with ``--http``.

    Args:
        argv: the command-line arguments; ``sys.argv[1:]`` if None.
    """
    parser = argparse.ArgumentParser(description="The MCP conformance suite's fixtures.")
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--port", type=int, default=3000,
                        help="the port to listen on (0: a free one)")
    options = parser.parse_args(argv)
    if options.http:
        server.run_http(host=options.host, port=options.port)
    else:
        server.run_stdio()


if __name__ == "__main__":
    main()

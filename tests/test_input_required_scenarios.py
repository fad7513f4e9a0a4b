"""The conformance suite's ``input-required-result-*`` scenarios (2026-07-28, SEP-2322),
replayed in memory against examples/conformance_server.py.

The suite runs them over Streamable HTTP only; these tests send the same requests with
the same ``_meta`` (the suite's client capabilities: sampling, form elicitation, roots)
over the in-memory transport and check what each scenario checks, so the fixtures and
the library are held to the suite wherever the transport stands. Each test names its
scenario.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import RawPeer, load_module
from tests.server_support import MODERN, modern_peer, modern_request
from tests.wire_schema import message_errors

conformance = load_module(EXAMPLES / "conformance_server.py")

#: What the suite declares on every request unless a scenario says otherwise.
SUITE_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
SUITE_INFO = {"name": "conformance-test-client", "version": "1.0.0"}


@pytest.fixture
def peer() -> Iterator[RawPeer]:
    with modern_peer(conformance.make_server()) as (raw, _):
        yield raw


def send(peer: RawPeer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The suite's request (its ``_meta`` under the scenario's), schema-checked answer."""
    meta = params.pop("_meta", {})
    message = modern_request(method, params, clientCapabilities=SUITE_CAPS,
                             clientInfo=SUITE_INFO)
    message["params"]["_meta"].update(meta)
    answer: dict[str, Any] = peer.call(message)
    errors = message_errors(answer, MODERN, answers=method)
    assert not errors, (answer, errors)
    return answer


def input_required(answer: dict[str, Any]) -> dict[str, Any]:
    assert "result" in answer, answer
    assert answer["result"]["resultType"] == "input_required", answer
    return dict(answer["result"])


def complete(answer: dict[str, Any]) -> dict[str, Any]:
    assert "result" in answer, answer
    assert answer["result"]["resultType"] == "complete", answer
    return dict(answer["result"])


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def sampled(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text},
            "model": "test-model", "stopReason": "endTurn"}


ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


def retry(first: dict[str, Any], responses: dict[str, Any]) -> dict[str, Any]:
    state = {} if "requestState" not in first else {"requestState": first["requestState"]}
    return {"inputResponses": responses, **state}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {}, **extra}


def test_basic_elicitation(peer: RawPeer) -> None:
    """input-required-result-basic-elicitation (SEP-2322)."""
    first = input_required(send(peer, "tools/call", tool("test_input_required_result_elicitation")))
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    assert first["inputRequests"]["user_name"]["params"]["requestedSchema"] == {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    done = complete(send(peer, "tools/call", tool(
        "test_input_required_result_elicitation",
        **retry(first, {"user_name": accept({"name": "Alice"})}))))
    assert done["content"] == [{"type": "text", "text": "Hello, Alice!"}]


@pytest.mark.parametrize(("name", "method", "answer"), [
    ("test_input_required_result_sampling", "sampling/createMessage",
     sampled("The capital of France is Paris.")),
    ("test_input_required_result_list_roots", "roots/list", ROOTS),
])
def test_basic_sampling_and_list_roots(peer: RawPeer, name: str, method: str,
                                       answer: dict[str, Any]) -> None:
    """input-required-result-basic-sampling and -basic-list-roots (SEP-2322)."""
    first = input_required(send(peer, "tools/call", tool(name)))
    (key,) = first["inputRequests"]
    assert first["inputRequests"][key]["method"] == method
    done = complete(send(peer, "tools/call", tool(name, **retry(first, {key: answer}))))
    assert done["content"] and done["content"][0]["type"] == "text"


def test_request_state(peer: RawPeer) -> None:
    """input-required-result-request-state (SEP-2322): requestState is a string; the
    second round's text says "state-ok"."""
    name = "test_input_required_result_request_state"
    first = input_required(send(peer, "tools/call", tool(name)))
    assert isinstance(first["requestState"], str) and first["inputRequests"]
    (key,) = first["inputRequests"]
    answers = retry(first, {key: accept({"ok": True})})
    done = complete(send(peer, "tools/call", tool(name, **answers)))
    assert "state-ok" in done["content"][0]["text"]


def test_multiple_input_requests(peer: RawPeer) -> None:
    """input-required-result-multiple-input-requests (SEP-2322): three requests of three
    methods in one result, with requestState."""
    name = "test_input_required_result_multiple_inputs"
    first = input_required(send(peer, "tools/call", tool(name)))
    assert first["requestState"]
    methods = {request["method"] for request in first["inputRequests"].values()}
    assert methods == {"elicitation/create", "sampling/createMessage", "roots/list"}
    answers = {key: {"elicitation/create": accept({"name": "Alice"}),
                     "sampling/createMessage": sampled("Hello there!"),
                     "roots/list": ROOTS}[request["method"]]
               for key, request in first["inputRequests"].items()}
    done = complete(send(peer, "tools/call", tool(name, **retry(first, answers))))
    assert done["content"][0]["text"] == "Alice; Hello there!; file:///test/root"


def test_multi_round(peer: RawPeer) -> None:
    """input-required-result-multi-round (SEP-2322): a second input-required result with
    a new requestState, then a complete one."""
    name = "test_input_required_result_multi_round"
    first = input_required(send(peer, "tools/call", tool(name)))
    (key,) = first["inputRequests"]
    second = input_required(send(peer, "tools/call", tool(
        name, inputResponses={key: accept({"name": "Alice"})},
        requestState=first["requestState"])))
    assert second["requestState"] != first["requestState"]
    (key,) = second["inputRequests"]
    done = complete(send(peer, "tools/call", tool(
        name, inputResponses={key: accept({"color": "blue"})},
        requestState=second["requestState"])))
    assert done["content"][0]["text"] == "Alice likes blue"


def test_missing_input_response(peer: RawPeer) -> None:
    """input-required-result-missing-input-response (SEP-2322): a wrong key gets a new
    input-required result, not an error."""
    input_required(send(peer, "tools/call", tool(
        "test_input_required_result_elicitation",
        inputResponses={"wrong_key": accept({"data": "wrong"})})))


def test_non_tool_request(peer: RawPeer) -> None:
    """input-required-result-non-tool-request (SEP-2322): prompts/get asks too."""
    name = {"name": "test_input_required_result_prompt"}
    first = input_required(send(peer, "prompts/get", dict(name)))
    (key,) = first["inputRequests"]
    done = complete(send(peer, "prompts/get", {**name, **retry(
        first, {key: accept({"context": "test context"})})}))
    assert "test context" in done["messages"][0]["content"]["text"]


def test_result_type_and_unsupported_methods(peer: RawPeer) -> None:
    """input-required-result-result-type and -unsupported-methods (SEP-2322)."""
    assert "resultType" in input_required(send(
        peer, "tools/call", tool("test_input_required_result_elicitation")))
    for method in ("tools/list", "prompts/list"):
        assert complete(send(peer, method, {}))


def test_tampered_state(peer: RawPeer) -> None:
    """input-required-result-tampered-state (SEP-2322): -32602."""
    name = "test_input_required_result_tampered_state"
    first = input_required(send(peer, "tools/call", tool(name)))
    (key,) = first["inputRequests"]
    answer = send(peer, "tools/call", tool(name, inputResponses={key: accept({"ok": True})},
                                           requestState=first["requestState"] + "-TAMPERED"))
    assert answer["error"]["code"] == -32602


def test_capability_check(peer: RawPeer) -> None:
    """input-required-result-capability-check (SEP-2322): a client declaring only
    sampling is asked only for sampling."""
    first = input_required(send(peer, "tools/call", tool(
        "test_input_required_result_capabilities",
        _meta={"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}})))
    assert first["inputRequests"]
    assert {r["method"] for r in first["inputRequests"].values()} == {"sampling/createMessage"}


def test_ignore_extra_params(peer: RawPeer) -> None:
    """input-required-result-ignore-extra-params (SEP-2322): unknown keys beside the
    right answer, with no requestState, still complete."""
    complete(send(peer, "tools/call", tool(
        "test_input_required_result_elicitation", inputResponses={
            "user_name": accept({"name": "Alice"}),
            "unknown_extra_key": accept({"foo": "bar"}),
            "another_unexpected": accept({"baz": 123})})))


@pytest.mark.parametrize("responses", [{"user_name": 12345}, None])
def test_validate_input(peer: RawPeer, responses: Any) -> None:
    """input-required-result-validate-input (SEP-2322): a number for an answer, or null
    for the map, is a JSON-RPC error."""
    answer = send(peer, "tools/call", tool("test_input_required_result_elicitation",
                                           inputResponses=responses))
    assert answer["error"]["code"] == -32602

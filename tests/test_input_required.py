"""Input-required results (MCP 2026-07-28, SEP-2322) served by our Server, in memory.

Raw JSON-RPC over the in-memory transport: a modern ``tools/call``, ``prompts/get`` or
``resources/read`` whose function asks the client for input is answered with an
``InputRequiredResult``; the same request sent again with ``inputResponses`` and the
``requestState`` runs the function again with the answers. The same functions serve a
legacy session through :mod:`mcp_sync.testing`, where the asks are requests to the client.
Every answer is checked against schema-2026-07-28.json (``InputRequiredResult``,
``InputRequests``; DES-19).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from mcp_sync import (
    CapabilityError,
    Context,
    ElicitationRequest,
    ElicitationResult,
    Server,
    types,
)
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA, RawPeer
from tests.server_support import MODERN, modern_peer, modern_request
from tests.wire_schema import message_errors

ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
KEY = "k" * 32


@attrs.define
class Booking:
    name: str
    seats: int = 2


def make_server(**options: Any) -> tuple[Server, list[str]]:
    """A server whose functions ask for input; ``runs`` records every run of a body."""
    server = Server("asking", version="1.0.0", **options)
    runs: list[str] = []
    lock = threading.Lock()

    def ran(what: str) -> None:
        with lock:
            runs.append(what)

    @server.tool()
    def book(ctx: Context, table: int = 1) -> str:
        """Ask who books, then how many seats the model suggests."""
        ran("book")
        ctx.state["visits"] = ctx.state.get("visits", 0) + 1
        booking = ctx.elicit("Who is booking?", Booking)
        advice = ctx.sample(f"Seats for {booking.value.name}?", max_tokens=10)
        text = advice.content.text if isinstance(advice.content, types.TextContent) else "?"
        return f"table {table}: {booking.value.name}, {booking.value.seats} seats; " \
               f"model: {text}; visits={ctx.state['visits']}"

    @server.tool()
    def everything_at_once(ctx: Context) -> str:
        ran("everything_at_once")
        name, roots, said = ctx.gather(
            lambda: ctx.elicit("Name?", {"name": str}, key="who"),
            lambda: ctx.list_roots(key="where"),
            lambda: ctx.sample("Hi", max_tokens=5, key="what"))
        text = said.content.text if isinstance(said.content, types.TextContent) else "?"
        return f"{name.value['name']} {[root.uri for root in roots]} {text}"

    @server.tool()
    def careless(ctx: Context) -> str:
        try:
            answer = ctx.elicit("Name?", {"name": str})
        except Exception:  # a broad handler must not eat the round's end
            return "swallowed"
        return f"got {answer.action}"

    @server.tool()
    def bad_state(ctx: Context) -> str:
        ctx.state["when"] = {1, 2}  # a set: not JSON
        return ctx.elicit("Name?", {"name": str}).action

    @server.tool()
    def visit(ctx: Context) -> str:
        answer = ctx.elicit_url("Sign in", "https://example.com/login")
        return f"{answer.action} {answer.elicitation_id}"

    @server.tool()
    def pinger(ctx: Context) -> str:
        return str(ctx.send_request("ping"))

    @server.prompt()
    def briefing(topic: str, ctx: Context) -> str:
        ran("briefing")
        answer = ctx.elicit(f"Audience for {topic}?", {"audience": str}, key="audience")
        return f"Brief {answer.value['audience']} on {topic}."

    @server.resource("notes://{name}", mime_type="text/plain")
    def notes(name: str, ctx: Context) -> str:
        ran("notes")
        roots = ctx.list_roots()
        return f"{name} under {roots[0].uri}"

    return server, runs


@pytest.fixture
def served() -> Iterator[tuple[RawPeer, list[str]]]:
    server, runs = make_server()
    with modern_peer(server) as (raw, _):
        yield raw, runs


def call(raw: RawPeer, method: str, params: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """A modern request's schema-checked answer (result or error)."""
    meta.setdefault("clientCapabilities", ALL_CAPS)
    message = modern_request(method, params, **meta)
    raw.send(message)
    while True:
        answer = raw.receive()
        if "id" in answer:
            break
    assert answer["id"] == message["id"]
    errors = message_errors(answer, MODERN, answers=method)
    assert not errors, (answer, errors)
    return dict(answer)


def result(raw: RawPeer, method: str, params: dict[str, Any], **meta: Any) -> dict[str, Any]:
    answer = call(raw, method, params, **meta)
    assert "result" in answer, answer
    return dict(answer["result"])


def error(raw: RawPeer, method: str, params: dict[str, Any], **meta: Any) -> dict[str, Any]:
    answer = call(raw, method, params, **meta)
    assert "error" in answer, answer
    return dict(answer["error"])


def again(first: dict[str, Any], params: dict[str, Any],
          responses: dict[str, Any]) -> dict[str, Any]:
    """``params`` sent again with ``responses`` and ``first``'s requestState."""
    return {**params, "inputResponses": responses, "requestState": first["requestState"]}


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m",
            "stopReason": "endTurn"}


ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}

BOOK = {"name": "book", "arguments": {"table": 7}}


# --- rounds ---------------------------------------------------------------------------------


def test_an_ask_ends_the_call_with_an_input_required_result_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322, schema InputRequiredResult: resultType "input_required", the question
    in inputRequests under its key (method, params as elicitation/create has them), and a
    requestState; nothing is sent to the client as a request of its own."""
    raw, _ = served
    first = result(raw, "tools/call", BOOK)
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"elicit-1": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Who is booking?",
        "requestedSchema": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "seats": {"type": "integer", "default": 2}}}}}}
    assert isinstance(first["requestState"], str) and first["requestState"]
    assert "content" not in first and "isError" not in first
    assert first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "asking"
    assert raw.nothing_more()


def test_each_round_runs_the_function_again_with_the_answers_so_far_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322 (multi-round): the client sends the request again (new id) with
    inputResponses and requestState; the function runs from the top, the answered ask
    returns its answer, the next ask ends the round; ctx.state comes back each time."""
    raw, runs = served
    first = result(raw, "tools/call", BOOK)
    second = result(raw, "tools/call", again(first, BOOK, {
        "elicit-1": accept({"name": "Ada", "seats": 4})}))
    assert second["resultType"] == "input_required"
    (request,) = second["inputRequests"].values()
    assert list(second["inputRequests"]) == ["sample-2"]
    assert request["method"] == "sampling/createMessage"
    assert request["params"]["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Seats for Ada?"}}]
    assert second["requestState"] != first["requestState"]
    # The third round answers only the newest question: the first answer travels in
    # the state.
    third = result(raw, "tools/call", again(second, BOOK, {"sample-2": said("four")}))
    assert third["resultType"] == "complete"
    assert third["content"] == [{"type": "text", "text":
                                 "table 7: Ada, 4 seats; model: four; visits=3"}]
    assert runs == ["book"] * 3


def test_gather_asks_several_questions_in_one_round_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322 (InputRequests is a map): ctx.gather puts an elicitation, a roots
    request and a sampling request into one input-required result."""
    raw, runs = served
    params = {"name": "everything_at_once", "arguments": {}}
    first = result(raw, "tools/call", params)
    assert {key: value["method"] for key, value in first["inputRequests"].items()} == {
        "who": "elicitation/create", "where": "roots/list",
        "what": "sampling/createMessage"}
    assert first["inputRequests"]["where"] == {"method": "roots/list", "params": {}}
    done = result(raw, "tools/call", again(first, params, {
        "who": accept({"name": "Ada"}), "where": ROOTS, "what": said("hello")}))
    assert done["content"][0]["text"] == "Ada ['file:///work'] hello"
    assert runs == ["everything_at_once"] * 2


def test_prompts_and_resources_ask_too_sep_2322(served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322 (prompts/get and resources/read carry input-required results); an
    input-required read has no ttlMs or cacheScope, its complete read has them."""
    raw, runs = served
    prompt = {"name": "briefing", "arguments": {"topic": "MCP"}}
    first = result(raw, "prompts/get", prompt)
    assert list(first["inputRequests"]) == ["audience"]
    done = result(raw, "prompts/get", again(first, prompt, {
        "audience": accept({"audience": "engineers"})}))
    assert done["messages"][0]["content"]["text"] == "Brief engineers on MCP."

    read = {"uri": "notes://todo"}
    first = result(raw, "resources/read", read)
    assert first["resultType"] == "input_required" and "ttlMs" not in first
    assert first["inputRequests"] == {"roots-1": {"method": "roots/list", "params": {}}}
    done = result(raw, "resources/read", again(first, read, {"roots-1": ROOTS}))
    assert done["contents"][0]["text"] == "todo under file:///work"
    assert (done["ttlMs"], done["cacheScope"]) == (0, "private")
    assert runs == ["briefing", "briefing", "notes", "notes"]


def test_a_broad_except_in_the_function_does_not_swallow_the_round(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322: the round ends even when the function catches Exception around the
    ask (the signal is a BaseException), and the answer reaches it next time."""
    raw, _ = served
    params = {"name": "careless", "arguments": {}}
    first = result(raw, "tools/call", params)
    assert first["resultType"] == "input_required"
    done = result(raw, "tools/call", again(first, params, {"elicit-1": {"action": "decline"}}))
    assert done["content"][0]["text"] == "got decline"


def test_url_mode_is_asked_without_an_elicitation_id(
        served: tuple[RawPeer, list[str]]) -> None:
    """Schema ElicitRequestURLParams (2026-07-28): mode, message and url, no
    elicitationId; the result's elicitation_id is None."""
    raw, _ = served
    params = {"name": "visit", "arguments": {}}
    first = result(raw, "tools/call", params)
    assert first["inputRequests"]["elicit-1"]["params"] == {
        "mode": "url", "message": "Sign in", "url": "https://example.com/login"}
    done = result(raw, "tools/call", again(first, params, {"elicit-1": {"action": "accept"}}))
    assert done["content"][0]["text"] == "accept None"


# --- what may not be asked ---------------------------------------------------------------------


@pytest.mark.parametrize(("method", "params", "caps", "required"), [
    ("tools/call", BOOK, {"sampling": {}}, {"elicitation": {}}),
    ("tools/call", {"name": "visit", "arguments": {}}, {"elicitation": {}},
     {"elicitation": {"url": {}}}),
    ("resources/read", {"uri": "notes://todo"}, {"elicitation": {}}, {"roots": {}}),
    ("prompts/get", {"name": "briefing", "arguments": {"topic": "x"}}, {},
     {"elicitation": {}}),
])
def test_an_undeclared_capability_is_missing_required_client_capability_sep_2575(
        served: tuple[RawPeer, list[str]], method: str, params: dict[str, Any],
        caps: dict[str, Any], required: dict[str, Any]) -> None:
    """SEP-2322 (capability check), SEP-2575, schema MissingRequiredClientCapabilityError:
    an ask the request's clientCapabilities do not allow sends no input request; the
    request is answered -32021 with data.requiredCapabilities."""
    raw, _ = served
    failed = error(raw, method, params, clientCapabilities=caps)
    assert failed["code"] == -32021
    assert failed["data"] == {"requiredCapabilities": required}


def test_a_function_may_catch_the_missing_capability_and_do_without() -> None:
    """The -32021 error is a CapabilityError inside the function: caught, the function
    goes on and completes; in a legacy session the same body gets CapabilityError."""
    server = Server("fallback")

    @server.tool()
    def summary(ctx: Context) -> str:
        try:
            return ctx.sample("Summarise", max_tokens=5).model
        except CapabilityError as exc:
            return f"no model: {type(exc).__name__}"

    with modern_peer(server) as (raw, _):
        done = result(raw, "tools/call", {"name": "summary", "arguments": {}},
                      clientCapabilities={})
    assert done["content"][0]["text"] == "no model: MissingClientCapability"
    with open_client(server, **LEGACY_ERA) as client:
        assert client.call_tool("summary").content[0].text == "no model: CapabilityError"


def test_requests_the_era_lacks_and_requests_that_cannot_ask_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322 (unsupported methods): a ping to the client cannot be asked; list
    requests never answer input_required."""
    raw, _ = served
    refused = result(raw, "tools/call", {"name": "pinger", "arguments": {}})
    assert refused["isError"] is True and "ping" in refused["content"][0]["text"]
    for method in ("tools/list", "prompts/list", "resources/templates/list"):
        assert result(raw, method, {})["resultType"] == "complete"


# --- answers -------------------------------------------------------------------------------------


def test_a_missing_answer_is_asked_again_and_extra_answers_are_ignored_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322 (missing-input-response, ignore-extra-params): an answer under another
    key asks the question again; keys nobody asked are ignored."""
    raw, _ = served
    params = {"name": "everything_at_once", "arguments": {}}
    first = result(raw, "tools/call", params)
    partial = result(raw, "tools/call", again(first, params, {
        "who": accept({"name": "Ada"}), "wrong": accept({"x": 1})}))
    assert partial["resultType"] == "input_required"
    assert set(partial["inputRequests"]) == {"where", "what"}
    done = result(raw, "tools/call", again(partial, params, {
        "where": ROOTS, "what": said("hi"), "who": accept({"name": "Eve"}),
        "unasked": {"anything": True}}))
    # "who" was not asked in the last round: the first answer stands.
    assert done["content"][0]["text"] == "Ada ['file:///work'] hi"


def test_answers_without_request_state_are_taken_by_key_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322: a client may send answers without a requestState (an ephemeral first
    round); they are matched to the questions by key."""
    raw, _ = served
    params = {"name": "everything_at_once", "arguments": {},
              "inputResponses": {"who": accept({"name": "Ada"}), "where": ROOTS,
                                 "what": said("yo"), "stray": accept({})}}
    assert result(raw, "tools/call", params)["content"][0]["text"] == \
        "Ada ['file:///work'] yo"


@pytest.mark.parametrize(("responses", "named"), [
    (None, "inputResponses"),
    ([1, 2], "inputResponses"),
    ({"elicit-1": 12345}, "inputResponses.elicit-1"),
    ({"elicit-1": {"action": "accept", "content": {"name": 5}}}, "requested schema"),
    ({"elicit-1": {"action": "maybe"}}, "action"),
])
def test_malformed_answers_are_invalid_params_sep_2322(
        served: tuple[RawPeer, list[str]], responses: Any, named: str) -> None:
    """SEP-2322 (validate-input): inputResponses that is not a map of result objects,
    or an elicitation answer that does not fit its requested schema, is -32602, not a
    tool result."""
    raw, _ = served
    failed = error(raw, "tools/call", {**BOOK, "inputResponses": responses})
    assert failed["code"] == -32602 and named in failed["message"]


def test_a_malformed_sampling_answer_is_invalid_params(
        served: tuple[RawPeer, list[str]]) -> None:
    """Schema CreateMessageResult: an answer without role and model is -32602."""
    raw, _ = served
    first = result(raw, "tools/call", BOOK)
    second = result(raw, "tools/call", again(first, BOOK, {
        "elicit-1": accept({"name": "Ada"})}))
    failed = error(raw, "tools/call", again(second, BOOK, {
        "sample-2": {"content": {"type": "text", "text": "x"}}}))
    assert failed["code"] == -32602


def test_state_that_json_cannot_carry_is_an_internal_error(
        served: tuple[RawPeer, list[str]]) -> None:
    """ctx.state holds only JSON: a set in it fails the request with -32603."""
    raw, _ = served
    failed = error(raw, "tools/call", {"name": "bad_state", "arguments": {}})
    assert failed["code"] == -32603 and "ctx.state" in failed["message"]


# --- requestState ----------------------------------------------------------------------------


def _tampered(token: str) -> str:
    payload, mac = token.removeprefix("v1.").split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["c"]["answers"] = {"elicit-1": accept({"name": "Mallory"})}
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"v1.{forged}.{mac}"


def test_request_state_is_integrity_protected_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322 (tampered-state): a changed state (a forged answer, a suffix, garbage, a
    number) is refused with -32602, data.reason "tampered"; the function does not run."""
    raw, runs = served
    first = result(raw, "tools/call", BOOK)
    token = first["requestState"]
    for bad in (_tampered(token), token + "-TAMPERED", "garbage", 42):
        failed = error(raw, "tools/call", {**BOOK, "requestState": bad, "inputResponses": {}})
        assert failed["code"] == -32602 and failed["data"] == {"reason": "tampered"}, bad
        assert "requestState" in failed["message"]
    assert runs == ["book"]


def test_request_state_belongs_to_its_request_sep_2322(
        served: tuple[RawPeer, list[str]]) -> None:
    """SEP-2322: a genuine state sent with other arguments, to another tool or as
    another method is refused with -32602, data.reason "foreign"."""
    raw, _ = served
    first = result(raw, "tools/call", BOOK)
    state = {"requestState": first["requestState"]}
    for method, params in [
        ("tools/call", {"name": "book", "arguments": {"table": 8}, **state}),
        ("tools/call", {"name": "careless", "arguments": {"table": 7}, **state}),
        ("prompts/get", {"name": "book", "arguments": {"table": "7"}, **state}),
    ]:
        failed = error(raw, method, params)
        assert failed["code"] == -32602 and failed["data"] == {"reason": "foreign"}


def test_request_state_expires() -> None:
    """SEP-2322: a state past request_state_ttl is refused, data.reason "expired"."""
    server, _ = make_server(request_state_ttl=1e-6)
    with modern_peer(server) as (raw, _):
        first = result(raw, "tools/call", BOOK)
        failed = error(raw, "tools/call", again(first, BOOK, {
            "elicit-1": accept({"name": "Ada"})}))
    assert failed["code"] == -32602 and failed["data"] == {"reason": "expired"}
    assert "send the request again" in failed["message"]


def test_a_shared_key_lets_another_process_continue_the_request() -> None:
    """DESIGN "Scale-out": two servers (two processes) built with one
    request_state_key continue each other's requests; a server with another key, or
    another name under the same key, refuses the state."""
    first_server, _ = make_server(request_state_key=KEY)
    second_server, runs = make_server(request_state_key=KEY.encode())
    with modern_peer(first_server) as (one, _), modern_peer(second_server) as (two, _):
        first = result(one, "tools/call", BOOK)
        second = result(two, "tools/call", again(first, BOOK, {
            "elicit-1": accept({"name": "Ada"})}))
        done = result(one, "tools/call", again(second, BOOK, {"sample-2": said("two")}))
    assert done["content"][0]["text"].startswith("table 7: Ada, 2 seats; model: two")
    assert runs == ["book"]
    stranger = Server("asking", request_state_key="s" * 32)
    stranger.add_tool(lambda: "x", name="book")
    impostor = Server("other", request_state_key=KEY)
    impostor.add_tool(lambda table: "x", name="book")
    for server, reason in ((stranger, "tampered"), (impostor, "foreign")):
        with modern_peer(server) as (raw, _):
            failed = error(raw, "tools/call", {**BOOK, **{"requestState":
                                                          first["requestState"]}})
        assert failed["data"] == {"reason": reason}


@pytest.mark.parametrize(("options", "problem"), [
    ({"request_state_key": "short"}, ValueError),
    ({"request_state_key": 12345}, TypeError),
    ({"request_state_ttl": 0}, ValueError),
    ({"request_state_ttl": float("nan")}, ValueError),
])
def test_request_state_settings_are_checked(options: dict[str, Any],
                                            problem: type[Exception]) -> None:
    """Server(request_state_key=, request_state_ttl=): a key of fewer than 32 bytes or
    another type, or a ttl that is not a positive number, is refused at once."""
    with pytest.raises(problem, match="request_state"):
        Server("x", **options)


# --- one body, both eras ---------------------------------------------------------------------


def _elicited(request: ElicitationRequest) -> ElicitationResult[Any]:
    if "booking" in request.message:
        return request.accept({"name": "Ada", "seats": 4})
    if "Audience" in request.message:
        return request.accept({"audience": "Ada"})
    return request.accept({"name": "Ada"})


def _sampled(request: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", model="m",
                                     content=types.TextContent(text="four"))


def test_the_same_functions_serve_a_legacy_session_with_requests_to_the_client() -> None:
    """DESIGN "Versions and eras": one tool, prompt and resource body; in a legacy
    session (mcp_sync.testing) each ask is a request to the client, waited for, and the
    body runs once; ctx.state is a fresh dict; gather asks one after another."""
    server, runs = make_server()
    with open_client(server, elicitation_handler=_elicited, sampling_handler=_sampled,
                     roots=[types.Root(uri="file:///work", name="work")], **LEGACY_ERA) as client:
        booked = client.call_tool("book", {"table": 7})
        gathered = client.call_tool("everything_at_once")
        prompt = client.get_prompt("briefing", {"topic": "MCP"})
        notes = client.read_resource("notes://todo")
    assert booked.content[0].text == "table 7: Ada, 4 seats; model: four; visits=1"
    assert gathered.content[0].text == "Ada ['file:///work'] four"
    assert prompt.messages[0].content.text == "Brief Ada on MCP."  # type: ignore[union-attr]
    assert notes.contents[0].text == "todo under file:///work"  # type: ignore[union-attr]
    assert runs == ["book", "everything_at_once", "briefing", "notes"]


@pytest.mark.parametrize("key", ["", 7])
def test_a_key_must_be_a_non_empty_string_in_both_eras(key: Any) -> None:
    """A bad key= fails the ask with ValueError in a legacy session as in a modern
    request (a tool error either way), before anything is sent."""
    server = Server("keys")

    @server.tool()
    def named(ctx: Context) -> str:
        return ctx.elicit("Name?", {"name": str}, key=key).action

    with modern_peer(server) as (raw, _):
        failed = result(raw, "tools/call", {"name": "named", "arguments": {}})
    assert failed["isError"] is True and "key must be" in failed["content"][0]["text"]
    with open_client(server, elicitation_handler=lambda request: request.decline()) as client:
        legacy = client.call_tool("named")
    assert legacy.is_error is True and "key must be" in legacy.content[0].text  # type: ignore[union-attr]


def test_an_ask_from_a_thread_the_function_started_still_ends_the_round() -> None:
    """Context methods work from any thread the function starts: an ask there records
    the question, and the request is answered input-required whatever the function
    made of the interruption; the next round's answer reaches the thread."""
    server = Server("threads")

    @server.tool()
    def helper(ctx: Context) -> str:
        found: list[str] = []

        def work() -> None:
            try:
                found.append(ctx.elicit("Name?", {"name": str}).value["name"])
            except BaseException:  # the thread ends; the request still asks
                found.append("interrupted")

        worker = threading.Thread(target=work, name="test:helper")
        worker.start()
        worker.join(10)
        return found[0]

    with modern_peer(server) as (raw, _):
        params = {"name": "helper", "arguments": {}}
        first = result(raw, "tools/call", params)
        assert list(first["inputRequests"]) == ["elicit-1"]
        done = result(raw, "tools/call", again(first, params, {
            "elicit-1": accept({"name": "Ada"})}))
    assert done["content"][0]["text"] == "Ada"

"""Prompts and argument completion on the Server."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Annotated, Any

import pytest

from mcp_sync import Context, Server, types
from mcp_sync.content import Image
from mcp_sync.errors import InternalError, InvalidParams
from mcp_sync.protocol._convert import from_wire
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA
from tests.server_support import Notifications, check, error, raw_session, request, result

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
LANGUAGES = [f"lang{index:03}" for index in range(150)]

pytestmark = pytest.mark.timeout(30)


def make_server(**options: Any) -> Server:
    server = Server("prompts", **options)

    @server.prompt(complete={"language": ["python", "Perl", "rust"]})
    def review(code: str, language: str = "python") -> str:
        """Review some code.

        Args:
            code: the code to review.
            language: its programming language.
        """
        return f"Review this {language} code:\n{code}"

    @server.prompt(name="chat", description="A short exchange.")
    def conversation(topic: Annotated[str, "what to talk about"]) -> list[Any]:
        return [("user", f"Tell me about {topic}."),
                ("assistant", "Gladly."),
                types.PromptMessage(role="user", content=types.TextContent(text="Go on.")),
                Image(PNG)]

    @server.prompt()
    def repeat(text: str, times: int, shout: bool = False) -> str:
        return " ".join([text.upper() if shout else text] * times)

    @server.prompt()
    def whole() -> types.GetPromptResult:
        return types.GetPromptResult(description="custom", messages=[types.PromptMessage(
            role="assistant", content=types.TextContent(text="hi"))])

    @server.prompt()
    def broken() -> str:
        raise RuntimeError("secret detail")

    @server.prompt(complete=lambda argument, value: [f"{argument}={value}!"])
    def anything(first: str, second: str) -> str:
        return first + second

    @server.resource("users://{user_id}/{section}",
                     complete={"user_id": lambda prefix: [u for u in ("alice", "bob", "anna")
                                                          if u.startswith(prefix)]})
    def user(user_id: str, section: str) -> str:
        return f"{user_id}/{section}"

    @server.resource("static://x")
    def static() -> str:
        return "x"

    return server


def get(client: Any, name: str, arguments: dict[str, Any] | None = None,
        ) -> types.GetPromptResult:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    raw = client.send_request("prompts/get", params)
    check(raw, "GetPromptResult")
    return from_wire(raw, types.GetPromptResult)


def test_list_prompts_arguments_prompts_1_2() -> None:
    """PROMPTS-1/2, CAPS-3: prompts declared with listChanged; arguments from the
    signature with descriptions and required flags."""
    with open_client(make_server(), **LEGACY_ERA) as client:
        assert client.server_capabilities.prompts == types.PromptsCapability(list_changed=True)
        listed = check(client.send_request("prompts/list"), "ListPromptsResult")
        prompts = {prompt["name"]: prompt for prompt in listed["prompts"]}
    assert prompts["review"] == {
        "name": "review", "description": "Review some code.",
        "arguments": [
            {"name": "code", "description": "the code to review.", "required": True},
            {"name": "language", "description": "its programming language.",
             "required": False},
        ]}
    assert prompts["chat"]["description"] == "A short exchange."
    assert prompts["chat"]["arguments"] == [
        {"name": "topic", "description": "what to talk about", "required": True}]
    assert "arguments" not in prompts["whole"]


def test_get_prompt_return_shapes_prompts_3_4() -> None:
    """PROMPTS-3/4, CONTENT-5: a string is one user message; tuples, PromptMessages and
    images become messages; a GetPromptResult passes whole."""
    with open_client(make_server()) as client:
        review = get(client, "review", {"code": "x = 1"})
        assert review.description == "Review some code."
        assert review.messages == [types.PromptMessage(
            role="user", content=types.TextContent(text="Review this python code:\nx = 1"))]
        chat = get(client, "chat", {"topic": "tea"})
        assert [message.role for message in chat.messages] == [
            "user", "assistant", "user", "user"]
        assert chat.messages[0].content == types.TextContent(text="Tell me about tea.")
        image = chat.messages[3].content
        assert isinstance(image, types.ImageContent)
        assert image.mime_type == "image/png"
        assert get(client, "whole").description == "custom"


def test_prompt_arguments_are_converted_from_strings_prompts_7() -> None:
    """PROMPTS-7: string arguments are converted to the parameters' types before use; a
    blank optional argument counts as left out."""
    with open_client(make_server()) as client:
        text = get(client, "repeat", {"text": "ab", "times": "3"}).messages[0].content
        assert text == types.TextContent(text="ab ab ab")
        shout = get(client, "repeat", {"text": "ab", "times": "2", "shout": "true"})
        assert shout.messages[0].content == types.TextContent(text="AB AB")
        blank = get(client, "repeat", {"text": "x", "times": "1", "shout": ""})
        assert blank.messages[0].content == types.TextContent(text="x")


def test_prompt_argument_errors_prompts_3_6(wire: Any) -> None:
    """PROMPTS-3/6: unknown prompt, missing required argument, a non-string value, a
    value that does not convert, an unknown argument: all -32602 before the function."""
    with open_client(make_server()) as client:
        with pytest.raises(InvalidParams, match="Unknown prompt: nope"):
            get(client, "nope")
        with pytest.raises(InvalidParams, match="missing required argument 'code'"):
            get(client, "review", {})
        with pytest.raises(InvalidParams, match="'times'"):
            get(client, "repeat", {"text": "a", "times": "many"})
        with pytest.raises(InvalidParams, match="unexpected argument"):
            get(client, "review", {"code": "x", "colour": "red"})
        with wire.allow_invalid():
            with pytest.raises(InvalidParams, match="strings"):
                client.send_request("prompts/get", {"name": "repeat",
                                                    "arguments": {"text": "a", "times": 3}})
            with pytest.raises(InvalidParams):
                client.send_request("prompts/get", {"name": "review", "arguments": ["x"]})
            with pytest.raises(InvalidParams):
                client.send_request("prompts/get", {})


def test_prompt_failure_is_internal_error_prompts_6() -> None:
    """PROMPTS-6: a prompt function that raises is -32603 without its details."""
    with open_client(make_server()) as client:
        with pytest.raises(InternalError) as caught:
            get(client, "broken")
        assert "secret detail" not in str(caught.value)


def test_prompt_gets_context() -> None:
    """PROMPTS-2: a Context parameter is not a prompt argument, and is passed in."""
    server = Server("s")
    seen: list[str] = []

    @server.prompt()
    def hello(name: str, ctx: Context) -> str:
        seen.append(ctx.method)
        return f"hello {name}"

    with open_client(server) as client:
        assert get(client, "hello", {"name": "x"}).messages[0].content == types.TextContent(
            text="hello x")
        assert [a.name for a in from_wire(client.send_request("prompts/list"),
                                          types.ListPromptsResult).prompts[0].arguments or []
                ] == ["name"]
    assert seen == ["prompts/get"]


def test_prompts_list_changed_and_pagination_prompts_5_pagination_5(wire: Any) -> None:
    """PROMPTS-5, PAGINATION-1/5: adding and removing prompts notifies; pages of 2."""
    notes = Notifications()
    server = Server("s", page_size=2)
    for index in range(5):
        server.add_prompt(lambda: "x", name=f"p{index}")
    with open_client(server, on_notification=notes, **LEGACY_ERA) as client:
        first = check(client.send_request("prompts/list"), "ListPromptsResult")
        assert [p["name"] for p in first["prompts"]] == ["p0", "p1"]
        rest = check(client.send_request("prompts/list", {"cursor": first["nextCursor"]}),
                     "ListPromptsResult")
        assert [p["name"] for p in rest["prompts"]] == ["p2", "p3"]
        with pytest.raises(InvalidParams):
            client.send_request("prompts/list", {"cursor": "bm9wZQ=="})
        server.add_prompt(lambda: "y", name="added")
        assert notes.next()[0] == "notifications/prompts/list_changed"
        server.remove_prompt("added")
        assert notes.next()[0] == "notifications/prompts/list_changed"
        with pytest.raises(KeyError):
            server.remove_prompt("added")


# --- completion ------------------------------------------------------------------------------


def complete(peer: Any, ref: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    found = result(peer, request("completion/complete", {
        "ref": ref, "argument": {"name": name, "value": value}}), "CompleteResult")
    completion: dict[str, Any] = found["completion"]
    return completion


def test_completion_capability_and_results_completion_1_2() -> None:
    """COMPLETION-1/2: declared when a completer exists; prompt choices filter by prefix
    (case-insensitively); resource template variables complete too."""
    with raw_session(make_server()) as (peer, _):
        prompt = {"type": "ref/prompt", "name": "review"}
        assert complete(peer, prompt, "language", "p") == {
            "values": ["python", "Perl"], "total": 2, "hasMore": False}
        assert complete(peer, prompt, "code", "x") == {
            "values": [], "total": 0, "hasMore": False}
        template = {"type": "ref/resource", "uri": "users://{user_id}/{section}"}
        assert complete(peer, template, "user_id", "a")["values"] == ["alice", "anna"]
        assert complete(peer, template, "section", "")["values"] == []
        assert complete(peer, {"type": "ref/resource", "uri": "static://x"}, "v", "") == {
            "values": [], "total": 0, "hasMore": False}
        anything = complete(peer, {"type": "ref/prompt", "name": "anything"}, "second", "z")
        assert anything["values"] == ["second=z!"]


def test_completion_truncates_to_100_completion_3() -> None:
    """COMPLETION-3: 150 values become 100 with total 150 and hasMore; an endless
    generator gives 100 with hasMore and no total."""
    server = Server("s")

    def endless(prefix: str) -> Iterator[str]:
        return (f"{prefix}{index}" for index in itertools.count())

    @server.prompt(complete={"language": lambda prefix: LANGUAGES, "other": endless})
    def many(language: str, other: str) -> str:
        return language + other

    with raw_session(server) as (peer, _):
        ref = {"type": "ref/prompt", "name": "many"}
        found = complete(peer, ref, "language", "")
        assert found["values"] == LANGUAGES[:100]
        assert found["total"] == 150
        assert found["hasMore"] is True
        endless_found = complete(peer, ref, "other", "v")
        assert len(endless_found["values"]) == 100
        assert endless_found["hasMore"] is True
        assert "total" not in endless_found


def test_completion_errors_completion_5(wire: Any) -> None:
    """COMPLETION-5: unknown prompt, template or argument is -32602; a failing completer
    is -32603; a malformed ref is -32602."""
    server = make_server()

    @server.prompt(complete={"x": lambda prefix: 1 / 0})  # type: ignore[arg-type,return-value]
    def failing(x: str) -> str:
        return x

    with raw_session(server) as (peer, _):
        def ask(ref: dict[str, Any], name: str = "x") -> dict[str, Any]:
            return error(peer, request("completion/complete", {
                "ref": ref, "argument": {"name": name, "value": ""}}))

        assert ask({"type": "ref/prompt", "name": "nope"})["code"] == -32602
        assert ask({"type": "ref/resource", "uri": "nope://{x}"})["code"] == -32602
        assert ask({"type": "ref/prompt", "name": "review"}, "colour")["code"] == -32602
        assert ask({"type": "ref/prompt", "name": "failing"})["code"] == -32603
        with wire.allow_invalid():
            assert ask({"type": "ref/other", "name": "x"})["code"] == -32602


def test_completion_undeclared_without_completers_caps_7() -> None:
    """CAPS-3/7: prompts without completers do not declare completions; the method is
    then -32601."""
    server = Server("s")
    server.add_prompt(lambda: "x", name="plain")
    with raw_session(server) as (peer, connection):
        assert connection.capabilities.completions is None
        assert error(peer, request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "plain"},
            "argument": {"name": "a", "value": ""}}))["code"] == -32601


def test_completer_shapes_are_checked() -> None:
    """COMPLETION-7: completers are checked when registered, not when first asked."""
    server = Server("s")
    with pytest.raises(TypeError, match="string"):
        server.add_prompt(lambda lang: lang, name="p", complete={"lang": "python"})
    with pytest.raises(TypeError, match="mapping or a function"):
        server.add_prompt(lambda lang: lang, name="p", complete=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="strings"):
        server.add_prompt(lambda lang: lang, name="p", complete={"lang": [1, 2]})
    assert server.prompts == []

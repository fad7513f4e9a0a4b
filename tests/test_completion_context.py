"""Completion context (V0618-27): the arguments the user already chose reach the
completer, and our client sends them only where the version has them."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from mcp_sync import Server
from mcp_sync.errors import InvalidParams
from mcp_sync.testing import open_client
from tests.elicitation_support import check_version
from tests.server_support import raw_session, request

pytestmark = pytest.mark.timeout(30)

FRAMEWORKS = {"python": ["django", "flask"], "rust": ["axum", "actix"]}


def make_server(seen: list[dict[str, str]]) -> Server:
    server = Server("frameworks")

    def framework(prefix: str, chosen: Mapping[str, str]) -> list[str]:
        seen.append(dict(chosen))
        return [name for name in FRAMEWORKS.get(chosen.get("language", ""), [])
                if name.startswith(prefix)]

    @server.prompt(complete={"framework": framework, "language": list(FRAMEWORKS)})
    def scaffold(language: str, framework: str) -> str:
        return f"Scaffold a {framework} project in {language}."

    def each(argument: str, prefix: str, chosen: Mapping[str, str]) -> list[str]:
        seen.append({"argument": argument, **chosen})
        return []

    @server.prompt(complete=each)
    def other(a: str, b: str) -> str:
        return a + b

    return server


def test_context_reaches_the_completer_v0618_27() -> None:
    """V0618-27: completing ``framework`` shows the completer ``{"language": "python"}``;
    one-argument completers and fixed choices work as before."""
    seen: list[dict[str, str]] = []
    with open_client(make_server(seen)) as client:
        result = client.complete("scaffold", "framework", "d",
                                 context={"language": "python"})
        assert result.completion.values == ["django"]
        assert client.complete("scaffold", "language", "r").completion.values == ["rust"]
        client.complete("other", "b", "", context={"a": "x"})
    assert seen == [{"language": "python"}, {"argument": "b", "a": "x"}]


def test_context_sent_only_from_june_v0618_27() -> None:
    """V0618-27: in a 2025-06-18 session the request carries ``context.arguments``
    (valid for that schema); in a 2025-03-26 session it is left out."""
    seen: list[dict[str, str]] = []
    with open_client(make_server(seen), protocol_version="2025-03-26") as client:
        assert client.complete("scaffold", "framework", "",
                               context={"language": "rust"}).completion.values == []
    assert seen == [{}]
    check_version(request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "scaffold"},
        "argument": {"name": "framework", "value": ""},
        "context": {"arguments": {"language": "rust"}}}), "CompleteRequest", "2025-06-18")
    with raw_session(make_server(seen), {}, version="2025-06-18") as (peer, _):
        answer = peer.call(request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "scaffold"},
            "argument": {"name": "framework", "value": "a"},
            "context": {"arguments": {"language": "rust"}}}))
        assert answer["result"]["completion"]["values"] == ["axum", "actix"]
        bad = peer.call(request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "scaffold"},
            "argument": {"name": "framework", "value": "a"},
            "context": {"arguments": {"language": 3}}}))
        assert bad["error"]["code"] == InvalidParams.code

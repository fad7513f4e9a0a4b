"""What functions return, as content: the Image and Audio helpers, mixed lists, embedded
resources, and content adapted to older clients."""

from __future__ import annotations

import base64
import json
import pickle
from pathlib import Path
from typing import Any

import attrs
import pytest

from mcp_sync import Server, types
from mcp_sync.content import Audio, Image
from mcp_sync.errors import InvalidParams
from mcp_sync.jsonrpc import Response, encode
from mcp_sync.protocol._convert import to_wire
from mcp_sync.server._content import to_content, to_prompt_messages, to_sampling_messages
from mcp_sync.testing import open_client
from tests.server_support import check, raw_session, request

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 8
MP3 = b"ID3\x04" + b"\x00" * 8

pytestmark = pytest.mark.timeout(30)


def test_media_types_are_recognised_content_2_3() -> None:
    """CONTENT-2/3: image and audio MIME types come from the bytes or are given."""
    assert Image(PNG).mime_type == "image/png"
    assert Image(JPEG).mime_type == "image/jpeg"
    assert Image(b"RIFF\x00\x00\x00\x00WEBPVP8 ").mime_type == "image/webp"
    assert Image(b"<svg/>", "image/svg+xml").mime_type == "image/svg+xml"
    assert Audio(WAV).mime_type == "audio/wav"
    assert Audio(MP3).mime_type == "audio/mpeg"
    assert Audio(b"OggS\x00", None).mime_type == "audio/ogg"
    with pytest.raises(ValueError, match="mime_type"):
        Image(b"plain text")
    with pytest.raises(ValueError, match="not an image"):
        Image(PNG, "audio/wav")
    with pytest.raises(ValueError, match="not an audio"):
        Audio(WAV, "image/png")
    content = Image(PNG).to_content()
    assert content == types.ImageContent(data=base64.b64encode(PNG).decode(),
                                         mime_type="image/png")


def test_media_are_frozen_values_shown_by_their_own_class() -> None:
    # Image and Audio inherit _Media's attrs methods rather than being built by attrs
    # again: the same fields, equality, hashing, repr and immutability for each.
    image, audio = Image(PNG), Audio(WAV)
    assert [field.name for field in attrs.fields(Image)] == ["data", "mime_type",
                                                             "annotations"]
    assert repr(image) == f"Image(data={PNG!r}, mime_type='image/png', annotations=None)"
    assert repr(audio).startswith("Audio(data=")
    assert image == Image(PNG) and hash(image) == hash(Image(PNG))
    assert image != Image(JPEG) and audio != Image(WAV, "image/png")
    assert attrs.evolve(image, mime_type="image/gif") == Image(PNG, "image/gif")
    assert pickle.loads(pickle.dumps(audio)) == audio
    assert not hasattr(image, "__dict__")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        image.data = b""  # type: ignore[misc]


def test_media_from_files(tmp_path: Path) -> None:
    """CONTENT-2/3: a file's media type comes from its name, else from its bytes."""
    (tmp_path / "logo.svg").write_text("<svg/>")
    (tmp_path / "clip.bin").write_bytes(WAV)
    assert Image.from_file(tmp_path / "logo.svg").mime_type == "image/svg+xml"
    assert Audio.from_file(tmp_path / "clip.bin").mime_type == "audio/wav"
    assert Audio.from_file(str(tmp_path / "clip.bin"), "audio/x-wav").mime_type == "audio/x-wav"


def make_server() -> Server:
    server = Server("content")

    @server.tool()
    def picture() -> Image:
        return Image(PNG, annotations=types.Annotations(audience=["user"]))

    @server.tool()
    def sound() -> Audio:
        return Audio(WAV)

    @server.tool()
    def captioned() -> list[Any]:
        return ["A chart:", Image(PNG), {"points": 3}]

    @server.tool()
    def attachment() -> types.TextResourceContents:
        return types.TextResourceContents(uri="file:///r.txt", text="r", mime_type="text/plain")

    @server.tool()
    def strings() -> list[str]:
        return ["a", "b"]

    @server.tool()
    def refuses() -> str:
        raise InvalidParams("the date is in the past")

    return server


def call(client: Any, name: str) -> types.CallToolResult:
    from mcp_sync.protocol._convert import from_wire

    raw = client.send_request("tools/call", {"name": name})
    check(raw, "CallToolResult")
    return from_wire(raw, types.CallToolResult)


def test_tool_media_and_mixed_lists_tools_5() -> None:
    """TOOLS-5, CONTENT-1..5: image, audio, embedded resource and mixed lists validate
    as CallToolResult; a list of plain values stays one JSON text."""
    with open_client(make_server()) as client:
        picture = call(client, "picture").content[0]
        assert isinstance(picture, types.ImageContent)
        assert picture.annotations == types.Annotations(audience=["user"])
        sound = call(client, "sound").content[0]
        assert isinstance(sound, types.AudioContent)
        assert base64.b64decode(sound.data) == WAV
        mixed = call(client, "captioned").content
        assert [item.type for item in mixed] == ["text", "image", "text"]
        assert mixed[2] == types.TextContent(text='{"points": 3}')
        embedded = call(client, "attachment").content[0]
        assert isinstance(embedded, types.EmbeddedResource)
        assert embedded.resource.uri == "file:///r.txt"
        assert call(client, "strings").content == [types.TextContent(text='["a", "b"]')]


class Text(str):
    """A str of a subclass: answered by the general path, to compare the direct one with."""


TEXTS = ["plain", "", 'a "quoted" \\ line\nbreak\t', "naïve ✓ 😀 \u2028", "lone \ud800 half"]


def test_text_is_answered_as_its_text_item_would_be_tools_5() -> None:
    """TOOLS-5: the answer for a tool returning a str is, byte for byte, the encoding of a
    CallToolResult holding one TextContent of it; a str subclass, which takes the general
    way, gets the same bytes."""
    server = Server("texts")

    @server.tool()
    def say(index: int, subclass: bool) -> str:
        return Text(TEXTS[index]) if subclass else TEXTS[index]

    with raw_session(server) as (peer, _):
        for index, text in enumerate(TEXTS):
            expected_result = to_wire(types.CallToolResult(
                content=[types.TextContent(text=text)]))
            for subclass in (False, True):
                message = request("tools/call", {
                    "name": "say", "arguments": {"index": index, "subclass": subclass}})
                peer.send(message)
                frame = peer.end.read_frame(timeout=5)
                assert frame == encode(Response(message["id"], expected_result)), text
                answer = json.loads(frame)
                check(answer["result"], "CallToolResult")
                assert answer["result"]["content"][0]["text"] == text


def test_any_exception_in_a_tool_is_an_error_result_tools_6() -> None:
    """TOOLS-6: even an RpcError raised inside the tool is a result with isError."""
    with open_client(make_server()) as client:
        refused = call(client, "refuses")
        assert refused.is_error is True
        assert refused.content == [types.TextContent(
            text="Error: the date is in the past (code -32602)")]


def test_old_clients_get_no_audio_version_2024() -> None:
    """2024-11-05 had no audio content: such a client gets a text note instead."""
    with open_client(make_server(), protocol_version="2024-11-05") as client:
        sound = call(client, "sound").content
        assert sound == [types.TextContent(text="[audio (audio/wav) omitted]")]


def test_conversion_rules_for_prompts_and_sampling() -> None:
    """PROMPTS-4, SAMPLING-3: prompt messages take any content; sampling refuses embedded
    resources."""
    assert to_content(None) == []
    assert to_content(b"\x00\x01")[0].type == "resource"
    messages = to_prompt_messages([("assistant", Audio(WAV)), {"role": "user", "content": {
        "type": "text", "text": "x"}}])
    assert [m.role for m in messages] == ["assistant", "user"]
    assert isinstance(messages[0].content, types.AudioContent)
    assert to_prompt_messages(("user", "hello")) == [types.PromptMessage(
        role="user", content=types.TextContent(text="hello"))]
    with pytest.raises(TypeError):
        to_prompt_messages([["nested"]])
    with pytest.raises(TypeError, match="sampling"):
        to_sampling_messages([types.TextResourceContents(uri="a://b", text="x")])
    with pytest.raises(ValueError):
        to_sampling_messages([])

"""Media a tool, prompt or resource function can return: :class:`Image` and :class:`Audio`.

Return one (or put one in a list with text) and the server turns it into the right
content item: an image or audio item in a tool result or a prompt message, a base64
``blob`` when a resource function returns it. :func:`resource_link` makes a link to a
resource, for a tool result or a prompt message.

Example::

    from mcp_sync.content import Image

    @server.tool()
    def chart() -> Image:
        return Image(render_png())                    # the MIME type is recognised

    @server.tool()
    def logo() -> list:
        return ["Our logo:", Image.from_file("logo.svg")]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import attrs

from . import types

if TYPE_CHECKING:
    from pathlib import PurePath

__all__ = ["Audio", "Image", "resource_link"]

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)
_AUDIO_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"ID3", "audio/mpeg"),
    (b"\xff\xfb", "audio/mpeg"),
    (b"\xff\xf3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)


def image_type(data: bytes) -> str | None:
    """The MIME type of an image recognised by its first bytes, or None."""
    for magic, mime_type in _IMAGE_MAGIC:
        if data.startswith(magic):
            return mime_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def audio_type(data: bytes) -> str | None:
    """The MIME type of audio recognised by its first bytes, or None."""
    for magic, mime_type in _AUDIO_MAGIC:
        if data.startswith(magic):
            return mime_type
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[4:8] == b"ftyp" and data[8:11] == b"M4A":
        return "audio/mp4"
    return None


def _resolve_type(data: bytes, mime_type: str | None, kind: str) -> str:
    if mime_type is not None:
        if not mime_type.startswith(f"{kind}/"):
            raise ValueError(f"{mime_type!r} is not an {kind} MIME type")
        return mime_type
    found = image_type(data) if kind == "image" else audio_type(data)
    if found is None:
        raise ValueError(f"cannot tell the {kind} format from its bytes; pass mime_type=")
    return found


def _file_type(path: str, mime_type: str | None, kind: str) -> str | None:
    if mime_type is not None:
        return mime_type
    import mimetypes  # only here, as pathlib below: a server that never reads files skips it

    # A name that says nothing useful (".bin") leaves the bytes to decide.
    guessed, _ = mimetypes.guess_type(path)
    return guessed if guessed is not None and guessed.startswith(f"{kind}/") else None


def _base64_text(data: bytes) -> str:
    import base64  # only here: a server that sends no binary data skips it (and struct)

    return base64.b64encode(data).decode("ascii")


_MediaT = TypeVar("_MediaT", bound="_Media")


# Image and Audio are not built by attrs again: _Media's generated methods serve them
# as they are (each attrs build adds to every server's start-up; docs/benchmarks.md).
@attrs.frozen(init=False)
class _Media:
    """Bytes of one kind of media with their MIME type; see :class:`Image`, :class:`Audio`."""

    _kind: ClassVar[str]
    data: bytes
    mime_type: str
    annotations: types.Annotations | None

    def __init__(self, data: bytes, mime_type: str | None = None, *,
                 annotations: types.Annotations | None = None) -> None:
        data = bytes(data)
        self.__attrs_init__(data, _resolve_type(data, mime_type, self._kind), annotations)

    @classmethod
    def from_file(cls: type[_MediaT], path: str | PurePath,
                  mime_type: str | None = None) -> _MediaT:
        """Read a file; its type comes from ``mime_type``, the file name or the bytes.

        Raises:
            OSError: the file cannot be read.
            ValueError: the type cannot be told.
        """
        from pathlib import Path  # only here: a server that never reads files skips it

        file = Path(path)
        return cls(file.read_bytes(), _file_type(str(file), mime_type, cls._kind))


class Image(_Media):
    """An image to return from a tool, prompt or resource function.

    Args:
        data: the image's bytes (not base64).
        mime_type: e.g. ``"image/png"``; recognised from the bytes for PNG, JPEG, GIF,
            WebP and BMP when left out.
        annotations: who the item is for and how much it matters.

    Raises:
        ValueError: no ``mime_type`` was given and the format is not recognised, or it
            is not an ``image/`` type.
    """

    __slots__ = ()
    _kind = "image"

    def to_content(self) -> types.ImageContent:
        """The ``image`` content item."""
        return types.ImageContent(data=_base64_text(self.data), mime_type=self.mime_type,
                                  annotations=self.annotations)


class Audio(_Media):
    """An audio clip to return from a tool, prompt or resource function.

    Args:
        data: the audio bytes (not base64).
        mime_type: e.g. ``"audio/wav"``; recognised from the bytes for WAV, MP3, Ogg,
            FLAC and M4A when left out.
        annotations: who the item is for and how much it matters.

    Raises:
        ValueError: no ``mime_type`` was given and the format is not recognised, or it
            is not an ``audio/`` type.
    """

    __slots__ = ()
    _kind = "audio"

    def to_content(self) -> types.AudioContent:
        """The ``audio`` content item."""
        return types.AudioContent(data=_base64_text(self.data), mime_type=self.mime_type,
                                  annotations=self.annotations)


def resource_link(uri: str, *, name: str | None = None, title: str | None = None,
                  description: str | None = None, mime_type: str | None = None,
                  size: int | None = None,
                  annotations: types.Annotations | None = None,
                  meta: dict[str, Any] | None = None) -> types.ResourceLink:
    """A link to the resource at ``uri``, to return from a tool or a prompt (V0618-22).

    The client can read it with ``read_resource(uri)``; it need not be listed by
    ``resources/list``. A client older than 2025-06-18 gets a text block naming the URI.

    Args:
        uri: the resource's URI.
        name: its name; by default the last segment of the URI's path, or the URI
            itself when the path has none (NAMBIG-12).
        title: display text for people.
        description: what the resource is.
        mime_type: its MIME type, if known.
        size: its size in bytes, if known.
        annotations: audience, priority and ``last_modified`` hints.
        meta: the link's ``_meta`` object.

    Raises:
        ValueError: ``uri`` is empty.
    """
    if not uri:
        raise ValueError("a resource link needs a URI")
    if name is None:
        name = uri.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if not name or name.endswith(":"):
            name = uri
    return types.ResourceLink(uri=uri, name=name, title=title, description=description,
                              mime_type=mime_type, size=size, annotations=annotations,
                              meta=meta)

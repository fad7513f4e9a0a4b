"""The protocol versions we speak, and what each one allows.

Feature code never compares version strings: it reads a flag of the negotiated
:class:`VersionProfile`. Adding a revision means adding it to ``KNOWN_VERSIONS`` and
giving it a profile.
"""

from __future__ import annotations

from ._record import Record

__all__ = ["KNOWN_VERSIONS", "LATEST_VERSION", "PROFILES", "VersionProfile", "profile_for"]

#: Oldest first; the last one is what we offer and what we answer an unknown offer with.
KNOWN_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26")
LATEST_VERSION = KNOWN_VERSIONS[-1]


class VersionProfile(Record):
    """The features one protocol revision has."""

    __slots__ = ("audio_content", "batching", "completions_capability", "progress_message",
                 "tool_annotations", "version")

    def __init__(self, *, version: str, batching: bool, audio_content: bool,
                 tool_annotations: bool, completions_capability: bool,
                 progress_message: bool) -> None:
        self.version = version
        #: JSON-RPC batches may be sent (receiving them is always accepted).
        self.batching = batching
        #: ``audio`` content items exist.
        self.audio_content = audio_content
        #: ``Tool.annotations`` exist.
        self.tool_annotations = tool_annotations
        #: ``completion/complete`` is gated by the server's ``completions`` capability.
        self.completions_capability = completions_capability
        #: ``notifications/progress`` may carry a ``message``.
        self.progress_message = progress_message


PROFILES: dict[str, VersionProfile] = {
    "2024-11-05": VersionProfile(
        version="2024-11-05", batching=False, audio_content=False, tool_annotations=False,
        completions_capability=False, progress_message=False,
    ),
    "2025-03-26": VersionProfile(
        version="2025-03-26", batching=True, audio_content=True, tool_annotations=True,
        completions_capability=True, progress_message=True,
    ),
}


def profile_for(version: str) -> VersionProfile:
    """The profile of a version we speak; ``KeyError`` for any other."""
    return PROFILES[version]

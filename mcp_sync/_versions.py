"""The protocol versions we speak, and what each one allows.

Feature code never compares version strings: it reads a flag of the negotiated
:class:`VersionProfile`. Adding a revision means adding it to ``KNOWN_VERSIONS`` and
giving it a profile.
"""

from __future__ import annotations

import attrs

__all__ = ["KNOWN_VERSIONS", "LATEST_VERSION", "PROFILES", "VersionProfile", "profile_for"]

#: Oldest first; the last one is what we offer and what we answer an unknown offer with.
KNOWN_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26")
LATEST_VERSION = KNOWN_VERSIONS[-1]


@attrs.frozen
class VersionProfile:
    """The features one protocol revision has."""

    version: str
    #: JSON-RPC batches may be sent (receiving them is always accepted).
    batching: bool
    #: ``audio`` content items exist.
    audio_content: bool
    #: ``Tool.annotations`` exist.
    tool_annotations: bool
    #: ``completion/complete`` is gated by the server's ``completions`` capability.
    completions_capability: bool
    #: ``notifications/progress`` may carry a ``message``.
    progress_message: bool


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

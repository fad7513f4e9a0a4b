"""The protocol versions we speak, and what each one allows.

Feature code never compares version strings: it reads a flag of the negotiated
:class:`VersionProfile`. Adding a revision means adding it to ``KNOWN_VERSIONS`` (legacy
era, negotiated by ``initialize``) or ``MODERN_VERSIONS`` (modern era, named on every
request) and giving it a profile.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._record import Record

__all__ = [
    "DEFAULT_HEADERLESS_VERSION", "KNOWN_VERSIONS", "LATEST_VERSION", "MODERN_VERSIONS",
    "PROFILES", "VersionProfile", "profile_for", "split_versions", "supported_versions",
]

#: Oldest first; the last one is what we offer and what we answer an unknown offer with.
KNOWN_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = KNOWN_VERSIONS[-1]

#: The modern era (DES-1): no handshake, version, capabilities and client info in every
#: request's ``_meta``. Never offered or accepted in ``initialize`` (COEX-9).
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

#: The version a server assumes for an HTTP request that names none and has no session
#: to tell it (V0618-13, as corrected after the 2025-06-18 release).
DEFAULT_HEADERLESS_VERSION = "2025-03-26"

_FLAGS = (
    # 2025-03-26
    "batching",                 # JSON-RPC batches may be sent (receiving is always accepted)
    "audio_content",            # ``audio`` content items exist
    "tool_annotations",         # ``Tool.annotations`` exist
    "completions_capability",   # ``completion/complete`` is gated by ``completions``
    "progress_message",         # ``notifications/progress`` may carry a ``message``
    # 2025-06-18
    "version_header",           # HTTP requests after initialize carry MCP-Protocol-Version
    "structured_output",        # ``outputSchema`` / ``structuredContent``
    "resource_link",            # ``resource_link`` content items exist
    "titles",                   # ``title`` on tools, resources, prompts, arguments
    "elicitation",              # ``elicitation/create`` exists
    "completion_context",       # ``completion/complete`` may carry ``context.arguments``
    # 2025-11-25
    "icons",                    # ``icons`` on implementations, tools, resources, prompts
    "elicitation_url",          # URL-mode elicitation and -32042
    "enum_v2_and_defaults",     # titled / multi-select enums and defaults on every field
    "sampling_tools",           # ``tools`` / ``toolChoice`` in sampling requests
    "argument_errors_as_results",  # bad tool arguments answer ``isError``, not -32602
    "sse_polling",              # priming events, ``retry:`` and server hang-ups
    "id_less_errors",           # an error response may lack ``id``
    "tasks",                    # the ``tasks`` capability and task-augmented requests
    # 2026-07-28 (the modern era)
    "stateless",                # no handshake: version, capabilities, client info per request
    "result_type",              # every result carries ``resultType``
    "cache_fields",             # list, read and discover results carry ttlMs / cacheScope
    "input_required",           # no server-to-client requests: input-required results
    "request_log_level",        # no logging/setLevel: a request opts in to its own logs
    "no_ping",                  # ``ping`` is gone
    "no_resource_subscribe",    # resources/subscribe and unsubscribe are gone
    "no_roots_list_changed",    # notifications/roots/list_changed is gone
    "not_found_invalid_params",  # an unknown resource is -32602, no longer -32002
)


class VersionProfile(Record):
    """The features one protocol revision has; each flag is named in ``_FLAGS`` above."""

    __slots__ = ("version", *_FLAGS)

    version: str
    batching: bool
    audio_content: bool
    tool_annotations: bool
    completions_capability: bool
    progress_message: bool
    version_header: bool
    structured_output: bool
    resource_link: bool
    titles: bool
    elicitation: bool
    completion_context: bool
    icons: bool
    elicitation_url: bool
    enum_v2_and_defaults: bool
    sampling_tools: bool
    argument_errors_as_results: bool
    sse_polling: bool
    id_less_errors: bool
    tasks: bool
    stateless: bool
    result_type: bool
    cache_fields: bool
    input_required: bool
    request_log_level: bool
    no_ping: bool
    no_resource_subscribe: bool
    no_roots_list_changed: bool
    not_found_invalid_params: bool

    def __init__(self, version: str, *, features: frozenset[str]) -> None:
        unknown = features - set(_FLAGS)
        if unknown:
            raise ValueError(f"unknown version features: {sorted(unknown)}")
        self.version = version
        for flag in _FLAGS:
            setattr(self, flag, flag in features)


_MARCH = frozenset(("batching", "audio_content", "tool_annotations",
                    "completions_capability", "progress_message"))
# Batches were removed again in 2025-06-18 (V0618-1).
_JUNE = (_MARCH - {"batching"}) | frozenset((
    "version_header", "structured_output", "resource_link", "titles", "elicitation",
    "completion_context"))
_NOVEMBER = _JUNE | frozenset((
    "icons", "elicitation_url", "enum_v2_and_defaults", "sampling_tools",
    "argument_errors_as_results", "sse_polling", "id_less_errors", "tasks"))

# Tasks moved out to an extension, URL elicitation lost -32042 and its completion
# notification, and SSE streams are per request without resumption.
_MODERN = (_NOVEMBER - {"tasks", "elicitation_url", "sse_polling"}) | frozenset((
    "stateless", "result_type", "cache_fields", "input_required", "request_log_level",
    "no_ping", "no_resource_subscribe", "no_roots_list_changed", "not_found_invalid_params"))

PROFILES: dict[str, VersionProfile] = {
    "2024-11-05": VersionProfile("2024-11-05", features=frozenset()),
    "2025-03-26": VersionProfile("2025-03-26", features=_MARCH),
    "2025-06-18": VersionProfile("2025-06-18", features=_JUNE),
    "2025-11-25": VersionProfile("2025-11-25", features=_NOVEMBER),
    "2026-07-28": VersionProfile("2026-07-28", features=_MODERN),
}


def profile_for(version: str) -> VersionProfile:
    """The profile of a version we speak; ``KeyError`` for any other."""
    return PROFILES[version]


def supported_versions(versions: Iterable[str] | None) -> tuple[str, ...]:
    """The legacy versions a side is configured to speak, oldest first (the last is offered).

    None means all of ``KNOWN_VERSIONS``. The order given does not matter.

    Raises:
        ValueError: ``versions`` is empty or names a version we do not know (a modern
            one included: only the server speaks the modern era so far).
    """
    if versions is None:
        return KNOWN_VERSIONS
    if isinstance(versions, str):
        versions = (versions,)
    chosen = set(versions)
    modern = sorted(chosen & set(MODERN_VERSIONS))
    if modern:
        raise ValueError(f"protocol version(s) {', '.join(map(repr, modern))} of the modern "
                         "era are not spoken here yet; known: " + ", ".join(KNOWN_VERSIONS))
    unknown = sorted(chosen - set(KNOWN_VERSIONS))
    if unknown:
        raise ValueError(f"unknown protocol version(s) {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(KNOWN_VERSIONS)}")
    if not chosen:
        raise ValueError("supported_versions is empty: name at least one protocol version")
    return tuple(v for v in KNOWN_VERSIONS if v in chosen)


def split_versions(versions: Iterable[str] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A dual-era server's versions: (legacy, modern), each oldest first.

    None means every version we know, of both eras.

    Raises:
        ValueError: ``versions`` names a version we do not know, or no legacy version
            (a server answering only modern requests is not supported yet).
    """
    if versions is None:
        return KNOWN_VERSIONS, MODERN_VERSIONS
    if isinstance(versions, str):
        versions = (versions,)
    chosen = set(versions)
    modern = tuple(v for v in MODERN_VERSIONS if v in chosen)
    legacy = chosen - set(MODERN_VERSIONS)
    if not legacy and modern:
        raise ValueError("supported_versions names no legacy version (2024-11-05 to "
                         f"{LATEST_VERSION}); a modern-only server is not supported yet")
    return supported_versions(legacy), modern

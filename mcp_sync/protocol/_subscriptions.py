"""``subscriptions/listen`` (2026-07-28) as the server decides it: no I/O, no threads.

A modern client does not get change notifications on a standing stream any more: it
sends ``subscriptions/listen``, a request that stays open, naming the kinds it wants
(:class:`ListenFilter`). The server acknowledges with the subset it will honour, then
sends every change of those kinds as a notification tagged with the request's id under
``_meta["io.modelcontextprotocol/subscriptionId"]``. The request ends when the client
cancels it, or when the server tears it down: ``notifications/cancelled`` naming it,
then its (empty) result.

This module parses and checks the filter, narrows it to what a server supports, and
says which notifications a stream takes and how they are tagged. Serving the streams
(who holds them, when they are written) is :mod:`mcp_sync.server._listen`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InvalidParams
from ._record import Record

__all__ = [
    "ACKNOWLEDGED",
    "LISTEN_METHOD",
    "STREAM_METHODS",
    "SUBSCRIPTION_ID_KEY",
    "ListenFilter",
    "covers",
    "tagged",
]

LISTEN_METHOD = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
RESOURCE_UPDATED = "notifications/resources/updated"

#: The notifications a listen stream carries; in the modern era they go nowhere else.
STREAM_METHODS = frozenset({TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED,
                            RESOURCE_UPDATED})

#: The filter's flags, by wire name, and the notification each one opts in to.
_FLAGS = (("toolsListChanged", TOOLS_CHANGED), ("promptsListChanged", PROMPTS_CHANGED),
          ("resourcesListChanged", RESOURCES_CHANGED))


def covers(subscribed: str, uri: str) -> bool:
    """True when a subscription to ``subscribed`` covers ``uri``: the URI itself or one
    under it (``a://x`` covers ``a://x/y``; AMBIG-23, and the schema's "might be a
    sub-resource of the one that the client actually subscribed to")."""
    if uri == subscribed:
        return True
    prefix = subscribed if subscribed.endswith("/") else subscribed + "/"
    return uri.startswith(prefix)


class ListenFilter(Record):
    """What one listen stream carries (the schema's ``SubscriptionFilter``).

    Attributes:
        methods: the list-changed notifications opted in to.
        resource_uris: the URIs whose ``notifications/resources/updated`` it takes,
            in the order the client gave them, without repeats.
    """

    __slots__ = ("methods", "resource_uris")

    def __init__(self, methods: Iterable[str] = (), resource_uris: Iterable[str] = ()) -> None:
        self.methods = frozenset(methods)
        self.resource_uris = tuple(dict.fromkeys(resource_uris))

    @classmethod
    def parse(cls, params: dict[str, Any]) -> ListenFilter:
        """The filter of a ``subscriptions/listen`` request's params.

        Members the schema does not know are ignored; a flag that is false or absent
        opts in to nothing.

        Raises:
            InvalidParams: ``notifications`` is missing or not an object, a flag is not
                a boolean, or ``resourceSubscriptions`` is not a list of strings.
        """
        raw = params.get("notifications")
        if not isinstance(raw, dict):
            raise InvalidParams(
                'Invalid params: "notifications" is required (an object naming the '
                "notifications to receive)", {"field": "notifications"})
        methods = []
        for flag, method in _FLAGS:
            value = raw.get(flag)
            if value is not None and not isinstance(value, bool):
                raise InvalidParams(f'Invalid params: "notifications.{flag}" must be a boolean',
                                    {"field": f"notifications.{flag}"})
            if value:
                methods.append(method)
        uris = raw.get("resourceSubscriptions")
        if uris is None:
            uris = []
        if not isinstance(uris, list) or not all(isinstance(uri, str) and uri for uri in uris):
            raise InvalidParams(
                'Invalid params: "notifications.resourceSubscriptions" must be a list of '
                "resource URIs", {"field": "notifications.resourceSubscriptions"})
        return cls(methods, uris)

    def honoured(self, supported: Iterable[str]) -> ListenFilter:
        """This filter narrowed to the notifications a server sends (``supported``:
        some of :data:`STREAM_METHODS`); what it cannot send is left out of the
        acknowledgement, as the schema asks."""
        kinds = frozenset(supported)
        return ListenFilter(self.methods & kinds,
                            self.resource_uris if RESOURCE_UPDATED in kinds else ())

    def to_wire(self) -> dict[str, Any]:
        """The ``SubscriptionFilter`` object: only what is opted in to."""
        wire: dict[str, Any] = {flag: True for flag, method in _FLAGS if method in self.methods}
        if self.resource_uris:
            wire["resourceSubscriptions"] = list(self.resource_uris)
        return wire

    def wants(self, method: str, params: dict[str, Any] | None) -> bool:
        """True when a stream with this filter carries this notification."""
        if method == RESOURCE_UPDATED:
            uri = (params or {}).get("uri")
            return isinstance(uri, str) and any(covers(subscribed, uri)
                                                for subscribed in self.resource_uris)
        return method in self.methods


def tagged(params: dict[str, Any] | None, subscription_id: Any) -> dict[str, Any]:
    """A copy of a notification's params with the stream's id in ``_meta``."""
    tagged_params = dict(params or {})
    meta = dict(tagged_params.get("_meta") or {})
    meta[SUBSCRIPTION_ID_KEY] = subscription_id
    tagged_params["_meta"] = meta
    return tagged_params

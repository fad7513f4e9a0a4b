"""When a cancellation may go out over Streamable HTTP, and when it need not.

Each POST is a request of its own, on a connection of its own, so two POSTs reach the
server in no particular order. A ``notifications/cancelled`` posted while its request
still waits for a sender thread would reach the server first, be ignored there as
naming an unknown request (CANCEL-5), and the request would run to its end all the same.
:class:`CancelLedger` follows each request's POST and decides what a cancellation does:

* the POST has not started: the request is withdrawn (never posted) and the server is
  told nothing, as it never heard of the request (CANCEL-2);
* the POST is under way, but may not have reached the server yet: the cancellation is
  held, and posted once it has (or once the POST ended). The server has the request
  when it answers the POST's head (an event stream opens); a server that answers with
  JSON sends its head only with the answer, so there a request counts as reached once
  its POST has been sent whole;
* the POST has reached the server: it is posted now.

In the last two cases the POST stops waiting for that request's answer, which the
server will not send (AMBIG-8), so a stream that then ends is not resumed for it.
A POST carrying several requests (a batch) is never withdrawn; its cancellations are
held like any other's.
"""

from __future__ import annotations

import enum
import threading

from ...protocol._jsonrpc import RequestId
from ._core import Post

__all__ = ["CancelLedger", "Decision"]


class Decision(enum.Enum):
    """What :meth:`CancelLedger.cancel` made of a cancellation."""

    SEND = "post it now"
    HELD = "held until its request's POST reaches the server"
    WITHDRAWN = "its request was never posted; nothing to send"


class CancelLedger:
    """Where each request's POST is: queued, under way, or reached the server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: dict[RequestId, Post] = {}
        self._withdrawn: set[Post] = set()
        self._under_way: dict[RequestId, Post] = {}
        self._reached: set[Post] = set()
        self._held: dict[Post, list[bytes]] = {}

    def queued(self, post: Post) -> None:
        """``post`` waits for a sender thread."""
        if len(post.request_ids) == 1:
            with self._lock:
                self._queued[post.request_ids[0]] = post

    def start(self, post: Post) -> bool:
        """``post`` is about to be sent; False if its request was withdrawn meanwhile."""
        with self._lock:
            for request_id in post.request_ids:
                if self._queued.get(request_id) is post:
                    del self._queued[request_id]
            if post in self._withdrawn:
                self._withdrawn.discard(post)
                return False
            for request_id in post.request_ids:
                self._under_way[request_id] = post
            return True

    def reached(self, post: Post) -> list[bytes]:
        """The server has ``post``'s requests; returns the cancellations to post now."""
        with self._lock:
            self._reached.add(post)
            return self._held.pop(post, [])

    def end(self, post: Post) -> list[bytes]:
        """``post`` is over (or never started); returns the cancellations still held."""
        with self._lock:
            for request_id in post.request_ids:
                if self._under_way.get(request_id) is post:
                    del self._under_way[request_id]
                if self._queued.get(request_id) is post:
                    del self._queued[request_id]
            self._reached.discard(post)
            self._withdrawn.discard(post)
            return self._held.pop(post, [])

    def give_up(self, request_id: RequestId) -> Post | None:
        """The modern era's cancellation, which is no message but the closing of the
        request's answer: withdraw the request if its POST has not started, else return
        the POST under way (None when there is nothing to close)."""
        with self._lock:
            post = self._queued.pop(request_id, None)
            if post is not None:
                self._withdrawn.add(post)
                return None
            post = self._under_way.get(request_id)
            if post is not None:
                post.outstanding.discard(request_id)
            return post

    def cancel(self, request_id: RequestId, body: bytes) -> Decision:
        """Decide what to do with ``body``, the cancellation of ``request_id``."""
        with self._lock:
            post = self._queued.pop(request_id, None)
            if post is not None:
                self._withdrawn.add(post)
                return Decision.WITHDRAWN
            post = self._under_way.get(request_id)
            if post is None:
                return Decision.SEND
            # The answer will not come (AMBIG-8): the POST must not wait, or resume, for it.
            post.outstanding.discard(request_id)
            if post in self._reached:
                return Decision.SEND
            self._held.setdefault(post, []).append(body)
            return Decision.HELD

"""The :class:`Context` handed to tool functions that ask for one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import types
from .jsonrpc import RequestId

if TYPE_CHECKING:
    from ._engine import IncomingRequest
    from .server import ServerConnection

__all__ = ["Context"]


class Context:
    """What a tool function can know and do about the request it is serving.

    Declare a parameter annotated ``Context`` (any name) and the server passes one in; it
    does not appear in the tool's input schema. Every method is safe to call from any
    thread the function starts.
    """

    def __init__(self, connection: ServerConnection, incoming: IncomingRequest) -> None:
        self._connection = connection
        self._incoming = incoming

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the request being served."""
        return self._incoming.id

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled the request or the connection ended.

        Check it in long loops and stop early; whatever the function returns after a
        cancellation is discarded (CANCEL-4).
        """
        return self._incoming.cancelled.is_set()

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block until the request is cancelled or ``timeout`` passes; True if cancelled.

        Use it instead of ``time.sleep`` in a tool that waits: it wakes at once on
        cancellation.
        """
        return self._incoming.cancelled.wait(timeout)

    @property
    def progress_token(self) -> str | int | None:
        """The client's progress token, or None if it did not ask for progress."""
        return self._incoming.progress_token

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> bool:
        """Tell the client how far along the request is.

        A no-op (returning False) when the client did not ask for progress, when
        ``progress`` does not exceed the previous value (PROGRESS-4), or once the request
        is answered or cancelled (PROGRESS-6).
        """
        return self._incoming.report_progress(progress, total, message)

    @property
    def client_info(self) -> types.Implementation | None:
        """The client's name and version from ``initialize``."""
        return self._connection.client_info

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        """What the client declared in ``initialize``."""
        return self._connection.client_capabilities

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None) -> dict[str, Any]:
        """Send a request to the client and block for its result (nested requests work).

        Raises:
            CapabilityError: the client did not declare what ``method`` needs.
            RpcError: the client answered with an error.
            RequestTimeout: no answer within ``timeout`` (the server's default if None).
        """
        return self._connection.send_request(method, params, timeout=timeout,
                                             related_to=self._incoming.id)

"""JSON-RPC 2.0 messages and their framing, as the public module :mod:`mcp_sync.jsonrpc`.

The implementation lives in the sans-IO protocol package.
"""

from .protocol._jsonrpc import Batch as Batch
from .protocol._jsonrpc import ErrorResponse as ErrorResponse
from .protocol._jsonrpc import Incoming as Incoming
from .protocol._jsonrpc import Invalid as Invalid
from .protocol._jsonrpc import Message as Message
from .protocol._jsonrpc import Notification as Notification
from .protocol._jsonrpc import Request as Request
from .protocol._jsonrpc import RequestId as RequestId
from .protocol._jsonrpc import Response as Response
from .protocol._jsonrpc import decode as decode
from .protocol._jsonrpc import encode as encode
from .protocol._jsonrpc import is_request_id as is_request_id
from .protocol._jsonrpc import parse_message as parse_message
from .protocol._jsonrpc import to_wire as to_wire

__all__ = [
    "Batch",
    "ErrorResponse",
    "Incoming",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode",
    "is_request_id",
    "parse_message",
    "to_wire",
]

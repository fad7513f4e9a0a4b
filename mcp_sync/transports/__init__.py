"""Transports move whole JSON-RPC messages and know nothing of MCP methods."""

from .base import Transport as Transport
from .memory import memory_pair as memory_pair

__all__ = ["Transport", "memory_pair"]

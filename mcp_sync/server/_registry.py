"""What a :class:`~mcp_sync.server.Server` has registered, for the connections serving it.

A :class:`Registry` holds the tools, resources, resource templates and prompts, the
request handlers with the capabilities that bring them, the call hooks and the
roots-changed callbacks. The Server owns one and registers into it; each
:class:`~mcp_sync.server.ServerConnection` is handed it, and the method handlers and
:class:`~mcp_sync.Context` look features up in it, never in the Server. Every method is
safe to call from any thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .. import types

if TYPE_CHECKING:
    from ..engine._engine import IncomingRequest
    from ._connection import ServerConnection
    from ._context import Context
    from ._features import (
        RegisteredPrompt,
        RegisteredResource,
        RegisteredTemplate,
        RegisteredTool,
    )

__all__ = ["FEATURE_METHODS", "CallHook", "Handler", "Registry", "RootsCallback"]

log = logging.getLogger("mcp_sync.server")

Handler = Callable[["ServerConnection", "IncomingRequest"], "dict[str, Any] | None"]
RootsCallback = Callable[["ServerConnection"], None]
#: Called with the request's Context; the context manager it returns encloses the call.
CallHook = Callable[["Context"], AbstractContextManager[object]]

#: The requests each server capability brings (CAPS-7: the rest get -32601).
FEATURE_METHODS: dict[str, tuple[str, ...]] = {
    "tools": ("tools/list", "tools/call"),
    "resources": ("resources/list", "resources/templates/list", "resources/read",
                  "resources/subscribe", "resources/unsubscribe"),
    "prompts": ("prompts/list", "prompts/get"),
    "logging": ("logging/setLevel",),
    "completions": ("completion/complete",),
}


class Registry:
    """The features, handlers and callbacks of one server (see the module docstring)."""

    def __init__(self, handlers: Mapping[str, Handler]) -> None:
        self._lock = threading.Lock()
        self._tools: dict[str, RegisteredTool] = {}
        self._resources: dict[str, RegisteredResource] = {}
        self._templates: dict[str, RegisteredTemplate] = {}
        self._prompts: dict[str, RegisteredPrompt] = {}
        self._handlers = dict(handlers)
        self._roots_callbacks: list[RootsCallback] = []
        self._call_hooks: tuple[CallHook, ...] = ()
        self._served_made: tuple[types.ServerCapabilities, tuple[str, ...]] | None = None

    # --- tools ------------------------------------------------------------------------------

    def add_tool(self, registered: RegisteredTool) -> None:
        with self._lock:
            self._tools[registered.tool.name] = registered

    def remove_tool(self, name: str) -> None:
        """Raises KeyError when no tool has that name."""
        with self._lock:
            del self._tools[name]

    def tool(self, name: str) -> RegisteredTool | None:
        with self._lock:
            return self._tools.get(name)

    def tools(self) -> list[types.Tool]:
        with self._lock:
            return [registered.tool for registered in self._tools.values()]

    # --- resources and templates --------------------------------------------------------------

    def add_resource(self, uri: str, registered: RegisteredResource) -> None:
        with self._lock:
            self._resources[uri] = registered

    def add_template(self, uri_template: str, registered: RegisteredTemplate) -> None:
        with self._lock:
            self._templates[uri_template] = registered

    def remove_resource(self, uri: str) -> None:
        """Unregister the resource with this URI, or the template with this text.

        Raises KeyError when neither exists.
        """
        with self._lock:
            if self._resources.pop(uri, None) is None and self._templates.pop(uri, None) is None:
                raise KeyError(uri)

    def resource(self, uri: str) -> RegisteredResource | None:
        with self._lock:
            return self._resources.get(uri)

    def template(self, uri_template: str) -> RegisteredTemplate | None:
        with self._lock:
            return self._templates.get(uri_template)

    def templates(self) -> list[RegisteredTemplate]:
        with self._lock:
            return list(self._templates.values())

    def resources(self) -> list[types.Resource]:
        with self._lock:
            return [registered.resource for registered in self._resources.values()]

    def resource_templates(self) -> list[types.ResourceTemplate]:
        with self._lock:
            return [registered.template for registered in self._templates.values()]

    # --- prompts ------------------------------------------------------------------------------

    def add_prompt(self, registered: RegisteredPrompt) -> None:
        with self._lock:
            self._prompts[registered.prompt.name] = registered

    def remove_prompt(self, name: str) -> None:
        """Raises KeyError when no prompt has that name."""
        with self._lock:
            del self._prompts[name]

    def prompt(self, name: str) -> RegisteredPrompt | None:
        with self._lock:
            return self._prompts.get(name)

    def prompts(self) -> list[types.Prompt]:
        with self._lock:
            return [registered.prompt for registered in self._prompts.values()]

    # --- what a connection serves -------------------------------------------------------------

    def present(self) -> dict[str, bool]:
        """Which features have something registered now, by capability name."""
        with self._lock:
            completable: list[RegisteredPrompt | RegisteredTemplate] = [
                *self._prompts.values(), *self._templates.values()]
            return {
                "tools": bool(self._tools),
                "resources": bool(self._resources or self._templates),
                "prompts": bool(self._prompts),
                "completions": any(item.completions.defined for item in completable),
            }

    def handler(self, method: str) -> Handler:
        """The handler of a request method the session let through (KeyError otherwise)."""
        return self._handlers[method]

    @property
    def methods(self) -> frozenset[str]:
        """Every request method a handler is registered for."""
        return frozenset(self._handlers)

    def served_methods(self, capabilities: types.ServerCapabilities) -> tuple[str, ...]:
        """The request methods a connection declaring ``capabilities`` answers (CAPS-7)."""
        made = self._served_made
        if made is not None and made[0] is capabilities:
            return made[1]  # the server makes the same capabilities until they change
        methods: list[str] = []
        for feature, feature_methods in FEATURE_METHODS.items():
            if getattr(capabilities, feature) is not None:
                methods.extend(method for method in feature_methods if method in self._handlers)
        served = tuple(methods)
        self._served_made = (capabilities, served)
        return served

    # --- hooks and callbacks ------------------------------------------------------------------

    def add_call_hook(self, hook: CallHook) -> None:
        with self._lock:
            self._call_hooks = (*self._call_hooks, hook)

    @property
    def call_hooks(self) -> tuple[CallHook, ...]:
        """The hooks around every handled request, the first added outermost."""
        return self._call_hooks

    def add_roots_callback(self, fn: RootsCallback) -> None:
        with self._lock:
            self._roots_callbacks.append(fn)

    def roots_changed(self, connection: ServerConnection) -> None:
        """Run the roots-changed callbacks for ``connection``; one that fails is logged."""
        with self._lock:
            callbacks = list(self._roots_callbacks)
        for callback in callbacks:
            try:
                callback(connection)
            except Exception:
                log.exception("roots-changed callback %r failed", callback)

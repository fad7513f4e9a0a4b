"""The MCP server: decorators register features, connections serve them.

A :class:`Server` registers tools, resources and resource templates, prompts with their
completers into the :class:`~mcp_sync.server._registry.Registry` it owns. Each client
connection is a :class:`ServerConnection` with its own session, engine, log level and
resource subscriptions, handed that registry; :meth:`Server.run_stdio` serves one over
stdin/stdout, :meth:`Server.connect` one over any transport. The request handlers live
in :mod:`mcp_sync.server._handlers`, the ways of serving (stdio, HTTP) in
:mod:`mcp_sync.server._serving`.

Capabilities (CAPS-3) are fixed per connection when it starts: ``tools``, ``resources``
and ``prompts`` are declared if something of that kind is registered then, and
``completions`` if a completer is. The constructor's flags override that: ``True``
declares a feature even while nothing is registered (for servers that add features
while clients are connected), ``False`` never declares it. ``logging`` is declared
unless ``logging=False``, because any function can log through its Context.
"""

from __future__ import annotations

import logging as _logging_module
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from .. import types
from ..protocol._make_icons import IconsSpec, make_icons
from ..protocol._request_state import RequestStateSeal
from ..protocol._versions import VersionProfile, split_versions
from ..transports.base import Transport
from ._announcing import Announcing

if TYPE_CHECKING:
    from ..engine._threads import WorkerPool
from ._connection import ServerConnection
from ._features import (
    AnnotationsSpec,
    CompleteSpec,
    check_decorator_argument,
    make_prompt,
    make_resource,
    make_template,
    make_tool,
)
from ._handlers import HANDLERS
from ._logging import McpLogHandler, ServerLogging, check_level
from ._modern import cache_settings
from ._registry import CallHook, Registry, RootsCallback
from ._serving import Serving
from ._uri_template import is_template
from ._version_rules import check_tool_name

__all__ = ["CallHook", "McpLogHandler", "Server", "ServerConnection"]

log = _logging_module.getLogger("mcp_sync.server")

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_TIMEOUT = 60.0


class Server(Announcing, Serving, ServerLogging):
    """An MCP server.

    Args:
        name: the ``serverInfo.name`` clients see.
        version: the ``serverInfo.version`` clients see.
        instructions: text telling clients (and their models) how to use the server.
        page_size: how many items each page of a ``*/list`` result holds.
        max_workers: how many requests one connection serves at once.
        idle_thread_timeout: seconds a connection's worker (or notification) thread
            waits for work before it ends; the next request starts one again. Idle
            clients then cost no threads beyond their connection's own.
        timeout: the default timeout, in seconds, of requests the server sends.
        log_level: the least severe log level a client receives until it sends
            ``logging/setLevel`` (LOGGING-5).
        log_rate_limit: the most log messages a second sent to one client, in bursts of
            as many; the rest are dropped (LOGGING-8). None (the default) sets no limit.
        tools: declare the ``tools`` capability: None (the default) if a tool is
            registered when a client connects, True always, False never.
        resources: the same for ``resources`` (with ``subscribe`` and ``listChanged``).
        prompts: the same for ``prompts``.
        completions: the same for ``completions``, which None declares when a prompt or
            resource template has a completer.
        logging: declare ``logging`` (True by default); with False, log messages are
            never sent.
        max_listen_streams: how many modern ``subscriptions/listen`` streams may be
            open at once, over all clients; one more is refused with -32603. They hold
            no worker; over HTTP each holds a WSGI thread (docs/server.md "Eras").
        supported_versions: the versions to speak, by default all: legacy ones (an
            ``initialize`` offering one gets it, any other offer the newest; over HTTP
            another ``MCP-Protocol-Version`` header is refused with 400) and
            2026-07-28 (modern, over stdio and in memory; docs/server.md "Eras").
        cache_ttl_ms, cache_scope: ``ttlMs`` and ``cacheScope`` of modern list, read
            and discover results (0 and ``"private"`` by default, or ``"public"``).
        request_state_key, request_state_ttl: the secret (32 bytes or more) signing the
            ``requestState`` of modern input-required results, the same in every process
            that may continue a request (random per process if None), and how many
            seconds such a state stays valid (an hour by default); docs/server.md "Eras".
        title, description, website_url, icons: more of ``serverInfo``: a display
            name (sent from 2025-06-18), a description, a website and
            :class:`~mcp_sync.types.Icon` objects or dicts in the wire shape (sent from
            2025-11-25). An icon's ``src`` must be an ``https:`` URL or a ``data:image/``
            URI (``ValueError`` otherwise).

    Example::

        server = Server("demo", version="1.0.0")

        @server.tool()
        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b

        server.run_stdio()
    """

    def __init__(self, name: str, version: str = "0.0.0", *, instructions: str | None = None,
                 page_size: int = 100, max_workers: int = 16, idle_thread_timeout: float = 30.0,
                 timeout: float = DEFAULT_TIMEOUT, log_level: types.LoggingLevel = "info",
                 log_rate_limit: float | None = None,
                 tools: bool | None = None, resources: bool | None = None,
                 prompts: bool | None = None, completions: bool | None = None,
                 logging: bool = True, supported_versions: Iterable[str] | None = None,
                 max_listen_streams: int = 16,
                 title: str | None = None, description: str | None = None,
                 website_url: str | None = None, icons: IconsSpec = None,
                 cache_ttl_ms: int = 0, cache_scope: Literal["private", "public"] = "private",
                 request_state_key: bytes | str | None = None, request_state_ttl: float = 3600.0,
                 ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.page_size = page_size
        self.max_workers = max_workers
        if idle_thread_timeout <= 0:
            raise ValueError("idle_thread_timeout must be positive")
        self.idle_thread_timeout = idle_thread_timeout
        self.timeout = timeout
        self.log_level: types.LoggingLevel = check_level(log_level)
        if log_rate_limit is not None and log_rate_limit <= 0:
            raise ValueError("log_rate_limit must be positive")
        self.log_rate_limit = log_rate_limit
        #: The legacy protocol versions this server speaks, oldest first (VERSION-2/3,
        #: DES-4), and the modern ones (DES-1), which are never negotiated by initialize.
        self.supported_versions, self.modern_versions = split_versions(supported_versions)
        self.cache_ttl_ms, self.cache_scope = cache_settings(cache_ttl_ms, cache_scope)
        self._request_state = RequestStateSeal(
            os.urandom(32) if request_state_key is None else request_state_key,
            request_state_ttl)
        # serverInfo beyond name and version (V1125-6); older sessions get less (DES-2).
        self.title = title
        self.description = description
        self.website_url = website_url
        self.icons = make_icons(icons)
        #: The identity modern results carry, and what it was made from (server/_modern).
        self._modern_identity: (
            tuple[types.Implementation, VersionProfile, dict[str, Any]] | None) = None
        self._implementation_made: tuple[tuple[Any, ...], types.Implementation] | None = None
        self._capabilities_made: (
            tuple[dict[str, bool], types.ServerCapabilities] | None) = None
        self._declare: dict[str, bool | None] = {
            "tools": tools, "resources": resources, "prompts": prompts,
            "completions": completions, "logging": logging,
        }
        # What is registered: the connections and their handlers look features up there.
        self._registry = Registry(HANDLERS)
        self._lock = threading.Lock()
        self._connections: set[ServerConnection] = set()
        self._listens = Announcing._make_listen_streams(max_listen_streams)
        self._announcers = []

    # --- tools -----------------------------------------------------------------------------

    @overload
    def tool(self, name: F, /) -> F: ...

    @overload
    def tool(self, name: str | None = None, *, description: str | None = None,
             annotations: types.ToolAnnotations | Mapping[str, Any] | None = None,
             title: str | None = None,
             output_schema: Mapping[str, Any] | bool | None = None,
             meta: Mapping[str, Any] | None = None, icons: IconsSpec = None,
             input_schema: Mapping[str, Any] | None = None, scopes: Sequence[str] = (),
             ) -> Callable[[F], F]: ...

    def tool(self, name: str | F | None = None, *, description: str | None = None,
             annotations: types.ToolAnnotations | Mapping[str, Any] | None = None,
             title: str | None = None,
             output_schema: Mapping[str, Any] | bool | None = None,
             meta: Mapping[str, Any] | None = None, icons: IconsSpec = None,
             input_schema: Mapping[str, Any] | None = None, scopes: Sequence[str] = (),
             ) -> F | Callable[[F], F]:
        """Register the decorated function as a tool and return it unchanged.

        Written ``@server.tool`` or ``@server.tool()``, or with options
        (``@server.tool("name", description=...)``). The input schema comes from the
        type hints, the description from the docstring; see :meth:`add_tool`.

        Raises:
            TypeError: ``name`` is neither a string nor the function itself.
        """
        options: dict[str, Any] = {"description": description, "annotations": annotations,
                                   "title": title, "output_schema": output_schema,
                                   "meta": meta, "icons": icons, "input_schema": input_schema,
                                   "scopes": scopes}
        if callable(name):
            self.add_tool(name, **options)
            return name
        check_decorator_argument("tool", name)

        def register(fn: F) -> F:
            self.add_tool(fn, name=name, **options)
            return fn
        return register

    def add_tool(self, fn: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None,
                 annotations: types.ToolAnnotations | Mapping[str, Any] | None = None,
                 title: str | None = None,
                 output_schema: Mapping[str, Any] | bool | None = None,
                 meta: Mapping[str, Any] | None = None, icons: IconsSpec = None,
                 input_schema: Mapping[str, Any] | None = None,
                 scopes: Sequence[str] = ()) -> None:
        """Register ``fn`` as a tool (replacing any tool of the same name).

        Connected clients are sent ``notifications/tools/list_changed``.

        Args:
            fn: a plain function. Its parameters, with their type hints, become the input
                schema; a parameter annotated :class:`~mcp_sync.Context` receives the
                request's context instead. Arguments are validated and converted before
                the call. What it returns becomes the result's content (see
                ``docs/server.md``); an exception it raises becomes an ``isError`` result.
            name: the tool's name; the function's name by default.
            description: the tool's description; the docstring by default.
            annotations: :class:`~mcp_sync.types.ToolAnnotations`, or a dict in the wire
                shape (``{"readOnlyHint": True}``).
            title: display text for people (2025-06-18); ``name`` stays the identifier.
            output_schema: the JSON Schema (``"type": "object"``) of the tool's structured
                result; by default it comes from the return annotation (an attrs class,
                dataclass, TypedDict or dict is an object, another type is wrapped as
                ``{"result": ...}``); ``False`` declares none. Results are checked
                against it before they are sent (see ``docs/server.md``).
            meta: the tool's ``_meta`` object.
            icons: :class:`~mcp_sync.types.Icon` objects, their wire dicts or ``src``
                strings (2025-11-25); ``src`` must be ``https:`` or a ``data:image`` URI.
            input_schema: a JSON Schema (``"type": "object"``) to publish instead of the
                one the type hints make, exactly as given: ``$defs``, ``if``/``then``,
                ``$schema`` and all (2020-12 unless ``$schema`` names another dialect).
                Arguments are validated against it and passed to ``fn`` as keyword
                arguments holding JSON values, unconverted.
            scopes: OAuth scopes a call needs behind a :class:`~mcp_sync.auth.ResourceServer`
                (without them: 403 ``insufficient_scope``, the tool not called; docs/auth.md).

        Raises:
            TypeError: the function is a coroutine function or has a type hint that
                cannot be turned into a schema; ``output_schema`` or ``input_schema`` is
                not an object schema; ``input_schema`` names an argument ``fn`` does not
                take (without ``**kwargs``) or leaves out one it needs.
            ValueError: an icon's ``src`` is not one clients may fetch; ``input_schema``
                or ``output_schema`` is not a valid JSON Schema or names a dialect that is
                not supported (V1125-3).
        """
        registered = make_tool(fn, name=name, description=description, annotations=annotations,
                               title=title, output_schema=output_schema, meta=meta,
                               icons=icons, input_schema=input_schema)
        check_tool_name(registered.tool.name)
        registered.scopes = frozenset([scopes] if isinstance(scopes, str) else scopes)
        self._registry.add_tool(registered)
        self._broadcast("notifications/tools/list_changed")

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; connected clients are told the list changed.

        Raises:
            KeyError: no tool has that name.
        """
        self._registry.remove_tool(name)
        self._broadcast("notifications/tools/list_changed")

    @property
    def tools(self) -> list[types.Tool]:
        """The tools registered now, in registration order."""
        return self._registry.tools()

    # --- resources -------------------------------------------------------------------------

    def resource(self, uri: str, *, name: str | None = None, description: str | None = None,
                 mime_type: str | None = None, annotations: AnnotationsSpec = None,
                 complete: CompleteSpec | None = None, title: str | None = None,
                 icons: IconsSpec = None, meta: Mapping[str, Any] | None = None,
                 ) -> Callable[[F], F]:
        """Register the decorated function as a resource, or a resource template if
        ``uri`` has ``{variables}``; the function is returned unchanged.

        See :meth:`add_resource` and :meth:`add_resource_template`.

        Example::

            @server.resource("config://app")
            def config() -> dict: ...

            @server.resource("users://{user_id}/profile")
            def profile(user_id: int) -> dict: ...

        Raises:
            TypeError: ``uri`` is not a string: the decorator was written without its
                URI (``@server.resource`` instead of ``@server.resource("config://app")``).
        """
        check_decorator_argument("resource", uri)
        options: dict[str, Any] = {"name": name, "description": description,
                                   "mime_type": mime_type, "annotations": annotations,
                                   "title": title, "icons": icons, "meta": meta}

        def register(fn: F) -> F:
            if is_template(uri):
                self.add_resource_template(fn, uri, complete=complete, **options)
            else:
                if complete is not None:
                    raise ValueError(f"resource {uri!r} has a fixed URI: nothing to complete")
                self.add_resource(fn, uri, **options)
            return fn
        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, *, name: str | None = None,
                     description: str | None = None, mime_type: str | None = None,
                     annotations: AnnotationsSpec = None, title: str | None = None,
                     icons: IconsSpec = None, meta: Mapping[str, Any] | None = None) -> None:
        """Register ``fn`` as the reader of the resource at ``uri`` (replacing any other).

        Connected clients are sent ``notifications/resources/list_changed``.

        Args:
            fn: a plain function taking no arguments, or only a
                :class:`~mcp_sync.Context`. It returns ``str`` (text), ``bytes`` (a
                base64 blob), :class:`~mcp_sync.content.Image`/``Audio``, a dict or list
                (JSON text), or :class:`~mcp_sync.types.TextResourceContents` /
                ``BlobResourceContents`` objects (one or a list). Raise
                :class:`~mcp_sync.errors.ResourceNotFound` when it has nothing to give.
            uri: the resource's URI.
            name: its name; the function's name by default.
            description: its description; the docstring by default.
            mime_type: its MIME type; guessed from the URI's extension by default.
            annotations: :class:`~mcp_sync.types.Annotations` or their wire dict.
            title, icons, meta: display text, icons and ``_meta``, as for :meth:`add_tool`.

        Raises:
            TypeError: ``fn`` is a coroutine function or requires arguments.
            ValueError: ``uri`` is empty, or an icon's ``src`` is not one clients may fetch.
        """
        registered = make_resource(fn, uri, name=name, description=description,
                                   mime_type=mime_type, annotations=annotations,
                                   title=title, icons=icons, meta=meta)
        self._registry.add_resource(uri, registered)
        self._broadcast("notifications/resources/list_changed")

    def add_resource_template(self, fn: Callable[..., Any], uri_template: str, *,
                              name: str | None = None, description: str | None = None,
                              mime_type: str | None = None, annotations: AnnotationsSpec = None,
                              complete: CompleteSpec | None = None, title: str | None = None,
                              icons: IconsSpec = None,
                              meta: Mapping[str, Any] | None = None) -> None:
        """Register ``fn`` as the reader of every URI matching ``uri_template``.

        The template follows RFC 6570 with ``{name}`` (one path segment) and ``{+name}``
        (any text, slashes included). Each variable is passed to the function parameter
        of the same name, converted by its type hint; a URI whose values do not convert
        does not match, so a later template may. Values with a ``..`` segment never
        match. Connected clients are sent ``notifications/resources/list_changed``.

        Args:
            fn: a plain function; returns what :meth:`add_resource` describes.
            uri_template: e.g. ``users://{user_id}/profile`` or ``file:///{+path}``.
            name: the template's name; the function's name by default.
            description: its description; the docstring by default.
            mime_type: the MIME type every matching resource has, if they share one.
            annotations: :class:`~mcp_sync.types.Annotations` or their wire dict.
            complete: completers for the variables: ``{"user_id": fn}`` where
                ``fn(typed_prefix)`` returns suggestions, ``{"lang": ["en", "de"]}`` for
                fixed choices (filtered by prefix), or one ``fn(variable, typed_prefix)``
                for all of them.
            title, icons, meta: display text, icons and ``_meta``, as for :meth:`add_tool`.

        Raises:
            TypeError: the function lacks a parameter for a variable, requires one that
                is not a variable, or is a coroutine function.
            ValueError: the template uses syntax beyond ``{name}`` and ``{+name}``.
        """
        registered = make_template(fn, uri_template, name=name, description=description,
                                   mime_type=mime_type, annotations=annotations,
                                   complete=complete, title=title, icons=icons, meta=meta)
        self._registry.add_template(uri_template, registered)
        self._broadcast("notifications/resources/list_changed")

    def remove_resource(self, uri: str) -> None:
        """Unregister the resource with this URI, or the template with this text.

        Raises:
            KeyError: neither exists.
        """
        self._registry.remove_resource(uri)
        self._broadcast("notifications/resources/list_changed")

    @property
    def resources(self) -> list[types.Resource]:
        """The resources with fixed URIs registered now, in registration order."""
        return self._registry.resources()

    @property
    def resource_templates(self) -> list[types.ResourceTemplate]:
        """The resource templates registered now, in registration order."""
        return self._registry.resource_templates()

    # --- prompts ---------------------------------------------------------------------------

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(self, name: str | None = None, *, description: str | None = None,
               complete: CompleteSpec | None = None, title: str | None = None,
               icons: IconsSpec = None, meta: Mapping[str, Any] | None = None,
               argument_titles: Mapping[str, str] | None = None) -> Callable[[F], F]: ...

    def prompt(self, name: str | F | None = None, *, description: str | None = None,
               complete: CompleteSpec | None = None, title: str | None = None,
               icons: IconsSpec = None, meta: Mapping[str, Any] | None = None,
               argument_titles: Mapping[str, str] | None = None) -> F | Callable[[F], F]:
        """Register the decorated function as a prompt and return it unchanged.

        Written ``@server.prompt`` or ``@server.prompt()``, or with options; see
        :meth:`add_prompt`.

        Raises:
            TypeError: ``name`` is neither a string nor the function itself.
        """
        options: dict[str, Any] = {"description": description, "complete": complete,
                                   "title": title, "icons": icons, "meta": meta,
                                   "argument_titles": argument_titles}
        if callable(name):
            self.add_prompt(name, **options)
            return name
        check_decorator_argument("prompt", name)

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, **options)
            return fn
        return register

    def add_prompt(self, fn: Callable[..., Any], *, name: str | None = None,
                   description: str | None = None,
                   complete: CompleteSpec | None = None, title: str | None = None,
                   icons: IconsSpec = None, meta: Mapping[str, Any] | None = None,
                   argument_titles: Mapping[str, str] | None = None) -> None:
        """Register ``fn`` as a prompt (replacing any prompt of the same name).

        Connected clients are sent ``notifications/prompts/list_changed``.

        Args:
            fn: a plain function whose parameters are the prompt's arguments: required
                without a default, described by the docstring's ``Args:`` section or
                ``Annotated[str, "..."]``. Clients send strings; a parameter typed
                ``int``, ``float``, ``bool`` (or a list or object, as JSON text) gets
                the converted value. It returns a string (one user message), a
                ``(role, content)`` tuple, a :class:`~mcp_sync.types.PromptMessage`,
                content (an :class:`~mcp_sync.content.Image`...), a list of those, or a
                whole :class:`~mcp_sync.types.GetPromptResult`.
            name: the prompt's name; the function's name by default.
            description: its description; the docstring by default.
            complete: completers for the arguments, as for
                :meth:`add_resource_template`.
            title, icons, meta: display text, icons and ``_meta``, as for :meth:`add_tool`.
            argument_titles: display text of arguments, by name: ``{"code": "Source"}``.

        Raises:
            TypeError: ``fn`` is a coroutine function or has an unsupported hint.
            ValueError: ``complete`` or ``argument_titles`` names an argument the
                function does not have, or an icon's ``src`` is not one clients may fetch.
        """
        registered = make_prompt(fn, name=name, description=description, complete=complete,
                                 title=title, icons=icons, meta=meta,
                                 argument_titles=argument_titles)
        self._registry.add_prompt(registered)
        self._broadcast("notifications/prompts/list_changed")

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt; connected clients are told the list changed.

        Raises:
            KeyError: no prompt has that name.
        """
        self._registry.remove_prompt(name)
        self._broadcast("notifications/prompts/list_changed")

    @property
    def prompts(self) -> list[types.Prompt]:
        """The prompts registered now, in registration order."""
        return self._registry.prompts()

    # --- logging and roots -----------------------------------------------------------------

    def on_roots_changed(self, fn: RootsCallback) -> RootsCallback:
        """Register ``fn(connection)`` to run when a client says its roots changed.

        It runs on the connection's notification thread, so it may call
        ``connection.list_roots()`` (ROOTS-7), but while it runs that client's later
        notifications wait. Use as a decorator (``@server.on_roots_changed``).
        """
        self._registry.add_roots_callback(fn)
        return fn

    def add_call_hook(self, hook: CallHook) -> CallHook:
        """Run ``hook`` around every request a handler serves, on that handler's thread.

        ``hook(ctx)`` returns a context manager (a ``@contextlib.contextmanager``
        function, say) entered before each tool call, resource read, prompt, completion
        or list and exited after it, whatever happened; ``initialize`` and ``ping`` need
        no handler and get no hook. Hooks nest, the first added outermost. One that
        raises fails that request with -32603, its traceback logged; the connection goes
        on. Returns ``hook``, so it works as a decorator. See docs/server.md, and
        :func:`mcp_sync.django.close_old_connections` for Django's database.
        """
        self._registry.add_call_hook(hook)
        return hook

    # --- connections -----------------------------------------------------------------------

    def capabilities(self) -> types.ServerCapabilities:
        """What a client connecting now is told in ``initialize`` (see the module docs)."""
        present = self._registry.present()
        declared = {feature: present.get(feature, False) if flag is None else flag
                    for feature, flag in self._declare.items()}
        # Made again only when what is declared changes: a stateless HTTP server makes a
        # connection, and so asks this, for every request.
        made = self._capabilities_made
        if made is not None and made[0] == declared:
            return made[1]
        capabilities = types.ServerCapabilities(
            tools=types.ToolsCapability(list_changed=True) if declared["tools"] else None,
            resources=(types.ResourcesCapability(subscribe=True, list_changed=True)
                       if declared["resources"] else None),
            prompts=types.PromptsCapability(list_changed=True) if declared["prompts"] else None,
            logging={} if declared["logging"] else None,
            completions={} if declared["completions"] else None,
        )
        self._capabilities_made = (declared, capabilities)
        return capabilities

    def _implementation(self) -> types.Implementation:
        """The server's identity as ``initialize`` answers it, made again only when it
        changes (a stateless HTTP server makes a connection for every request)."""
        identity = (self.name, self.version, self.title, self.description,
                    self.website_url, self.icons)
        made = self._implementation_made
        if made is not None and made[0] == identity:
            return made[1]
        info = types.Implementation(
            name=self.name, version=self.version, title=self.title,
            description=self.description, website_url=self.website_url, icons=self.icons)
        self._implementation_made = (identity, info)
        return info

    def connect(self, transport: Transport, *,
                assume_version: str | None = None) -> ServerConnection:
        """Serve one client over ``transport`` on background threads, starting now.

        Args:
            transport: the connection to the client.
            assume_version: serve at once, as if the client had initialized with this
                protocol version; for stateless HTTP, where no handshake precedes a POST.
        """
        return self._connect(transport, assume_version=assume_version)

    def _connect(self, transport: Transport, *, assume_version: str | None = None,
                 workers: WorkerPool | None = None) -> ServerConnection:
        # ``workers``: a pool the HTTP application shares among the connections it makes
        # for one request each, which would otherwise each start a thread of their own.
        connection = ServerConnection(self, transport, registry=self._registry,
                                      on_close=self._forget, workers=workers)
        if assume_version is not None:
            connection.session.assume_initialized(assume_version)
            connection._operating.set()
        with self._lock:
            self._connections.add(connection)
        connection._start()
        return connection

    def _forget(self, connection: ServerConnection) -> None:
        with self._lock:
            self._connections.discard(connection)

    @property
    def served_methods(self) -> frozenset[str]:
        """Every request method some connection of this server may answer."""
        return self._registry.methods

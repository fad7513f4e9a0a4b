"""Test helpers shared by the test files: a raw JSON-RPC peer on one end of an in-memory
transport, fake servers that answer from a script, and closing what a fixture made."""

from __future__ import annotations

import ast
import importlib.util
import json
import queue
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypedDict, TypeVar

from mcp_sync.errors import RpcError
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.memory import MemoryTransport, memory_pair

if TYPE_CHECKING:
    from mcp_sync import Server

INITIALIZE = {
    "jsonrpc": "2.0", "id": "init", "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


#: Client options for tests of the legacy era's session features (server-to-client
#: requests from tools, logging/setLevel, resources/subscribe, list changes sent on the
#: session, the initialize result): the client speaks only the legacy versions, as a
#: 2025-11-25 client does, so a dual-era server serves it a legacy session.
LEGACY_ERA: dict[str, Any] = {"supported_versions": KNOWN_VERSIONS}


class RawPeer:
    """Writes frames verbatim to the other end and reads back what it answers.

    Playing a legacy server to a client, it answers the client's ``server/discover``
    probe itself with -32601, as a legacy server does (COEX-1), so that scripts see
    ``initialize`` first; set ``legacy_discover`` False to see the probe.
    """

    def __init__(self) -> None:
        self.end, self.other = memory_pair()
        self.legacy_discover = True

    def send(self, message: Any) -> None:
        """Send a JSON value, or bytes/str exactly as given."""
        if isinstance(message, str):
            message = message.encode()
        if not isinstance(message, bytes):
            message = json.dumps(message).encode()
        self.end._outbox.put(message)

    def receive(self, timeout: float = 5.0) -> Any:
        """The next frame the other end wrote, parsed; raises queue.Empty on timeout."""
        while True:
            frame = self.end._inbox.get(timeout=timeout)
            if frame == b"":
                raise EOFError("the other end closed")
            message = json.loads(frame)
            if not (self.legacy_discover and isinstance(message, dict) and "id" in message
                    and message.get("method") == "server/discover"):
                return message
            self.send({"jsonrpc": "2.0", "id": message["id"],
                       "error": {"code": -32601, "message": "Method not found"}})

    def nothing_more(self, timeout: float = 0.2) -> bool:
        """True if no frame arrives within ``timeout`` (for messages that get no answer)."""
        try:
            frame = self.end._inbox.get(timeout=timeout)
        except queue.Empty:
            return True
        self.end._inbox.put(frame)
        return False

    def call(self, message: dict[str, Any], timeout: float = 5.0) -> Any:
        self.send(message)
        return self.receive(timeout)

    def handshake(self) -> Any:
        result = self.call(INITIALIZE)
        self.send(INITIALIZED)
        return result

    def close(self) -> None:
        self.end.close()

    @property
    def transport(self) -> MemoryTransport:
        """The end to hand to a Server or Client."""
        return self.other


class RawChild:
    """A server run with Popen by hand, spoken to line by line: the wire as it is."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        self._lines: list[bytes] = []
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, name="test:raw-child:stdout")
        self._reader.start()

    def _read(self) -> None:
        for line in self.stdout:
            with self._arrived:
                self._lines.append(line)
                self._arrived.notify_all()

    def send(self, data: bytes | dict[str, Any] | list[Any]) -> None:
        if not isinstance(data, bytes):
            data = json.dumps(data).encode() + b"\n"
        self.stdin.write(data)
        self.stdin.flush()

    def line(self, timeout: float = 10.0) -> bytes:
        """The next line the server wrote, with its terminator."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: self._lines, timeout):
                raise TimeoutError("the server wrote nothing")
            return self._lines.pop(0)

    def receive(self, timeout: float = 10.0) -> Any:
        return json.loads(self.line(timeout))

    def handshake(self) -> Any:
        self.send(INITIALIZE)
        result = self.receive()
        self.send(INITIALIZED)
        return result

    def close_stdin_and_wait(self, timeout: float = 10.0) -> int:
        self.stdin.close()
        code = self.process.wait(timeout)
        self._reader.join(timeout)
        self.stdout.close()
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        if not self.stdin.closed:
            self.stdin.close()
        self.process.wait(10)
        self._reader.join(10)
        self.stdout.close()


class Gates:
    """Named pairs of events: a handler sets ``started(name)``, waits for ``release(name)``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: dict[str, threading.Event] = {}
        self._release: dict[str, threading.Event] = {}

    def started(self, name: str) -> threading.Event:
        with self._lock:
            return self._started.setdefault(name, threading.Event())

    def release(self, name: str) -> threading.Event:
        with self._lock:
            return self._release.setdefault(name, threading.Event())

    def release_all(self) -> None:
        with self._lock:
            events = list(self._release.values())
        for event in events:
            event.set()


class Callers:
    """``count`` threads each calling ``call(n)``; what each returned or raised is kept."""

    def __init__(self, count: int, call: Callable[[int], Any]) -> None:
        self.outcomes: list[Any] = []
        self._lock = threading.Lock()
        self._call = call
        self.threads = [threading.Thread(target=self._run, args=(n,), name=f"test:caller-{n}")
                        for n in range(count)]
        for thread in self.threads:
            thread.start()

    def _run(self, n: int) -> None:
        try:
            outcome = self._call(n)
        except BaseException as exc:
            outcome = exc
        with self._lock:
            self.outcomes.append(outcome)

    def join(self, timeout: float) -> bool:
        """Wait for every caller; True if none is left running."""
        for thread in self.threads:
            thread.join(timeout)
        return not any(thread.is_alive() for thread in self.threads)


class _Closable(Protocol):
    def close(self) -> None: ...


_Params = ParamSpec("_Params")
_Made = TypeVar("_Made", bound=_Closable)


def closing_all(make: Callable[_Params, _Made]) -> Iterator[Callable[_Params, _Made]]:
    """For a fixture, ``yield from closing_all(Thing)``: the test gets ``make``, and
    everything it made is closed, in order, when the test ends."""
    made: list[_Made] = []

    def start(*args: _Params.args, **kwargs: _Params.kwargs) -> _Made:
        item = make(*args, **kwargs)
        made.append(item)
        return item

    yield start
    for item in made:
        item.close()


def initialize_result(version: str = "2025-03-26", **extra: Any) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}, **extra}


def answer_initialize(peer: RawPeer, result: dict[str, Any]) -> dict[str, Any]:
    request = peer.receive()
    assert request["method"] == "initialize"
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
    return request  # type: ignore[no-any-return]


Answer = Callable[[dict[str, Any]], Any]


class ScriptedServer:
    """A fake server that answers each request with ``answers[method](params)``.

    An answer function returns the result dict or raises :class:`RpcError` to answer
    with that error; a method without one gets -32601. Everything the client sends after
    ``initialize`` is recorded in ``received``, notifications but the handshake's also
    in the ``notifications`` queue; :meth:`request` sends the client a
    request and waits for its answer. The thread ends when the client disconnects.
    """

    def __init__(self, capabilities: dict[str, Any] | None = None,
                 answers: dict[str, Answer] | None = None,
                 version: str = "2025-03-26") -> None:
        self.peer = RawPeer()
        self.capabilities = {} if capabilities is None else capabilities
        self.answers = dict(answers or {})
        self.version = version
        self.initialize: dict[str, Any] = {}
        # Set once ``initialize`` holds the request: the client may have its answer (and
        # even be closed) before this thread gets round to keeping it.
        self.initialize_kept = threading.Event()
        self.received: list[dict[str, Any]] = []
        self.notifications: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self._responses: dict[Any, queue.SimpleQueue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._serial = 0
        self.thread = threading.Thread(target=self._run, name="scripted-server")
        self.thread.start()

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The requests received so far, of ``method`` if given."""
        with self._lock:
            return [m for m in self.received if "id" in m
                    and (method is None or m["method"] == method)]

    def _run(self) -> None:
        try:
            self.initialize = answer_initialize(self.peer, initialize_result(
                self.version, capabilities=self.capabilities))
            self.initialize_kept.set()
            while True:
                try:
                    frame = self.peer.receive(timeout=30)
                except EOFError:
                    return
                for message in frame if isinstance(frame, list) else [frame]:
                    self._handle(message)
        except BaseException as exc:  # reported by close()
            self.error = exc

    def _handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            with self._lock:
                waiting = self._responses.get(message.get("id"))
            if waiting is not None:
                waiting.put(message)
            return
        with self._lock:
            self.received.append(message)
        if "id" not in message:
            if message["method"] != "notifications/initialized":  # part of the handshake
                self.notifications.put(message)
            return
        answer = self.answers.get(message["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if answer is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            try:
                reply["result"] = answer(message.get("params") or {})
            except RpcError as exc:
                reply["error"] = exc.to_wire()
        self.peer.send(reply)

    def send(self, message: dict[str, Any]) -> None:
        """Send the client any frame."""
        self.peer.send(message)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.peer.send(message)

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = 5.0) -> dict[str, Any]:
        """Send the client a request and return its whole answer (result or error)."""
        with self._lock:
            self._serial += 1
            request_id = f"s-{self._serial}"
            answers: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
            self._responses[request_id] = answers
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.peer.send(message)
        return answers.get(timeout=timeout)

    def close(self) -> None:
        self.peer.close()
        self.thread.join(10)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error


def scripted_servers() -> Iterator[Callable[..., ScriptedServer]]:
    """Starts :class:`ScriptedServer` instances and stops them after the test; use it
    as ``yield from scripted_servers()`` in a fixture."""
    yield from closing_all(ScriptedServer)


# -- the import graph of mcp_sync, read from the source (STYLE habit 1, the layout) --

OUTSIDE = "<outside mcp_sync>"
DYNAMIC = ("__import__", "importlib.import_module")


def package_dir() -> Path:
    """The folder of the mcp_sync package."""
    import mcp_sync
    return Path(mcp_sync.__file__).resolve().parent


def source_of(name: str) -> Path | None:
    """The file of an mcp_sync module given by its dotted name, if it is one."""
    parts = name.split(".")
    if parts[0] != "mcp_sync" or len(parts) == 1:
        return None  # the package itself runs first whatever is imported; not followed
    root = package_dir()
    module = root.joinpath(*parts[1:-1]) / f"{parts[-1]}.py"
    package = root.joinpath(*parts[1:]) / "__init__.py"
    return module if module.is_file() else package if package.is_file() else None


def module_names(folder: str = "") -> dict[str, Path]:
    """Every module of mcp_sync under ``folder`` (a path inside the package), by name."""
    root = package_dir()
    found: dict[str, Path] = {}
    for path in sorted((root / folder).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(["mcp_sync", *parts])] = path
    return found


def _under_type_checking(node: ast.If) -> bool:
    test = node.test
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports_in(source: str, module: str = "mcp_sync._module", *, is_package: bool = False,
               type_checking: bool = True) -> list[tuple[int, str]]:
    """(line, absolute dotted name) for every import in ``source``, the text of ``module``.

    Imports inside functions count. ``from package import name`` yields the package, or,
    where every name is a module of mcp_sync, those modules alone. With ``type_checking`` false,
    imports under ``if TYPE_CHECKING:`` are left out. A relative import that climbs out of
    mcp_sync yields OUTSIDE; ``__import__`` and ``importlib.import_module`` yield DYNAMIC.
    """
    here = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    skipped: set[int] = set()
    tree = ast.parse(source)
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _under_type_checking(node):
                skipped |= {id(inner) for child in node.body for inner in ast.walk(child)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level > len(here):
                    found.append((node.lineno, OUTSIDE))
                    continue
                parts = here[:len(here) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # "from . import types" names a module, not an attribute: it counts as an
            # import of that module alone.
            modules = [f"{base}.{alias.name}" for alias in node.names
                       if source_of(f"{base}.{alias.name}") is not None]
            if len(modules) < len(node.names):
                found.append((node.lineno, base))
            found += [(node.lineno, name) for name in modules]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__"):
            found.append((node.lineno, DYNAMIC[0]))
        elif isinstance(node, ast.Attribute) and node.attr == "import_module":
            found.append((node.lineno, DYNAMIC[1]))
    return found


def imports_of(name: str, *, type_checking: bool = True) -> list[tuple[int, str]]:
    """The imports of the mcp_sync module ``name``, as :func:`imports_in` finds them."""
    path = package_dir() / "__init__.py" if name == "mcp_sync" else source_of(name)
    assert path is not None, name
    return imports_in(path.read_text(encoding="utf-8"), name,
                      is_package=path.name == "__init__.py", type_checking=type_checking)


class Totals(TypedDict):
    """The structured result of :func:`add_arithmetic_tools`'s ``totals``."""

    sum: int
    product: int


def add_arithmetic_tools(server: Server) -> None:
    """Two tools with structured output: ``totals`` returns an object (a TypedDict),
    ``add`` a wrapped integer (``{"result": n}``)."""

    @server.tool()
    def totals(a: int, b: int) -> Totals:
        return {"sum": a + b, "product": a * b}

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """The Python file at ``path`` loaded as a module, as a user running it would have it
    (the examples folder is no package)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- a fake server run by a script on a thread -------------------------------------------

Script = Callable[[RawPeer], None]


class FakeServer:
    """Runs ``script`` against the client's frames on a thread joined at exit."""

    def __init__(self, script: Script) -> None:
        self.peer = RawPeer()
        self.received: list[Any] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(script,), name="fake-server")
        self.thread.start()

    def _run(self, script: Script) -> None:
        try:
            script(self.peer)
        except BaseException as exc:  # reported by the test through .error
            self.error = exc

    def finish(self) -> None:
        self.thread.join(10)
        assert not self.thread.is_alive()
        self.peer.close()
        if self.error is not None:
            raise self.error


def wait_until_listening(port: int, process: subprocess.Popen[Any], bound: float,
                         what: str) -> None:
    """Poll 127.0.0.1:``port`` until it accepts connections; each pause is a wait on
    ``process``, so a child that exits at start is noticed at once.

    Raises:
        AssertionError: ``process`` exited, or nothing listened within ``bound`` seconds.
    """
    for _ in range(int(bound / 0.05)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except ConnectionRefusedError:
            pass
        try:
            process.wait(0.05)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"{what} exited with {process.returncode} before listening")
    raise AssertionError(f"{what} did not listen within {bound}s")

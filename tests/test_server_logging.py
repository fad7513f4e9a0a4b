"""Logging from the server to its clients: levels, per-connection filters, the Handler."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Context, Server
from mcp_sync.server import McpLogHandler
from mcp_sync.server._logging import level_for_record
from mcp_sync.testing import open_client
from tests.helpers import INITIALIZED, LEGACY_ERA
from tests.server_support import (
    Notifications,
    check,
    error,
    raw_session,
    recorded_client,
    request,
    result,
)

pytestmark = pytest.mark.timeout(30)


def make_server(**options: Any) -> Server:
    server = Server("logs", **options)

    @server.tool()
    def chatty(ctx: Context) -> str:
        sent = [ctx.debug("d"), ctx.info("i"), ctx.log("notice", {"n": 1}, logger="db"),
                ctx.warning("w"), ctx.error(["e"])]
        return ",".join(str(flag) for flag in sent)

    return server


def messages(peer: Any) -> Iterator[dict[str, Any]]:
    """Frames up to the next response, yielding each notifications/message params."""
    while True:
        frame = peer.receive()
        if "method" not in frame:
            return
        assert frame["method"] == "notifications/message"
        yield frame["params"]


def test_logging_declared_and_default_level_logging_1_5() -> None:
    """LOGGING-1/5: logging is declared; before setLevel, info and above are sent."""
    with raw_session(make_server()) as (peer, _):
        peer.send(request("tools/call", {"name": "chatty"}, "c1"))
        sent = list(messages(peer))
        assert [params["level"] for params in sent] == ["info", "notice", "warning", "error"]
        assert sent[1] == {"level": "notice", "data": {"n": 1}, "logger": "db"}
        assert sent[3]["data"] == ["e"]


def test_set_level_filters_logging_3_4() -> None:
    """LOGGING-3/4: after setLevel error only error and more severe messages arrive."""
    with raw_session(make_server()) as (peer, connection):
        assert result(peer, request("logging/setLevel", {"level": "error"}),
                      "EmptyResult") == {}
        assert connection.log_level == "error"
        peer.send(request("tools/call", {"name": "chatty"}, "c1"))
        assert [params["level"] for params in messages(peer)] == ["error"]
        assert result(peer, request("logging/setLevel", {"level": "debug"}), "EmptyResult") == {}
        peer.send(request("tools/call", {"name": "chatty"}, "c2"))
        assert len(list(messages(peer))) == 5


def test_invalid_level_is_invalid_params_logging_6(wire: Any) -> None:
    """LOGGING-6: an unknown level is -32602 and leaves the level as it was."""
    with wire.allow_invalid(), raw_session(make_server()) as (peer, connection):
        for bad in ("verbose", 3, None):
            found = error(peer, request("logging/setLevel", {"level": bad}))
            assert found["code"] == -32602
        assert connection.log_level == "info"


def test_server_log_broadcasts_per_connection_level_logging_3() -> None:
    """LOGGING-3: server.log reaches every client whose own level lets it through."""
    server = make_server()
    quiet, loud = Notifications(), Notifications()
    with open_client(server, on_notification=quiet, **LEGACY_ERA) as first, \
            open_client(server, on_notification=loud, **LEGACY_ERA) as second:
        first.send_request("logging/setLevel", {"level": "error"})
        second.send_request("logging/setLevel", {"level": "debug"})
        assert server.log("warning", "disk 91% full", logger="disk") == 1
        assert server.log("critical", {"disk": "gone"}) == 2
        assert loud.next() == ("notifications/message", {
            "level": "warning", "data": "disk 91% full", "logger": "disk"})
        assert loud.next() == ("notifications/message",
                               {"level": "critical", "data": {"disk": "gone"}})
        assert quiet.next() == ("notifications/message",
                                {"level": "critical", "data": {"disk": "gone"}})
        with pytest.raises(ValueError, match="unknown logging level"):
            server.log("loud", "x")  # type: ignore[arg-type]


def test_log_data_that_is_not_json_is_sent_as_text_logging_4() -> None:
    """LOGGING-4: data may be any JSON value; other objects go as their JSON or str()."""
    server = make_server()
    notes = Notifications()
    with open_client(server, on_notification=notes, **LEGACY_ERA):
        server.log("error", {"when": object, "values": {1, 2}})
        _, params = notes.next()
    assert params["data"]["when"] == str(object)
    assert params["data"]["values"] in ("{1, 2}", "[1, 2]")


def test_ctx_log_is_related_to_its_request() -> None:
    """HTTP-13 support: ctx.log names the request it belongs to, so Streamable HTTP can
    send it on that request's stream."""
    server = make_server()
    with recorded_client(server) as (client, recording, _):
        raw = client.send_request("tools/call", {"name": "chatty"})
        check(raw, "CallToolResult")
        assert raw["content"][0]["text"] == "False,True,True,True,True"
        related = recording.related("notifications/message")
    assert len(related) == 4
    assert len(set(related)) == 1 and related[0] is not None


def test_logging_disabled_is_undeclared_caps_3() -> None:
    """CAPS-3/6: with logging=False the capability is absent and nothing is sent."""
    server = make_server(logging=False)
    with raw_session(server) as (peer, connection):
        assert connection.capabilities.logging is None
        peer.send(request("tools/call", {"name": "chatty"}, "c1"))
        answer = peer.receive()
        assert answer["result"]["content"][0]["text"] == "False,False,False,False,False"
        assert server.log("emergency", "x") == 0


def test_log_before_initialized_is_sent_list_changed_waits_ambig_7() -> None:
    """LIFECYCLE-6, AMBIG-7: between the initialize answer and initialized, log messages
    go out at once while list_changed waits for initialized."""
    server = make_server()
    with raw_session(server, initialized=False) as (peer, _):
        server.add_tool(lambda: "x", name="late")
        assert server.log("error", "early") == 1
        assert peer.receive() == {"jsonrpc": "2.0", "method": "notifications/message",
                                  "params": {"level": "error", "data": "early"}}
        assert peer.nothing_more()
        peer.send(INITIALIZED)
        assert peer.receive()["method"] == "notifications/tools/list_changed"


def test_nothing_is_logged_before_initialize_lifecycle_6() -> None:
    """LIFECYCLE-6: before initialize there is no session to log to."""
    from tests.helpers import RawPeer

    server = make_server()
    peer = RawPeer()
    connection = server.connect(peer.transport)
    try:
        assert server.log("emergency", "too early") == 0
        assert peer.nothing_more()
    finally:
        peer.close()
        connection.close()


# --- the logging.Handler --------------------------------------------------------------------


@pytest.fixture
def app_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("tests.app")
    old_level, old_propagate = logger.level, logger.propagate
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield logger
    finally:
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate


def test_handler_forwards_records_filtered_per_client_logging_3(
        app_logger: logging.Logger) -> None:
    """LOGGING-3/4: Python records reach clients at their MCP level, filtered by each
    client's setLevel and the handler's own level."""
    server = make_server()
    app_logger.addHandler(server.logging_handler(logging.INFO))
    notes = Notifications()
    with open_client(server, on_notification=notes, **LEGACY_ERA) as client:
        client.send_request("logging/setLevel", {"level": "warning"})
        app_logger.debug("not handled")
        app_logger.info("filtered by the client")
        app_logger.warning("careful %s", "now")
        try:
            raise ValueError("boom")
        except ValueError:
            app_logger.exception("it failed")
        assert notes.next() == ("notifications/message", {
            "level": "warning", "data": "careful now", "logger": "tests.app"})
        _, params = notes.next()
        assert params["level"] == "error"
        assert params["data"].startswith("it failed\nTraceback")
        assert notes.empty()


def test_handler_routes_records_from_a_request_to_its_client(
        app_logger: logging.Logger) -> None:
    """LOGGING-4, HTTP-13: a record emitted while serving a request goes to that client
    only, related to the request; the other client gets nothing."""
    server = Server("s")
    handler = McpLogHandler(server)
    app_logger.addHandler(handler)

    @server.tool()
    def work() -> str:
        app_logger.warning("working")
        return "done"

    other = Notifications()
    with recorded_client(server) as (client, recording, _), \
            open_client(server, on_notification=other, **LEGACY_ERA) as bystander:
        assert client.call_tool("work").content[0].text == "done"  # type: ignore[union-attr]
        related = recording.related("notifications/message")
        assert len(related) == 1 and related[0] is not None
        app_logger.warning("outside any request")
        assert other.next() == ("notifications/message", {
            "level": "warning", "data": "outside any request", "logger": "tests.app"})
        assert other.empty()
        assert len(recording.related("notifications/message")) == 2
        bystander.ping()


def test_handler_never_forwards_mcp_sync_logs_or_recurses() -> None:
    """LOGGING-4/8: the handler skips mcp_sync's own records and anything logged while
    forwarding."""
    server = make_server()
    root = logging.getLogger()
    handler = server.logging_handler()
    seen_during_emit: list[str] = []

    class Loud(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen_during_emit.append(record.name)

    ours = logging.getLogger("mcp_sync")
    old_level = ours.level
    ours.setLevel(logging.DEBUG)
    loud = Loud()
    root.addHandler(handler)
    root.addHandler(loud)
    notes = Notifications()
    try:
        with open_client(server, on_notification=notes, **LEGACY_ERA) as client:
            client.send_request("logging/setLevel", {"level": "debug"})
            logging.getLogger("mcp_sync.server").warning("internal")
            logging.getLogger("tests.other").warning("from the app")
            assert notes.next() == ("notifications/message", {
                "level": "warning", "data": "from the app", "logger": "tests.other"})
            client.ping()
            assert notes.empty()
    finally:
        root.removeHandler(handler)
        root.removeHandler(loud)
        ours.setLevel(old_level)
    assert "mcp_sync.server" in seen_during_emit  # the record existed; it was not forwarded


def test_python_levels_map_to_mcp_levels_logging_2() -> None:
    """LOGGING-2: Python's levels map onto the RFC 5424 names in order."""
    assert [level_for_record(number) for number in (5, 10, 20, 25, 30, 40, 50, 60, 70)] == [
        "debug", "debug", "info", "notice", "warning", "error", "critical", "alert",
        "emergency"]


def test_handler_works_from_other_threads(app_logger: logging.Logger) -> None:
    """LOGGING-4: records from any thread are forwarded (the handler is thread-safe)."""
    server = make_server()
    app_logger.addHandler(server.logging_handler())
    notes = Notifications()
    with open_client(server, on_notification=notes, **LEGACY_ERA):
        threads = [threading.Thread(target=app_logger.error, args=(f"t{index}",))
                   for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(5)
        received = sorted(notes.next()[1]["data"] for _ in range(4))
    assert received == ["t0", "t1", "t2", "t3"]


def test_log_rate_limit_drops_the_excess_logging_8() -> None:
    """LOGGING-8: with log_rate_limit, a burst beyond the limit is dropped per client."""
    server = make_server(log_rate_limit=2)
    notes = Notifications()
    with open_client(server, on_notification=notes, **LEGACY_ERA) as client:
        sent = sum(server.log("error", f"m{index}") for index in range(50))
        assert 2 <= sent < 50
        server.add_tool(lambda: "x", name="marker")  # arrives after every log message
        received = []
        while True:
            method, params = notes.next()
            if method == "notifications/tools/list_changed":
                break
            received.append(params["data"])
        assert len(received) == sent
        assert received[:2] == ["m0", "m1"]
        client.ping()
    with pytest.raises(ValueError):
        Server("s", log_rate_limit=0)

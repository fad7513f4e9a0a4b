"""Every benchmark case: which client talks to which server, over what.

A case's name is ``client/server:transport[:http server]`` (``raw-*`` baselines have one
name for both ends); ``run.py --only`` matches a regular expression against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HTTP_MODES = ("sse", "json")
#: The SDK client's handshake: "legacy" is the initialize exchange every server here
#: speaks; "auto" first probes ``server/discover`` (an extra round trip on our server).
SDK_MODE = "legacy"
#: "embedded" is ``Server.run_http`` (waitress, as mcp_sync sizes it); the others serve
#: ``Server.wsgi_app()`` as a deployment would.
WSGI_SERVERS = ("embedded", "gunicorn", "waitress")
#: The servers the raw HTTP baseline runs under (the embedded row is compared with waitress).
RAW_WSGI_SERVERS = ("gunicorn", "waitress")


@dataclass(frozen=True)
class Case:
    client: str  # ours, sdk, raw_pipe, raw_threads, raw_http
    server: str  # ours, sdk, raw_pipe, raw_http
    transport: str  # stdio or http
    mode: str | None = None  # sse or json, for MCP over HTTP
    wsgi: str | None = None  # embedded, gunicorn, waitress; uvicorn for the SDK

    @property
    def name(self) -> str:
        if self.client.startswith("raw"):
            head = self.client.replace("_", "-")
        else:
            head = f"{self.client}/{self.server}"
        transport = self.transport if self.mode is None else f"http-{self.mode}"
        return ":".join(part for part in (head, transport, self.wsgi) if part)

    def spec(self) -> dict[str, Any]:
        return {"client": self.client, "server": self.server, "transport": self.transport,
                "mode": self.mode, "wsgi": self.wsgi}


def all_cases() -> list[Case]:
    cases = [
        Case("ours", "ours", "stdio"),
        Case("sdk", "sdk", "stdio"),
        Case("sdk", "ours", "stdio"),
        Case("ours", "sdk", "stdio"),
        Case("raw_pipe", "raw_pipe", "stdio"),
        Case("raw_threads", "raw_pipe", "stdio"),
    ]
    for mode in HTTP_MODES:
        cases += [Case("ours", "ours", "http", mode, wsgi) for wsgi in WSGI_SERVERS]
        cases += [
            Case("sdk", "sdk", "http", mode, "uvicorn"),
            Case("sdk", "ours", "http", mode, "embedded"),
            Case("ours", "sdk", "http", mode, "uvicorn"),
        ]
    cases += [Case("raw_http", "raw_http", "http", None, wsgi) for wsgi in RAW_WSGI_SERVERS]
    return cases

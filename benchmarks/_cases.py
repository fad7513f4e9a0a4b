"""Every benchmark case: which client talks to which server, over what.

A case's name is ``client/server:transport[:http server][:modern]`` (``raw-*`` baselines
have one name for both ends); ``run.py --only`` matches a regular expression against it.
A case runs in the legacy era (``initialize``, 2025-11-25) unless its name ends in
``:modern`` (2026-07-28: ``server/discover``, then version and capabilities on every
request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HTTP_MODES = ("sse", "json")
#: The SDK client's ``mode`` in each era: "legacy" is the initialize exchange; "auto" probes
#: ``server/discover`` and stays modern when the server answers it, as our client does by
#: default.
SDK_MODES = {"legacy": "legacy", "modern": "auto"}
#: Our client's ``supported_versions`` in each era.
OUR_VERSIONS = {"legacy": ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"),
                "modern": ("2026-07-28",)}
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
    era: str = "legacy"  # or modern, for MCP between ours/ours and sdk/sdk

    @property
    def name(self) -> str:
        if self.client.startswith("raw"):
            head = self.client.replace("_", "-")
        else:
            head = f"{self.client}/{self.server}"
        transport = self.transport if self.mode is None else f"http-{self.mode}"
        era = "modern" if self.era == "modern" else None
        return ":".join(part for part in (head, transport, self.wsgi, era) if part)

    def spec(self) -> dict[str, Any]:
        return {"client": self.client, "server": self.server, "transport": self.transport,
                "mode": self.mode, "wsgi": self.wsgi, "era": self.era}


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
    # The modern era: a modern answer is one JSON body unless the call streams, whatever
    # the server's JSON setting, so one HTTP row per server.
    cases += [
        Case("ours", "ours", "stdio", era="modern"),
        Case("sdk", "sdk", "stdio", era="modern"),
        Case("ours", "ours", "http", "json", "embedded", era="modern"),
        Case("sdk", "sdk", "http", "json", "uvicorn", era="modern"),
    ]
    return cases

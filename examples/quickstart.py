"""Spawn the demo server over stdio, list its tools, call one, print the result."""

import sys
from pathlib import Path

from mcp_sync import Client

SERVER = Path(__file__).with_name("demo_server.py")


def main() -> None:
    with Client.stdio([sys.executable, str(SERVER)]) as client:
        info = client.server_info
        print(f"connected to {info.name} {info.version} (protocol {client.protocol_version})")
        for tool in client.list_tools():
            print(f"  tool {tool.name}: {tool.description}")
        result = client.call_tool("add", {"a": 2, "b": 40})
        print("add(2, 40) =", result.content[0].text)

        def show(progress: float, total: float | None, message: str | None) -> None:
            print(f"  progress {progress}/{total}: {message}")

        result = client.call_tool("countdown", {"steps": 3}, on_progress=show)
        print("countdown:", result.content[0].text)


if __name__ == "__main__":
    main()

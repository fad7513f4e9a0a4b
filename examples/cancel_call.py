"""Cancel a long tool call from another thread, as a "Cancel" button would.

Starts the everything server over stdio, calls its ``long_running`` tool (100 steps of
one second each) without blocking, and cancels the call once the first step is done.
The server is told: the tool sees ``ctx.cancelled`` and stops.
"""

import sys
import threading
from pathlib import Path

from mcp_sync import Client, RequestCancelled

SERVER = Path(__file__).with_name("everything_server.py")


def main() -> None:
    with Client.stdio([sys.executable, str(SERVER)]) as client:
        first_step = threading.Event()
        future = client.call_tool_async(
            "long_running", {"steps": 100, "delay": 1.0}, timeout=300,
            on_progress=lambda progress, total, message: first_step.set())
        first_step.wait(30)

        # The button's handler: cancel() returns at once, from any thread.
        button = threading.Thread(target=future.cancel)
        button.start()
        try:
            print("result:", future.result().content[0].text)
        except RequestCancelled:
            print("cancelled after the first step")
        button.join()
        print("the client is still usable:", client.call_tool("echo", {"message": "yes"})
              .content[0].text)


if __name__ == "__main__":
    main()

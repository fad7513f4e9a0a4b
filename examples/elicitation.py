"""Elicitation end to end: a tool asks the user for a booking, a console client answers.

Run ``python examples/elicitation.py`` and answer the questions (Enter keeps a default,
an empty required answer cancels). The server and the client run in this one process,
connected in memory; over stdio or HTTP the code is the same.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from mcp_sync import Context, ElicitationRequest, ElicitationResult, Server
from mcp_sync.testing import open_client

server = Server("bookings")


@attrs.define
class Booking:
    name: str
    seats: int = 2
    seating: Literal["inside", "terrace"] = "inside"
    vegetarian: bool = False


@server.tool()
def book(ctx: Context) -> str:
    """Book a table, asking the user for the details."""
    answer = ctx.elicit("Who is the booking for?", Booking)
    if not answer.accepted or answer.value is None:
        return f"No booking ({answer.action})."
    booking = answer.value
    menu = " with the vegetarian menu" if booking.vegetarian else ""
    return f"Booked {booking.seats} seats {booking.seating} for {booking.name}{menu}."


def _read(name: str, prop: dict[str, Any], default: Any) -> Any:
    shown = f" [{default}]" if default is not None else ""
    choices = f" ({'/'.join(prop['enum'])})" if "enum" in prop else ""
    typed = input(f"{prop.get('title', name)}{choices}{shown}: ").strip()
    if not typed:
        return default
    if prop.get("type") == "integer":
        return int(typed)
    if prop.get("type") == "boolean":
        return typed.lower() in ("y", "yes", "true", "1")
    return typed


def console_form(request: ElicitationRequest) -> ElicitationResult[Any]:
    """Show which server asks and what for; read each field, defaults pre-filled."""
    server_name = request.server_info.name if request.server_info else "a server"
    print(f"{server_name} asks: {request.message}")
    schema = request.requested_schema or {}
    required = set(schema.get("required", ()))
    values: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        value = _read(name, prop, request.defaults.get(name))
        if value is None and name in required:
            return request.cancel()
        if value is not None:
            values[name] = value
    return request.accept(values)


if __name__ == "__main__":
    with open_client(server, elicitation_handler=console_form) as client:
        print(client.call_tool("book").content[0].text)

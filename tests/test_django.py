"""mcp_sync.django: tools that use Django's ORM leave no database connection behind.

Django keeps one connection per thread and closes stale ones only around its own
requests; tools run on the server's threads, so without the hook each of those threads
keeps a connection (an open SQLite file here, a server connection with PostgreSQL) until
the garbage collector happens to free it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import wait
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Server
from mcp_sync.django import close_old_connections
from mcp_sync.testing import open_client

django = pytest.importorskip("django")

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Django configured here, on an SQLite file with the contenttypes table."""
    from django.conf import settings

    if settings.configured:
        pytest.skip("Django settings were configured elsewhere in this process")
    path = tmp_path_factory.mktemp("django") / "db.sqlite3"
    settings.configure(
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}},
        INSTALLED_APPS=["django.contrib.contenttypes"],
        USE_TZ=True,
    )
    django.setup()
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    connections.close_all()
    yield path
    connections.close_all()


def handles_on(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                count += 1
        except OSError:
            pass  # closed since the listing
    return count


def orm_server() -> Server:
    from django.contrib.contenttypes.models import ContentType

    server = Server("django-orm")
    server.add_call_hook(close_old_connections)

    @server.tool()
    def remember(n: int) -> int:
        """Store one row through the ORM and count them all."""
        ContentType.objects.get_or_create(app_label="mcp", model=f"item{n}")
        return int(ContentType.objects.filter(app_label="mcp").count())

    @server.resource("rows://count")
    def count() -> str:
        return str(ContentType.objects.filter(app_label="mcp").count())

    return server


def test_orm_calls_across_sessions_leave_no_database_handle(database: Path) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("counting open files needs /proc")
    before = handles_on(database)
    server = orm_server()
    answers: list[Any] = []
    for session in range(10):
        with open_client(server) as client:
            # Twenty calls at once per session, so that several worker threads each
            # open a connection of their own.
            futures = [client.call_tool_async("remember", {"n": session * 20 + i})
                       for i in range(20)]
            assert not wait(futures, timeout=30).not_done
            answers.extend(future.result() for future in futures)
            assert client.read_resource("rows://count").contents[0].text == str(
                (session + 1) * 20)
    assert [answer.content[0].text for answer in answers if answer.is_error] == []
    assert handles_on(database) == before


def test_importing_the_integration_does_not_import_django() -> None:
    code = ("import sys, mcp_sync, mcp_sync.django\n"
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'django'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30, check=True)
    assert done.stdout.strip() == "[]"

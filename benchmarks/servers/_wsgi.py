"""Running a WSGI application under gunicorn or waitress, sized the same for every peer."""

from __future__ import annotations

from typing import Any

#: Worker threads of the production WSGI servers: enough for 32 callers, their GET
#: streams and a margin, so the server never queues the benchmark's requests.
WSGI_THREADS = 40


def serve_gunicorn(app: Any, port: int) -> None:
    """Serve ``app`` on 127.0.0.1:port with one gthread worker until killed."""
    from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]

    class _Embedded(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            # One worker: stateful MCP sessions live in one process.
            settings = {"bind": f"127.0.0.1:{port}", "workers": 1, "worker_class": "gthread",
                        "threads": WSGI_THREADS, "timeout": 120, "keepalive": 30,
                        "loglevel": "warning", "accesslog": None}
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return app

    _Embedded().run()


def serve_waitress(app: Any, port: int) -> None:
    """Serve ``app`` on 127.0.0.1:port with waitress until killed."""
    import waitress  # type: ignore[import-untyped]

    waitress.serve(app, host="127.0.0.1", port=port, threads=WSGI_THREADS, _quiet=True)

"""The HTTP client reads proxies, CA bundles and netrc from the environment once per session."""

from __future__ import annotations

import pytest
import requests

from mcp_sync.transports._http_client_io import pin_environment


def test_environment_is_applied_once_and_then_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/bundle.pem")
    session = requests.Session()
    pin_environment(session, "http://mcp.example/mcp")
    assert session.proxies.get("http") == "http://proxy.example:3128"
    assert session.verify == "/etc/ssl/bundle.pem"
    assert session.trust_env is False
    monkeypatch.setenv("HTTP_PROXY", "http://other.example:1")  # later changes: not read
    settings = session.merge_environment_settings("http://mcp.example/mcp", {}, None, None, None)
    assert settings["proxies"].get("http") == "http://proxy.example:3128"


def test_no_proxy_hosts_bypass_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    session = requests.Session()
    pin_environment(session, "http://127.0.0.1:8000/mcp")
    assert "http" not in session.proxies


def test_a_session_that_ignores_the_environment_is_left_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    session = requests.Session()
    session.trust_env = False
    pin_environment(session, "http://mcp.example/mcp")
    assert session.proxies == {}
    assert session.verify is True

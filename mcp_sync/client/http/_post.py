"""The transport's POSTs, sent on the urllib3 pool that requests' adapter keeps for them.

Stands in for ``requests.Session.post`` for the POSTs of a transport made without a
``session_factory`` (and without netrc credentials for its URL). A call is one small
POST to the same URL every time, and requests' work around each one (merging session
and request settings, preparing the URL, headers and cookies, finding the connection
pool again) takes more CPU than the rest of the call; it halved the calls per second a
client makes (docs/benchmarks.md, "Streamable HTTP"). None of that work can change such
a POST, so :class:`PostAdapter` does it once. Everything else stays requests' and
urllib3's: the connection pool (and with it the proxy and TLS settings) is the one this
``HTTPAdapter`` makes for the URL, urllib3 writes the request and reads the answer as
``HTTPAdapter.send`` has it do, the answer becomes a ``requests.Response`` through the
adapter's ``build_response``, and failures become requests' exceptions. Cookies go
through the transport's one jar; a redirect is sent again through requests, which
follows it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.cookies import RequestsCookieJar, get_cookie_header
from urllib3.connectionpool import HTTPConnectionPool

from ._io import SocketRegistry

__all__ = ["PostAdapter"]

Timeout = tuple[float, "float | None"]


class PostAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` for one URL that can also POST to it without a session.

    Mounted on the senders' sessions, it carries their other requests (a resumed
    stream, the old transport's POSTs) as any ``HTTPAdapter`` does, on the same pool of
    ``pool_maxsize`` connections, each of whose sockets ``sockets`` knows.
    """

    def __init__(self, url: str, *, pool_maxsize: int, timeout: Timeout,
                 verify: bool | str, proxies: dict[str, str],
                 sockets: SocketRegistry) -> None:
        super().__init__(pool_connections=1, pool_maxsize=pool_maxsize)
        sockets.instrument_adapter(self, requests.utils.select_proxy(url, proxies))
        self._request = requests.Request("POST", url).prepare()
        self._verify = verify
        self._proxies = proxies
        self._target = self.request_url(self._request, proxies)
        self._timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        self._defaults = dict(requests.utils.default_headers())
        self._lock = threading.Lock()
        self._pool: HTTPConnectionPool | None = None

    def post(self, body: bytes, headers: Mapping[str, str],
             cookies: RequestsCookieJar) -> requests.Response:
        """POST ``body`` with ``headers`` (and requests' default ones), answer unread.

        Raises:
            requests.RequestException: as ``requests.Session.post`` would.
        """
        sent = {**self._defaults, **headers}
        if cookies:
            cookie = get_cookie_header(cookies, self._request)  # type: ignore[no-untyped-call]
            if cookie:
                sent["Cookie"] = cookie
        try:
            try:
                answer = self._urlopen(self._connection_pool(), body, sent)
            except urllib3.exceptions.ClosedPoolError:
                # The pool manager let the pool go (it keeps one per host): take its new one.
                with self._lock:
                    self._pool = None
                answer = self._urlopen(self._connection_pool(), body, sent)
        except urllib3.exceptions.MaxRetryError as exc:
            reason = exc.reason
            if isinstance(reason, urllib3.exceptions.ConnectTimeoutError) and \
                    not isinstance(reason, urllib3.exceptions.NewConnectionError):
                raise requests.ConnectTimeout(exc, request=self._request) from exc
            raise requests.ConnectionError(exc, request=self._request) from exc
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise requests.ReadTimeout(exc, request=self._request) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise requests.ConnectionError(exc, request=self._request) from exc
        response = self.build_response(self._request, answer)
        if response.cookies:
            cookies.update(response.cookies)
        return response

    def close(self) -> None:
        """Close every connection: urllib3's pool manager only forgets its pools."""
        super().close()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _connection_pool(self) -> HTTPConnectionPool:
        with self._lock:
            if self._pool is None:
                pool = self.get_connection_with_tls_context(
                    self._request, self._verify, self._proxies)
                assert isinstance(pool, HTTPConnectionPool)
                self.cert_verify(  # type: ignore[no-untyped-call]
                    pool, self._request.url or "", self._verify, None)
                self._pool = pool
            return self._pool

    def _urlopen(self, pool: HTTPConnectionPool, body: bytes,
                 headers: dict[str, str]) -> urllib3.BaseHTTPResponse:
        return pool.urlopen(
            "POST", self._target, body=body, headers=headers, redirect=False,
            assert_same_host=False, preload_content=False, decode_content=False,
            retries=self.max_retries, timeout=self._timeout)

"""Authlib's OAuth request objects made from werkzeug requests: what
``_authorization_server.py``'s Authlib server reads a request through."""

from __future__ import annotations

from typing import Any

from authlib.oauth2 import rfc6749
from werkzeug.datastructures import Headers, MultiDict
from werkzeug.wrappers import Request

__all__ = ["JsonRequest", "OAuthRequest"]


class _Payload(rfc6749.OAuth2Payload):  # type: ignore[misc]
    def __init__(self, values: MultiDict[str, str]) -> None:
        self._values = values

    @property
    def data(self) -> MultiDict[str, str]:
        return self._values

    @property
    def datalist(self) -> dict[str, list[str]]:
        return {key: self._values.getlist(key) for key in self._values}


class OAuthRequest(rfc6749.OAuth2Request):  # type: ignore[misc]
    def __init__(self, method: str, url: str, headers: Headers,
                 args: MultiDict[str, str], form: MultiDict[str, str]) -> None:
        super().__init__(method, url, headers=headers)
        self._args = args
        self._form = form
        values: MultiDict[str, str] = MultiDict(args)
        values.update(form)
        self.payload = _Payload(values)

    @property
    def args(self) -> MultiDict[str, str]:
        return self._args

    @property
    def form(self) -> MultiDict[str, str]:
        return self._form

    @classmethod
    def of(cls, request: Request) -> OAuthRequest:
        return cls(request.method, request.url, request.headers, request.args, request.form)


class _JsonPayload(rfc6749.JsonPayload):  # type: ignore[misc]
    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def data(self) -> Any:
        return self._data


class JsonRequest(rfc6749.JsonRequest):  # type: ignore[misc]
    def __init__(self, request: Request) -> None:
        super().__init__(request.method, request.url, request.headers)
        self.payload = _JsonPayload(request.get_json(silent=True))

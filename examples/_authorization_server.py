"""A small OAuth 2.1 authorization server for local use and tests, built on Authlib.

It is the authorization server half of ``examples/auth_server.py``: everything it knows
lives in memory and is lost when the process ends, and its only user is the one person
at the keyboard (subject ``local-user``), who approves or denies each authorization on a
consent page, or not at all with ``auto_approve``. Do not put it in front of anything
that matters; a real deployment uses an identity provider (docs/auth.md).

What it speaks:

* RFC 8414 metadata at ``/.well-known/oauth-authorization-server`` (also served as
  ``/.well-known/openid-configuration`` for clients that look there first);
* the authorization code grant with PKCE, ``S256`` only and required of every client
  (OAuth 2.1), exact redirect URI matching, RFC 9207 ``iss`` on every redirect back;
* refresh tokens, rotated on every use (a used one is refused);
* the client credentials grant, for confidential clients that registered for it;
* dynamic client registration (RFC 7591) at ``/register``, and client ID metadata
  documents (an ``https`` URL as ``client_id``, fetched and checked);
* RFC 8707 resource indicators: a token's audience is the resource it was asked for,
  one of the resources this server issues tokens for;
* access tokens are JWTs (RFC 9068) signed with an RSA key made at start, whose public
  half is at ``/jwks.json``, so a resource server checks them without calling back.

No implicit grant, no password grant.
"""

from __future__ import annotations

import html
import json
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from _oauth_http import JsonRequest, OAuthRequest
from _oauth_records import (
    ACCESS_TOKEN_LIFETIME,
    CODE_LIFETIME,
    REFRESH_TOKEN_LIFETIME,
    AuthorizationCode,
    ClientMetadataError,
    InvalidTargetError,
    RefreshToken,
    RegisteredClient,
    SigningKey,
    Store,
    fetch_client_metadata,
    is_allowed_redirect_uri,
)
from authlib.common.urls import add_params_to_uri
from authlib.oauth2 import rfc6749, rfc7591, rfc7636
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.errors import InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc9207 import IssuerParameter
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

__all__ = ["LOCAL_USER", "AuthorizationServerApp", "ClientMetadataError", "fetch_client_metadata"]

#: The subject of every token issued for a person: the one user of a local server.
LOCAL_USER = "local-user"


# -- Authlib's server, for werkzeug requests -------------------------------------------------


class _Server(rfc6749.AuthorizationServer):  # type: ignore[misc]
    """Authlib's authorization server, answering with werkzeug responses."""

    def __init__(self, app: AuthorizationServerApp) -> None:
        super().__init__(scopes_supported=list(app.scopes_supported))
        self.app = app

    def query_client(self, client_id: str) -> RegisteredClient | None:
        return self.app.find_client(client_id)

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        # Access tokens are self-contained JWTs; refresh tokens are stored when issued.
        pass

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def create_oauth2_request(self, request: Any) -> Any:
        if isinstance(request, rfc6749.OAuth2Request):
            return request
        return OAuthRequest.of(request)

    def create_json_request(self, request: Request) -> JsonRequest:
        return JsonRequest(request)

    def handle_response(self, status: int, body: Any, headers: Iterable[tuple[str, str]],
                        ) -> Response:
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        return Response(body, status=status, headers=list(headers))


class _Issuer(IssuerParameter):  # type: ignore[misc]
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


class _S256Only(rfc7636.CodeChallenge):  # type: ignore[misc]
    """PKCE required of every client, confidential or public, with ``S256`` only: a
    request without a challenge, or with ``plain``, is refused (OAuth 2.1, AUTH-9)."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: missing 'code_challenge'")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256")
        super().validate_code_challenge(grant, redirect_uri)

    def validate_code_verifier(self, grant: Any, result: Any) -> None:
        if not grant.request.form.get("code_verifier"):
            raise InvalidRequestError("PKCE is required: missing 'code_verifier'")
        super().validate_code_verifier(grant, result)


class _AuthorizationCodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = [
        "client_secret_basic", "client_secret_post", "none"]

    app: AuthorizationServerApp

    def validate_authorization_request(self) -> str:
        redirect_uri: str = super().validate_authorization_request()
        # The resource is checked before the user is asked: a bad one goes straight back.
        try:
            self.app.resource_of(self.request)
        except InvalidTargetError as error:
            error.redirect_uri = redirect_uri
            raise
        return redirect_uri

    def save_authorization_code(self, code: str, request: Any) -> None:
        data = request.payload.data
        self.app.store.add_code(AuthorizationCode(
            code=code, client_id=request.client.client_id,
            redirect_uri=data.get("redirect_uri") or "", scope=request.scope or "",
            subject=request.user, resource=self.app.resource_of(request),
            code_challenge=data["code_challenge"],
            code_challenge_method=data["code_challenge_method"],
            expires_at=time.time() + CODE_LIFETIME))

    def query_authorization_code(self, code: str, client: RegisteredClient,
                                 ) -> AuthorizationCode | None:
        return self.app.store.take_code(code, client.client_id)

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        pass  # taken out of the store when it was looked up

    def authenticate_user(self, authorization_code: AuthorizationCode) -> str:
        return authorization_code.subject

    def validate_token_request(self) -> None:
        super().validate_token_request()
        code: AuthorizationCode = self.request.authorization_code
        asked = self.request.form.getlist("resource")
        if asked and asked != [code.resource]:
            raise InvalidTargetError("the resource differs from the one authorized")

    def generate_token(self, user: Any = None, scope: str | None = None,
                       grant_type: str | None = None, expires_in: int | None = None,
                       include_refresh_token: bool = True) -> dict[str, Any]:
        code: AuthorizationCode = self.request.authorization_code
        return self.app.issue(self.request.client, subject=user, scope=scope or "",
                              resource=code.resource, refresh=include_refresh_token)


class _RefreshTokenGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = [
        "client_secret_basic", "client_secret_post", "none"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    app: AuthorizationServerApp

    def authenticate_refresh_token(self, refresh_token: str) -> RefreshToken | None:
        return self.app.store.take_refresh_token(refresh_token)

    def authenticate_user(self, refresh_token: RefreshToken) -> str:
        return refresh_token.subject

    def revoke_old_credential(self, refresh_token: RefreshToken) -> None:
        pass  # taken out of the store when it was looked up

    def validate_token_request(self) -> None:
        super().validate_token_request()
        token: RefreshToken = self.request.refresh_token
        asked = self.request.form.getlist("resource")
        if asked and asked != [token.resource]:
            raise InvalidTargetError("the resource differs from the one authorized")

    def generate_token(self, user: Any = None, scope: str | None = None,
                       grant_type: str | None = None, expires_in: int | None = None,
                       include_refresh_token: bool = True) -> dict[str, Any]:
        token: RefreshToken = self.request.refresh_token
        return self.app.issue(self.request.client, subject=user, scope=scope or "",
                              resource=token.resource, refresh=True)


class _ClientCredentialsGrant(grants.ClientCredentialsGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = [
        "client_secret_basic", "client_secret_post"]

    app: AuthorizationServerApp

    def generate_token(self, user: Any = None, scope: str | None = None,
                       grant_type: str | None = None, expires_in: int | None = None,
                       include_refresh_token: bool = True) -> dict[str, Any]:
        client: RegisteredClient = self.request.client
        # A machine client acts for itself; it gets no refresh token (OAuth 2.1 4.2).
        return self.app.issue(client, subject=client.client_id,
                              scope=client.get_allowed_scope(scope),
                              resource=self.app.resource_of(self.request), refresh=False)


class _Registration(rfc7591.ClientRegistrationEndpoint):  # type: ignore[misc]
    """Open dynamic client registration: anyone may register, as MCP clients expect."""

    app: AuthorizationServerApp

    def authenticate_token(self, request: Any) -> bool:
        return True

    def get_server_metadata(self) -> dict[str, Any]:
        return self.app.metadata()

    def extract_client_metadata(self, request: Any) -> dict[str, Any]:
        if not isinstance(request.payload.data, dict):
            raise InvalidRequestError("the body is not a JSON object")
        metadata: dict[str, Any] = super().extract_client_metadata(request)
        grant_types = metadata.setdefault("grant_types", ["authorization_code"])
        metadata.setdefault("response_types", ["code"] if "authorization_code" in grant_types
                            else [])
        redirect_uris = metadata.get("redirect_uris") or []
        if "authorization_code" in grant_types and not redirect_uris:
            raise rfc7591.InvalidRedirectURIError("redirect_uris is required")
        for uri in redirect_uris:
            if not is_allowed_redirect_uri(uri):
                raise rfc7591.InvalidRedirectURIError(
                    f"{uri} is neither https nor loopback http")
        if (metadata["token_endpoint_auth_method"] == "none"
                and "client_credentials" in grant_types):
            raise rfc7591.InvalidClientMetadataError(
                "client_credentials needs a client that authenticates")
        # OpenID Connect's application_type, which MCP clients send (2025-11-25): kept and
        # echoed; Authlib's RFC 7591 claims do not know it.
        application_type = request.payload.data.get("application_type", "web")
        if application_type not in ("web", "native"):
            raise rfc7591.InvalidClientMetadataError(
                "application_type is web or native")
        metadata["application_type"] = application_type
        return metadata

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method") == "none":
            del info["client_secret"], info["client_secret_expires_at"]
        return info

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any],
                    request: Any) -> RegisteredClient:
        client = RegisteredClient(
            client_id=client_info["client_id"],
            client_secret=client_info.get("client_secret"),
            redirect_uris=tuple(client_metadata.get("redirect_uris") or ()),
            grant_types=tuple(client_metadata["grant_types"]),
            response_types=tuple(client_metadata["response_types"]),
            token_endpoint_auth_method=client_metadata["token_endpoint_auth_method"],
            scope=client_metadata.get("scope") or " ".join(self.app.scopes_supported),
            metadata=client_metadata)
        self.app.store.add_client(client)
        return client


def _with_app(cls: type[Any], app: AuthorizationServerApp) -> type[Any]:
    """``cls`` bound to ``app``: Authlib makes a grant per request from its class alone."""
    return type(cls.__name__, (cls,), {"app": app})


# -- the WSGI application --------------------------------------------------------------------


class AuthorizationServerApp:
    """The authorization server as a WSGI application.

    Args:
        issuer: this server's issuer identifier, its origin (``http://127.0.0.1:8000``);
            the endpoints are below it.
        resources: the resources it issues tokens for (canonical URIs, RFC 8707); the
            first is the audience of tokens asked for without a ``resource``.
        scopes_supported: the scopes a client may ask for; a client gets them all when
            it names none.
        auto_approve: grant every valid authorization request without showing the
            consent page, for headless clients and tests.
        fetch_metadata: fetches a client ID metadata document (default
            :func:`fetch_client_metadata`, which reaches only public https URLs).
        access_token_lifetime: seconds an access token is valid.
    """

    def __init__(self, issuer: str, resources: Sequence[str], *,
                 scopes_supported: Sequence[str] = ("mcp",), auto_approve: bool = False,
                 fetch_metadata: Callable[[str], dict[str, Any]] = fetch_client_metadata,
                 access_token_lifetime: int = ACCESS_TOKEN_LIFETIME) -> None:
        if not resources:
            raise ValueError("name at least one resource")
        self.issuer = issuer.rstrip("/")
        self._host = urlsplit(self.issuer).netloc.lower()
        self.resources = tuple(resources)
        self.scopes_supported = tuple(scopes_supported)
        self.auto_approve = auto_approve
        self.access_token_lifetime = access_token_lifetime
        self._fetch_metadata = fetch_metadata
        self.store = Store()
        self.key = SigningKey()
        self.server = _Server(self)
        self.server.register_grant(_with_app(_AuthorizationCodeGrant, self), [_S256Only()])
        self.server.register_grant(_with_app(_RefreshTokenGrant, self))
        self.server.register_grant(_with_app(_ClientCredentialsGrant, self))
        self.server.register_endpoint(_with_app(_Registration, self))
        _Issuer(self.issuer)(self.server)
        self.urls = Map([
            Rule("/.well-known/oauth-authorization-server", endpoint="metadata",
                 methods=["GET"]),
            Rule("/.well-known/openid-configuration", endpoint="metadata", methods=["GET"]),
            Rule("/jwks.json", endpoint="jwks", methods=["GET"]),
            Rule("/authorize", endpoint="authorize", methods=["GET", "POST"]),
            Rule("/token", endpoint="token", methods=["POST"]),
            Rule("/register", endpoint="register", methods=["POST"]),
        ])

    def paths(self) -> Iterator[str]:
        """The paths this application answers, for mounting it beside another."""
        for rule in self.urls.iter_rules():
            yield rule.rule

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 metadata document."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "jwks_uri": f"{self.issuer}/jwks.json",
            "scopes_supported": list(self.scopes_supported),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token",
                                      "client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic",
                                                      "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": True,
        }

    # -- used by the grants

    def find_client(self, client_id: str) -> RegisteredClient | None:
        """A registered client, or the client a metadata document describes."""
        client = self.store.client(client_id)
        if client is None and client_id.startswith("https://"):
            client = self._client_from_document(client_id)
        return client

    def _client_from_document(self, url: str) -> RegisteredClient | None:
        try:
            document = self._fetch_metadata(url)
        except ClientMetadataError:
            return None
        redirect_uris = document.get("redirect_uris")
        # The document must name itself, and say where codes may go (V1125-26).
        if (document.get("client_id") != url or not isinstance(redirect_uris, list)
                or not redirect_uris
                or not all(is_allowed_redirect_uri(uri) for uri in redirect_uris)):
            return None
        # Fetched again on each use rather than kept: no cache to outlive the document.
        return RegisteredClient(
            client_id=url, client_secret=None, redirect_uris=tuple(redirect_uris),
            grant_types=("authorization_code", "refresh_token"), response_types=("code",),
            token_endpoint_auth_method="none", scope=" ".join(self.scopes_supported),
            metadata=document)

    def resource_of(self, request: Any) -> str:
        """The one resource a request asks for, or the default one.

        Raises:
            InvalidTargetError: several resources, or one this server does not serve.
        """
        asked = request.payload.datalist.get("resource") or []
        if not asked:
            return self.resources[0]
        if len(asked) > 1:
            raise InvalidTargetError("ask for one resource at a time")
        resource: str = asked[0].rstrip("/")
        if resource not in self.resources:
            raise InvalidTargetError(f"no tokens are issued here for {asked[0]}")
        return resource

    def issue(self, client: RegisteredClient, *, subject: str, scope: str, resource: str,
              refresh: bool) -> dict[str, Any]:
        """A token response: a signed access token for ``resource``, and a refresh token
        if ``refresh`` and the client may use one."""
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": subject, "aud": resource,
                  "client_id": client.client_id, "iat": now,
                  "exp": now + self.access_token_lifetime, "jti": secrets.token_hex(16)}
        if scope:
            claims["scope"] = scope
        token: dict[str, Any] = {"access_token": self.key.sign(claims), "token_type": "Bearer",
                                 "expires_in": self.access_token_lifetime}
        if scope:
            token["scope"] = scope
        if refresh and client.check_grant_type("refresh_token"):
            refresh_token = RefreshToken(
                token=secrets.token_urlsafe(32), client_id=client.client_id, scope=scope,
                subject=subject, resource=resource,
                expires_at=time.time() + REFRESH_TOKEN_LIFETIME)
            self.store.add_refresh_token(refresh_token)
            token["refresh_token"] = refresh_token.token
        return token

    # -- endpoints

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        request = Request(environ)
        if request.host.lower() != self._host:
            # Only requests addressed to the issuer are answered: a page that rebinds its
            # own DNS name to this address cannot then read codes, tokens or secrets.
            return _page(f"This server answers as {self._host} only.",
                         status=421)(environ, start_response)  # type: ignore[no-any-return]
        try:
            endpoint, _ = self.urls.bind_to_environ(environ).match()
            response = getattr(self, f"_{endpoint}")(request)
        except HTTPException as error:
            response = error.get_response(environ)
        except OAuth2Error as error:  # raised before a grant takes over: insecure_transport
            status, body, headers = error()
            response = self.server.handle_response(status, body, headers)
        return response(environ, start_response)  # type: ignore[no-any-return]

    def _metadata(self, request: Request) -> Response:
        return _json(self.metadata())

    def _jwks(self, request: Request) -> Response:
        return _json(self.key.jwks())

    def _token(self, request: Request) -> Response:
        response: Response = self.server.create_token_response(request)
        response.headers["Cache-Control"] = "no-store"
        return response

    def _register(self, request: Request) -> Response:
        response: Response = self.server.create_endpoint_response(
            rfc7591.ClientRegistrationEndpoint.ENDPOINT_NAME, request)
        response.headers["Cache-Control"] = "no-store"
        return response

    def _authorize(self, request: Request) -> Response:
        if request.method == "POST":
            return self._answer_consent(request)
        oauth_request = OAuthRequest.of(request)
        try:
            grant = self.server.get_consent_grant(oauth_request, end_user=LOCAL_USER)
        except OAuth2Error as error:
            return self._refuse(oauth_request, error)
        if self.auto_approve:
            return self._respond(oauth_request, grant, LOCAL_USER)
        consent_id = self.store.add_consent(list(request.args.items(multi=True)))
        return _consent_page(consent_id, grant.client, grant.request.scope or "",
                             self.resource_of(grant.request))

    def _answer_consent(self, request: Request) -> Response:
        pending = self.store.take_consent(request.form.get("consent", ""))
        if pending is None:
            return _page("This authorization request has expired or was already answered."
                         " Start again from the application.", status=400)
        # The grant is checked again from the original request, as if it came back now.
        args: MultiDict[str, str] = MultiDict(pending.params)
        oauth_request = OAuthRequest("GET", f"{self.issuer}/authorize", request.headers,
                                     args, MultiDict())
        try:
            grant = self.server.get_consent_grant(oauth_request, end_user=LOCAL_USER)
        except OAuth2Error as error:
            return self._refuse(oauth_request, error)
        approved = request.form.get("decision") == "approve"
        return self._respond(oauth_request, grant, LOCAL_USER if approved else None)

    def _respond(self, oauth_request: Any, grant: Any, user: str | None) -> Response:
        response: Response = self.server.create_authorization_response(
            oauth_request, grant_user=user, grant=grant)
        return response

    def _refuse(self, oauth_request: Any, error: OAuth2Error) -> Response:
        """An invalid authorization request: back to the client when its redirect URI is
        known to be the client's, else a page for the user (never an open redirect)."""
        if error.redirect_uri:
            error.state = oauth_request.payload.state
            params = [*error.get_body(), ("iss", self.issuer)]
            return Response(status=302,
                            headers={"Location": add_params_to_uri(error.redirect_uri,
                                                                   params)})
        return _page(f"The authorization request is not valid: {error.error}: "
                     f"{error.description or ''}", status=400)


def _json(document: Any, status: int = 200) -> Response:
    return Response(json.dumps(document), status=status, mimetype="application/json")


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:34em;margin:4em auto;line-height:1.4}}
button{{font-size:1em;margin-right:1em;padding:.4em 1.2em}}</style></head>
<body>{body}</body></html>
"""


def _page(text: str, *, status: int = 200) -> Response:
    return _html("Authorization", f"<p>{html.escape(text)}</p>", status=status)


def _html(title: str, body: str, *, status: int = 200) -> Response:
    response = Response(_PAGE.format(title=html.escape(title), body=body), status=status,
                        mimetype="text/html")
    # The page grants access with one click: it must never be framed by another site.
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    response.headers["Cache-Control"] = "no-store"
    return response


def _consent_page(consent_id: str, client: RegisteredClient, scope: str,
                  resource: str) -> Response:
    name = client.metadata.get("client_name") or client.client_id
    scopes = "".join(f"<li><code>{html.escape(s)}</code></li>" for s in scope.split())
    body = (
        f"<h1>Authorize {html.escape(str(name))}?</h1>"
        f"<p><b>{html.escape(str(name))}</b> (client <code>"
        f"{html.escape(client.client_id)}</code>) asks to use <code>"
        f"{html.escape(resource)}</code> on your behalf"
        + (f" with these scopes:</p><ul>{scopes}</ul>" if scopes else ".</p>")
        + '<form method="post" action="authorize">'
        f'<input type="hidden" name="consent" value="{html.escape(consent_id)}">'
        '<button type="submit" name="decision" value="approve">Approve</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></form>')
    return _html("Authorize", body)


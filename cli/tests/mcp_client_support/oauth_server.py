"""An MCP server of the official Python SDK that is also its own OAuth
authorization server (`mcp.server.auth`), for the OAuth tests.

Usage: oauth_server.py PORT TOKEN_SECONDS

Streamable HTTP on 127.0.0.1:PORT/mcp. Dynamic client registration is on;
the authorization endpoint approves at once (it redirects to the client's
redirect URI with a code: the "user" always consents); access tokens live
TOKEN_SECONDS, refresh tokens rotate. Tools: `echo`, `grants` (the
scopes of the token the call came with, and how many refreshes the server
has answered), and `admin`, whose call without the scope `mcp:write` is
answered 403 `insufficient_scope` (a step-up).
"""

import json
import secrets
import sys
import time

import uvicorn

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.fastmcp import FastMCP
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
TOKEN_SECONDS = int(sys.argv[2])
BASE = f"http://127.0.0.1:{PORT}"


class Provider:
    def __init__(self):
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}
        self.refreshes = 0

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams):
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp:read"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _issue(self, client_id, scopes):
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + TOKEN_SECONDS,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=TOKEN_SECONDS,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        self.refreshes += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


provider = Provider()
mcp = FastMCP(
    "oauth-test",
    host="127.0.0.1",
    port=PORT,
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=["mcp:read", "mcp:write"], default_scopes=["mcp:read"]
        ),
        required_scopes=["mcp:read"],
    ),
)


@mcp.tool()
def echo(text: str) -> str:
    """Returns its text."""
    return text


@mcp.tool()
def admin() -> str:
    """Needs the scope mcp:write (checked before the call reaches here)."""
    return "admin done"


@mcp.tool()
def grants() -> dict:
    """The scopes of the calling token, and the refreshes answered so far."""
    token = get_access_token()
    return {"scopes": token.scopes if token else [], "refreshes": provider.refreshes}


def step_up(app):
    """ASGI middleware: a `tools/call` of `admin` with a token without
    `mcp:write` gets 403 insufficient_scope, as RFC 6750 says."""

    async def middleware(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        messages, body = [], b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {}
        if (
            isinstance(request, dict)
            and request.get("method") == "tools/call"
            and request.get("params", {}).get("name") == "admin"
        ):
            auth = dict(scope["headers"]).get(b"authorization", b"").decode()
            token = await provider.load_access_token(auth.removeprefix("Bearer "))
            if token is not None and "mcp:write" not in token.scopes:
                challenge = (
                    'Bearer error="insufficient_scope", scope="mcp:read mcp:write", '
                    f'resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [
                            (b"www-authenticate", challenge.encode()),
                            (b"content-type", b"application/json"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error":"insufficient_scope"}'})
                return

        async def replay():
            return messages.pop(0) if messages else await receive()

        return await app(scope, replay, send)

    return middleware


if __name__ == "__main__":
    uvicorn.run(step_up(mcp.streamable_http_app()), host="127.0.0.1", port=PORT, log_level="warning")

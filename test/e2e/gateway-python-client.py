"""The MCP Python SDK client through the gateway (driven by gateway-python-client.test.ts).

Discovery, dynamic registration, authorization (the browser part is done by the test, which
reads the authorization URL from stdout and answers the redirect parameters on stdin), token,
tools/call over Streamable HTTP, then a refresh through the gateway. Prints one JSON object per
line on stdout; everything else goes to stderr.
"""

import asyncio
import json
import sys
import time

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:45777/callback"


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


async def main(url: str) -> None:
    loop = asyncio.get_running_loop()
    storage = MemoryStorage()

    async def redirect_handler(authorization_url: str) -> None:
        emit({"authorize": authorization_url})

    async def callback_handler() -> AuthorizationCodeResult:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        params = json.loads(line)
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="MCP Python SDK test client",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            who = await client.call_tool("whoami", {})
            emit({"whoami": json.loads(who.content[0].text), "client_id": storage.client_info.client_id if storage.client_info else None})
            first_refresh = storage.tokens.refresh_token if storage.tokens else None
            # Make the access token look expired: the provider refreshes through the gateway.
            provider.context.token_expiry_time = time.time() - 10
            echoed = await client.call_tool("echo", {"text": "from python"})
            emit({
                "echo": echoed.content[0].text,
                "refreshed": bool(storage.tokens and storage.tokens.refresh_token and storage.tokens.refresh_token != first_refresh),
                "refresh_prefix": (storage.tokens.refresh_token or "")[:5] if storage.tokens else None,
            })
    emit({"done": True})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))

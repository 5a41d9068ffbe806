"""The local HTTP server: each request becomes an API Gateway HTTP API (v2) event for the same
handler Lambda would run: `ingest` for POST /v1/worlds/{world}/events, `api` for the rest."""

from __future__ import annotations

import base64
import importlib
import json
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from engram.errors import EngramError
from engram.http.app import body_limit, check_head, too_large
from engram.local.per_thread import serve_per_thread

REPO_ROOT = Path(__file__).resolve().parents[3]
_EVENTS_ROUTE = re.compile(r"^/v1/worlds/[^/]+/events/?$")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class LambdaContext:
    """The few context attributes the handlers read."""

    def __init__(self, function_name: str) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:local:000000000000:function:{function_name}"
        self.memory_limit_in_mb = 1024
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


def _handler(name: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    return importlib.import_module(f"functions.{name}.handler").handler  # type: ignore[no-any-return]


def to_event(method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """An API Gateway HTTP API payload (version 2.0) for one request."""
    text: str | None
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode(), True
    params: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        from urllib.parse import unquote_plus

        k, v = unquote_plus(key), unquote_plus(value)
        params[k] = f"{params[k]},{v}" if k in params else v
    now = time.time()
    return {
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": query,
        "headers": headers, "queryStringParameters": params or None,
        "requestContext": {
            "accountId": "000000000000", "apiId": "local", "domainName": "localhost", "stage": "$default",
            "requestId": str(uuid.uuid4()), "routeKey": "$default", "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now * 1000),
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1",
                     "userAgent": headers.get("user-agent", "")},
        },
        "body": text or None, "isBase64Encoded": encoded,
    }


BROWSER = Path(__file__).resolve().parent / "browser"
_BROWSER_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                  ".css": "text/css; charset=utf-8"}


def _browser_file(method: str, path: str) -> tuple[int, str, bytes] | None:
    """(status, content type, body) for the browser's pages at `/` and `/ui/<file>`; None for API paths."""
    if method != "GET" or not (path == "/" or path.startswith("/ui/")):
        return None
    name = "index.html" if path in ("/", "/ui/") else path.removeprefix("/ui/")
    target = (BROWSER / name).resolve()
    if target.parent != BROWSER or target.suffix not in _BROWSER_TYPES or not target.is_file():
        return 404, "text/plain; charset=utf-8", b"not found"
    return 200, _BROWSER_TYPES[target.suffix], target.read_bytes()


def build_app() -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    serve_per_thread()  # requests are served in parallel threads: each sees only its own
    handlers = {name: _handler(name) for name in ("ingest", "api")}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method, path = scope["method"], scope["path"]
        page = _browser_file(method, path)
        if page is not None:  # the memory browser: static files, served locally only
            status, content_type, content = page
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", content_type.encode()), (b"cache-control", b"no-cache")]})
            await send({"type": "http.response.body", "body": content})
            return
        try:  # the caller and the declared length first: a body that will be refused is never read
            check_head(path, headers, None, _declared_length(headers))
            body = await _read_body(receive, path)
        except EngramError as exc:
            await _send_error(send, exc)
            return
        name = "ingest" if method == "POST" and _EVENTS_ROUTE.match(path) else "api"
        event = to_event(method, path, scope.get("query_string", b"").decode(), headers, body)
        result = await anyio.to_thread.run_sync(handlers[name], event, LambdaContext(f"engram-{name}"))
        payload = result.get("body") or ""
        raw = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
        out_headers = [(k.encode(), str(v).encode()) for k, v in (result.get("headers") or {}).items()]
        for k, values in (result.get("multiValueHeaders") or {}).items():
            out_headers += [(k.encode(), str(v).encode()) for v in values]
        for cookie in result.get("cookies") or []:
            out_headers.append((b"set-cookie", cookie.encode()))
        await send({"type": "http.response.start", "status": int(result.get("statusCode", 500)),
                    "headers": out_headers})
        await send({"type": "http.response.body", "body": raw})

    return app


def _declared_length(headers: dict[str, str]) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None  # none declared (chunked): bounded while it is read


async def _read_body(receive: Receive, path: str) -> bytes:
    """The request's body, read until it ends or passes the route's limit (413: the rest is never read)."""
    limit, size, chunks = body_limit(path), 0, []
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(path)
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send_error(send: Send, exc: EngramError) -> None:
    body = json.dumps({"error": {"code": exc.code, "message": exc.message, "details": exc.details}}).encode()
    await send({"type": "http.response.start", "status": exc.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def serve(host: str, port: int) -> None:
    """Serve until Ctrl-C (uvicorn handles the signal and returns)."""
    import uvicorn

    uvicorn.run(build_app(), host=host, port=port, log_level="warning", lifespan="on")

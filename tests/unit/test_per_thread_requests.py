"""The local server serves requests in parallel threads through Powertools' resolver, which keeps the request it
serves in class attributes: made per thread, two requests served at once each read their own."""

from __future__ import annotations

import json
import threading
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.api_gateway import Router

from engram.local.per_thread import serve_per_thread


def _event(who: str) -> dict[str, Any]:
    return {"version": "2.0", "routeKey": "$default", "rawPath": "/who", "rawQueryString": "", "headers": {},
            "requestContext": {"http": {"method": "POST", "path": "/who", "protocol": "HTTP/1.1",
                                        "sourceIp": "127.0.0.1", "userAgent": "t"}, "stage": "$default"},
            "body": json.dumps({"who": who}), "isBase64Encoded": False}


def test_two_requests_served_at_once_each_read_their_own_event() -> None:
    serve_per_thread()
    serve_per_thread()  # idempotent
    router = Router()
    both_in = threading.Barrier(2, timeout=10)

    @router.post("/who")
    def who() -> dict[str, Any]:
        mine = router.current_event.json_body["who"]
        both_in.wait()  # the other request has set its event by now
        return {"asked": mine, "read_after": router.current_event.json_body["who"],
                "context_route": router.context.get("_path")}

    app = APIGatewayHttpResolver()
    app.include_router(router)
    results: dict[str, dict[str, Any]] = {}

    def serve(name: str) -> None:
        results[name] = json.loads(app.resolve(_event(name), None)["body"])  # type: ignore[arg-type]

    threads = [threading.Thread(target=serve, args=(n,)) for n in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(15)
    assert results == {n: {"asked": n, "read_after": n, "context_route": "/who"} for n in ("alice", "bob")}

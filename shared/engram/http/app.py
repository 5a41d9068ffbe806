"""The resolver factory: Powertools' HTTP API resolver with engram's error bodies and authorization,
shared by the `api` and `ingest` functions so both answer alike."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from engram.config import get_settings
from engram.errors import EngramError, PayloadTooLarge
from engram.http.auth import authorize, parse_api_keys
from engram.observability import logger

MAX_BODY_BYTES = 1_000_000
TITLE = "engram"


def error_response(status: int, code: str, message: str, details: Any = None) -> Response:
    return Response(status_code=status, content_type="application/json",
                    body=json.dumps({"error": {"code": code, "message": message, "details": details}}, default=str))


def resolve(app: APIGatewayHttpResolver, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Size and authorization checks on the raw event, before any route or validation reads it,
    then the resolver."""
    try:
        body = event.get("body") or ""
        if len(body.encode() if isinstance(body, str) else body) > MAX_BODY_BYTES:
            raise PayloadTooLarge(f"the body is over {MAX_BODY_BYTES} bytes")
        claims = (((event.get("requestContext") or {}).get("authorizer") or {}).get("jwt") or {}).get("claims")
        path = event.get("rawPath") or (event.get("requestContext") or {}).get("http", {}).get("path", "")
        headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
        authorize(path, headers, claims, parse_api_keys(get_settings().api_keys))
    except EngramError as exc:
        return {"statusCode": exc.status, "headers": {"Content-Type": "application/json"}, "isBase64Encoded": False,
                "body": json.dumps({"error": {"code": exc.code, "message": exc.message, "details": exc.details}})}
    return app.resolve(event, context)


def build_resolver(*routers: Router) -> APIGatewayHttpResolver:
    app = APIGatewayHttpResolver(enable_validation=True)
    for router in routers:
        app.include_router(router)
    app.enable_swagger(path="/v1/docs", title=TITLE, version="0.1.0")

    @app.get("/v1/openapi.json", include_in_schema=False)
    def openapi() -> Response[Any]:
        return Response(status_code=200, content_type="application/json",
                        body=app.get_openapi_json_schema(title=TITLE, version="0.1.0"))

    @app.exception_handler(RequestValidationError)
    def invalid(exc: RequestValidationError) -> Response:
        details = [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")} for e in exc.errors()]
        if any(d["type"] == "json_invalid" for d in details):
            return error_response(400, "malformed_json", "the body is not valid JSON", details)
        return error_response(422, "invalid_input", "the request failed validation", details)

    @app.exception_handler(json.JSONDecodeError)
    def malformed(exc: json.JSONDecodeError) -> Response:
        return error_response(400, "malformed_json", f"the body is not valid JSON: {exc.msg}")

    @app.exception_handler(EngramError)
    def domain(exc: EngramError) -> Response:
        if exc.status >= 500:
            logger.error("request failed", extra={"code": exc.code, "error": exc.message})
        return error_response(exc.status, exc.code, exc.message, exc.details)

    @app.exception_handler(NotFoundError)
    def missing(exc: NotFoundError) -> Response:
        return error_response(404, "not_found", "no such route")

    @app.not_found
    def no_route(exc: NotFoundError) -> Response:
        return error_response(404, "not_found", "no such route")

    @app.exception_handler(Exception)
    def unexpected(exc: Exception) -> Response:
        logger.exception("unexpected error")
        return error_response(500, "internal_error", "an unexpected error occurred; it has been logged")

    return app

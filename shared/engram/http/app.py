"""The resolver factory: Powertools' HTTP API resolver with engram's error bodies and authorization,
shared by the `api` and `ingest` functions so both answer alike."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from engram.config import get_settings
from engram.errors import EngramError, InvalidInput, MalformedBody, PayloadTooLarge, UnsupportedMediaType
from engram.http.auth import authorize, parse_api_keys, readable_worlds
from engram.model import jsonvalues
from engram.model.jsonvalues import storable
from engram.observability import logger

MAX_BODY_BYTES = 1_000_000
# An import document: Lambda takes at most 6 MB per invocation, and the body travels JSON-escaped inside the
# event (every quote doubled in size); `engram import` sends larger documents in parts of this size.
MAX_IMPORT_BYTES = 4_000_000
_IMPORT_PATH = re.compile(r"^/v1/worlds/[^/]+/import/?$")
TITLE = "engram"


RETRY_AFTER_S = 1  # a 503 (the database, index or model unreachable) says when a retry may succeed


def error_response(status: int, code: str, message: str, details: Any = None) -> Response:
    headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
    return Response(status_code=status, content_type="application/json", headers=headers,
                    body=json.dumps({"error": {"code": code, "message": message, "details": details}}, default=str))


def body_limit(path: str) -> int:
    """The largest body a route takes, in bytes."""
    return MAX_IMPORT_BYTES if _IMPORT_PATH.match(path) else MAX_BODY_BYTES


def too_large(path: str) -> PayloadTooLarge:
    """The 413 of a body over its route's limit."""
    if _IMPORT_PATH.match(path):
        return PayloadTooLarge(f"an import document over {MAX_IMPORT_BYTES} bytes: send it with "
                               "`engram import FILE --world W`, which sends it in parts")
    return PayloadTooLarge(f"the body is over {MAX_BODY_BYTES} bytes")


def check_head(path: str, headers: dict[str, str], claims: dict[str, Any] | None, length: int | None) -> None:
    """What can be refused from a request's head alone, before its body is read: the caller (401, 403), then
    the body's length as declared or measured (413). `headers` have lower-case names."""
    authorize(path, headers, claims, parse_api_keys(get_settings().api_keys))
    if length is not None and length > body_limit(path):
        raise too_large(path)


def resolve(app: APIGatewayHttpResolver, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The caller, size, media type, parameter and body checks on the raw event, before any route or
    validation reads it, then the resolver."""
    try:
        body = event.get("body") or ""
        path = event.get("rawPath") or (event.get("requestContext") or {}).get("http", {}).get("path", "")
        headers, claims = _caller(event)
        check_head(path, headers, claims, len(body.encode() if isinstance(body, str) else body))
        _check_parameters(event.get("queryStringParameters") or {})
        if _IMPORT_PATH.match(path):  # an export document: JSON Lines
            if body and not _is_json_lines(headers.get("content-type")):
                raise UnsupportedMediaType(f"an import document is application/x-ndjson, not "
                                           f"{headers['content-type']!r}")
            if body:
                _text(body, bool(event.get("isBase64Encoded")))
        elif body:
            if not _is_json(headers.get("content-type")):
                raise UnsupportedMediaType(f"the body must be application/json, not {headers['content-type']!r}")
            _check_storable(body, bool(event.get("isBase64Encoded")))
            event = _as_plain_json(event)
    except EngramError as exc:
        return {"statusCode": exc.status, "headers": {"Content-Type": "application/json"}, "isBase64Encoded": False,
                "body": json.dumps({"error": {"code": exc.code, "message": exc.message, "details": exc.details}})}
    return app.resolve(event, context)


def _caller(event: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any] | None]:
    """A request's headers (lower-case names) and, on AWS, its verified JWT claims."""
    claims = (((event.get("requestContext") or {}).get("authorizer") or {}).get("jwt") or {}).get("claims")
    return {k.lower(): v for k, v in (event.get("headers") or {}).items()}, claims


def caller_worlds(event: dict[str, Any]) -> set[str] | None:
    """The worlds the request's caller may read (its key's or token's), None for every world."""
    return readable_worlds(*_caller(event), parse_api_keys(get_settings().api_keys))


def _is_json(content_type: str | None) -> bool:
    """Every body the API takes is JSON (any JSON media type: `application/json`, `application/*+json`, in any
    case, with parameters); a request that names no content type is read as JSON."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _as_plain_json(event: dict[str, Any]) -> dict[str, Any]:
    """The event with its JSON media type spelled `application/json`: the resolver's validation reads only that
    spelling (in another case, or a `+json` type, the body would reach no route)."""
    headers = {k: v for k, v in (event.get("headers") or {}).items() if k.lower() != "content-type"}
    return {**event, "headers": {**headers, "content-type": "application/json"}}


def _check_parameters(parameters: dict[str, str]) -> None:
    """Query parameters PostgreSQL can be given: no NUL character or unpaired surrogate, in a name or a value."""
    for name, value in parameters.items():
        if not (storable(name) and storable(value)):
            raise InvalidInput(f"the query parameter {name!r} holds a NUL character or an unpaired surrogate",
                               [{"loc": ["query", name], "msg": "unstorable text", "type": "text_unstorable"}])


def _text(body: str | bytes, base64_encoded: bool) -> str:
    raw = base64.b64decode(body) if base64_encoded else body
    try:
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        raise MalformedBody(f"the body is not UTF-8: {exc.reason} at byte {exc.start}") from exc


def _check_storable(body: str | bytes, base64_encoded: bool) -> None:
    """A JSON body every JSON reader and PostgreSQL can hold: UTF-8, no NaN or Infinity (not JSON), no number
    beyond a 64-bit float or integer of more than JSON_MAX_INT_DIGITS digits, and no string (key or value, at any
    depth) holding a NUL character or half a surrogate pair, which `text` and `jsonb` refuse. Refused here with
    the value's location instead of failing further on; a body that is not JSON is left to the resolver's 400."""
    text = _text(body, base64_encoded)
    try:
        document = jsonvalues.loads(text)
    except RecursionError as exc:
        raise MalformedBody("the body is nested too deeply") from exc
    except ValueError:
        return
    found = jsonvalues.problem(document, ["body"])
    if found is not None:
        raise InvalidInput(found["msg"], [found])


def _is_json_lines(content_type: str | None) -> bool:
    """An export document: JSON Lines by any of its names (or JSON, or no content type named)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return _is_json(content_type) or media in ("application/x-ndjson", "application/jsonl", "application/json-lines",
                                                "text/plain")


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

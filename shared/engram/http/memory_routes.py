"""The routes that correct and delete a fact and read its history and audit, and those that export and import a
world's memory."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from engram.app.compose import get_clients
from engram.http.params import ID, Id, WorldId, api_router
from engram.http.params import at as _at
from engram.memory import edits
from engram.memory.history import fact_history
from engram.memory.portability import MAX_EXPORT_PAGE_BYTES, ExportPage, document_lines, export_page, import_document
from engram.model.memories import ExplainedFact, FactHistory, MemoryAudit, MemoryCorrection, MemoryDeletion
from engram.model.portability import ImportResult

ExportCursor = Annotated[str | None, Query(max_length=2000, description="where the page starts: the previous "
                                                                       "page's X-Engram-Next-Cursor header")]
ExportVectors = Annotated[bool, Query(description="include each row's vectors (base64 float32)")]
ExportBytes = Annotated[int, Query(ge=10_000, le=MAX_EXPORT_PAGE_BYTES, description="the page's size in bytes, "
                                                                                    "about")]
_EXPORT: dict[int, Any] = {200: {"description": "a document (docs/export-format.md), one JSON value per line; the header "
                                "X-Engram-Next-Cursor, when present, fetches the next page",
                 "content": {"application/x-ndjson": {}}}}


def _page(page: ExportPage) -> Response[str]:
    headers = {"X-Engram-Next-Cursor": page.next_cursor} if page.next_cursor else {}
    return Response(status_code=200, content_type="application/x-ndjson", body=page.text, headers=headers)


@api_router.get("/v1/worlds/<world>/export", summary="Export a world's memory as JSON Lines, page by page",
                responses=_EXPORT, tags=["export/import"])
def export_world(world: WorldId, cursor: ExportCursor = None, vectors: ExportVectors = True,
                 max_bytes: ExportBytes = MAX_EXPORT_PAGE_BYTES) -> Response[str]:
    return _page(export_page(get_clients(), world, None, vectors=vectors, cursor=cursor, max_bytes=max_bytes))


@api_router.get("/v1/worlds/<world>/users/<user_id>/export",
                summary="Export one user's memory (and the entities it refers to), page by page", responses=_EXPORT,
                tags=["export/import"])
def export_user(world: WorldId, user_id: Id, cursor: ExportCursor = None, vectors: ExportVectors = True,
                max_bytes: ExportBytes = MAX_EXPORT_PAGE_BYTES) -> Response[str]:
    return _page(export_page(get_clients(), world, user_id, vectors=vectors, cursor=cursor, max_bytes=max_bytes))


@api_router.post("/v1/worlds/<world>/import",
                 summary="Import an export document (JSON Lines) into this world: validated whole, then written in "
                         "one transaction; rows the world holds are skipped", tags=["export/import"])
def import_world(world: WorldId) -> ImportResult:
    body = api_router.current_event.decoded_body or ""
    return import_document(get_clients(), world, document_lines(body))


# ---------------------------------------------------------------- correcting and deleting a fact (issue 22)
MemoryId = Annotated[str, Path(pattern=ID, description="a fact's id (sem_...)")]


def _request_id() -> str | None:
    """The request's id, for the audit row: the gateway's, or the caller's X-Request-Id."""
    event = api_router.current_event.raw_event
    given = ((event.get("requestContext") or {}).get("requestId")
             or {k.lower(): v for k, v in (event.get("headers") or {}).items()}.get("x-request-id"))
    return str(given)[:200] if given else None


@api_router.patch("/v1/worlds/<world>/memories/<memory_id>",
                  summary="Correct a fact: its value, confidence or valid time, as the user's word; audited",
                  tags=["memories"])
def correct_memory(world: WorldId, memory_id: MemoryId, correction: MemoryCorrection) -> ExplainedFact:
    return edits.correct_memory(*_at(world), memory_id, correction, request_id=_request_id())


@api_router.delete("/v1/worlds/<world>/memories/<memory_id>",
                   summary="Delete a fact: gone from memory, the keyword index and the graph; an audit row keeps it",
                   tags=["memories"])
def delete_memory(world: WorldId, memory_id: MemoryId,
                  note: Annotated[str | None, Query(max_length=1000)] = None) -> MemoryDeletion:
    return edits.delete_memory(*_at(world), memory_id, note=note, request_id=_request_id())


@api_router.get("/v1/worlds/<world>/memories/<memory_id>/history",
                summary="A fact's history: the values it has had for its subject and predicate, in the order they "
                        "became true, with valid times, status and the conflict that closed each", tags=["memories"])
def memory_history(world: WorldId, memory_id: MemoryId) -> FactHistory:
    return fact_history(*_at(world), memory_id)


@api_router.get("/v1/worlds/<world>/memories/<memory_id>/audit",
                summary="A fact's corrections and deletion, oldest first (kept after it is deleted)", tags=["memories"])
def memory_audit(world: WorldId, memory_id: MemoryId) -> list[MemoryAudit]:
    return edits.memory_audit(*_at(world), memory_id)

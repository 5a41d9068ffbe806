"""An in-memory KeywordIndex: documents by (world, kind, id), searched by the words they share with the
query (a document's score is how many query words it holds); records what it received."""

from __future__ import annotations

import re
from collections.abc import Sequence

from engram.errors import TransientStoreError
from engram.model.search import DocKind, IndexDocument, KeywordHit

_WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class InMemoryIndex:
    """`upserted` and `deleted` list every document and ref received, in order; `down` makes every call fail as
    an unreachable engine does (the adapters raise TransientStoreError)."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, DocKind, str], IndexDocument] = {}
        self.upserted: list[IndexDocument] = []
        self.deleted: list[tuple[str, DocKind, str]] = []
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise TransientStoreError("keyword index unreachable (fake)")

    def upsert(self, docs: Sequence[IndexDocument]) -> None:
        self._check()
        for d in docs:
            self.docs[(d.world_id, d.kind, d.doc_id)] = d
            self.upserted.append(d)

    def delete(self, world_id: str, refs: Sequence[tuple[DocKind, str]]) -> None:
        self._check()
        for kind, doc_id in refs:
            self.docs.pop((world_id, kind, doc_id), None)
            self.deleted.append((world_id, kind, doc_id))

    def search(self, world_id: str, query: str, *, user_id: str | None = None,
               kinds: Sequence[DocKind] | None = None, limit: int = 10) -> list[KeywordHit]:
        self._check()
        wanted = words(query) - {"and", "or", "not"}
        hits = []
        for (world, kind, doc_id), d in self.docs.items():
            shared = wanted & words(d.text)
            readable = user_id is None or d.user_id in (None, user_id)  # the user's own and the world's
            if world == world_id and shared and (kinds is None or kind in kinds) and readable:
                hits.append(KeywordHit(doc_id=doc_id, kind=kind, score=float(len(shared)),
                                       highlights=[f"<b>{w}</b>" for w in sorted(shared)]))
        return sorted(hits, key=lambda h: (-h.score, h.doc_id))[:limit]

    def delete_world_user(self, world_id: str, user_id: str) -> int:
        gone = [k for k, d in self.docs.items() if k[0] == world_id and d.user_id == user_id]
        for k in gone:
            del self.docs[k]
        return len(gone)

    def clear(self, world_id: str) -> None:
        for k in [k for k in self.docs if k[0] == world_id]:
            del self.docs[k]

    def ping(self) -> None:
        self._check()

"""Query vectors, cached per process: an agent asks alike questions, and the query loop searches its
question more than once. Keyed by the embedder's name and the exact text; least recently used goes first."""

from __future__ import annotations

import threading
from collections import OrderedDict

from engram.ports import Embedder

_lock = threading.Lock()
_cache: OrderedDict[tuple[str, str], list[float]] = OrderedDict()


def query_vector(embedder: Embedder, text: str, capacity: int) -> list[float]:
    key = (f"{embedder.name}:{embedder.dim}", text)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    [vector] = embedder.embed([text])
    with _lock:
        _cache[key] = vector
        while len(_cache) > max(capacity, 0):
            _cache.popitem(last=False)
    return vector


def cached(embedder: Embedder, text: str) -> bool:
    with _lock:
        return (f"{embedder.name}:{embedder.dim}", text) in _cache

"""The embedding port: unit-normalized vectors; semantic scores are cosine similarity, higher is better."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-normalized vectors, one per text, in order."""
        ...

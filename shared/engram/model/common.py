from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

# Identifiers a client chooses: printable, no slashes, bounded.
Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$")
]


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime | None) -> datetime | None:
    """A time given without an offset read as UTC (how the API documents it); one with an offset as given."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def new_id(prefix: str) -> str:
    """A sortable-enough unique id with a readable prefix (`evt_`, `ent_`, `mem_`, `qry_`...)."""
    return f"{prefix}_{uuid.uuid4().hex}"


def stable_id(prefix: str, *parts: str) -> str:
    """An id derived from what identifies the row, so a re-run (a retried step) finds the same id."""
    return f"{prefix}_" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Record(BaseModel):
    """A stored row: mutable in memory while a pipeline works on it, extra fields refused."""

    model_config = ConfigDict(extra="forbid")

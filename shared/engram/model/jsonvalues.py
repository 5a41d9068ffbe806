"""Free-form JSON from clients (an event's metadata, the records of an imported document): only what every JSON
reader and PostgreSQL's `jsonb` and `text` can hold. One set of checks, shared by the HTTP edge, ingest and import.

JSON has no NaN or Infinity (Python's reader takes them anyway), a number past a 64-bit float is infinity to
most readers, Python refuses to read an integer of more than 4,300 digits, PostgreSQL refuses a NUL character or
half a surrogate pair in any string, and a value nested hundreds deep breaks the serializers that read it back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

JSON_MAX_DEPTH = 32  # objects and arrays nested in a free-form value ({"a": {"b": 1}} is 2 deep)
METADATA_MAX_BYTES = 16_000  # an event's metadata as compact UTF-8 JSON
JSON_MAX_INT_DIGITS = 40  # an integer's digits (a 128-bit one has 39); longer ones are not read at all
_INT_BOUND = 10 ** JSON_MAX_INT_DIGITS


class NotJsonNumber:
    """What the reader puts where the text holds a number JSON readers cannot hold, so that the checks can say
    where it is (the reader itself knows no location)."""

    def __init__(self, text: str) -> None:
        self.text = text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"

    def __repr__(self) -> str:
        return self.text


def loads(text: str | bytes) -> Any:
    """`json.loads`, except that NaN, Infinity, numbers beyond a 64-bit float and integers of more than
    JSON_MAX_INT_DIGITS digits come back as NotJsonNumber for `problem` to report."""
    return json.loads(text, parse_constant=NotJsonNumber, parse_float=_float, parse_int=_int)


def _float(text: str) -> float | NotJsonNumber:
    value = float(text)
    return value if math.isfinite(value) else NotJsonNumber(text)


def _int(text: str) -> int | NotJsonNumber:
    return int(text) if len(text.lstrip("-")) <= JSON_MAX_INT_DIGITS else NotJsonNumber(text)


def problem(value: Any, loc: list[str | int], *, max_depth: int | None = None) -> dict[str, Any] | None:
    """The first thing in `value` JSON or PostgreSQL cannot hold, as a validation error (`loc`, `msg`, `type`)
    located from `loc`; None when it has none. Iterative: a deep value cannot exhaust the stack here."""
    pending: list[tuple[list[str | int], Any, int]] = [(loc, value, 0)]
    while pending:
        where, item, depth = pending.pop()
        if isinstance(item, dict | list):
            if max_depth is not None and depth + 1 > max_depth:
                return {"loc": where, "msg": f"nested more than {max_depth} objects or arrays deep", "type": "json_too_deep"}
            children: Iterator[tuple[str | int, Any]] = iter(item.items()) if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str) and not storable(key):
                    return {"loc": where, "msg": "a key holds a NUL character or an unpaired surrogate",
                            "type": "text_unstorable"}
                pending.append(([*where, key], child, depth + 1))
        elif isinstance(item, str):
            if not storable(item):
                return {"loc": where, "msg": "a string holds a NUL character or an unpaired surrogate",
                        "type": "text_unstorable"}
        elif isinstance(item, NotJsonNumber) or (isinstance(item, float) and not math.isfinite(item)):
            return {"loc": where, "msg": f"{item!r} is not a number JSON can hold (finite, within a 64-bit float)",
                    "type": "number_not_json"}
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) >= _INT_BOUND:
            return {"loc": where, "msg": f"an integer of more than {JSON_MAX_INT_DIGITS} digits",
                    "type": "number_not_json"}
    return None


def storable(text: str) -> bool:
    """Text PostgreSQL's `text` and `jsonb` take: no NUL character, no unpaired surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def size(value: Any) -> int:
    """Bytes of a checked value as compact UTF-8 JSON."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _metadata(value: dict[str, Any]) -> dict[str, Any]:
    found = problem(value, [], max_depth=JSON_MAX_DEPTH)
    if found is not None:
        at = ".".join(map(str, found["loc"]))
        raise PydanticCustomError(found["type"], "{msg}" + (" (at {at})" if at else ""), {"msg": found["msg"], "at": at})
    if (n := size(value)) > METADATA_MAX_BYTES:
        raise PydanticCustomError("metadata_too_large", "metadata of {size} bytes as JSON, over the limit of {limit}",
                                  {"size": n, "limit": METADATA_MAX_BYTES})
    return value


Metadata = Annotated[dict[str, Any], AfterValidator(_metadata)]
"""An event's metadata: any JSON object JSON readers and PostgreSQL hold, at most JSON_MAX_DEPTH deep and
METADATA_MAX_BYTES long."""

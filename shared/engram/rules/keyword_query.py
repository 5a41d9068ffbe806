"""The keyword query syntax shared by the index adapters: terms, "exact phrase", field:value,
AND / OR / NOT, prefix*. Helpers here rewrite it for engines and degrade it safely when malformed."""

from __future__ import annotations

import re

QUERY_FIELDS = ("text", "speaker", "kind", "conversation")
_PREFIX = re.compile(r"(?<![\w:\"])(\w{2,})\*")
_AND_NOT = re.compile(r"\bAND\s+NOT\s+")
_NOT = re.compile(r"(^|\s)NOT\s+")
_SYNTAX = re.compile(r"[\"'()\[\]{}:^~*+\-!\\/]|\b(AND|OR|NOT)\b")


def split_prefixes(query: str) -> tuple[str, list[str]]:
    """The query without its `term*` prefixes, and the prefixes (lowercased)."""
    prefixes = [m.lower() for m in _PREFIX.findall(query)]
    return _PREFIX.sub(" ", query).strip(), prefixes


def negations_as_minus(query: str) -> str:
    """`a AND NOT b` and `a NOT b` as `a -b`, the form every Lucene-style parser accepts."""
    return _NOT.sub(r"\1-", _AND_NOT.sub("-", query))


def plain_terms(query: str) -> str:
    """The query's words with every operator and special character removed: the safe fallback."""
    return " ".join(_SYNTAX.sub(" ", query).split())

"""The keyword query syntax shared by the index adapters: terms, "exact phrase", field:value,
AND / OR / NOT, prefix*. Helpers here rewrite it for engines and degrade it safely when malformed."""

from __future__ import annotations

import math
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


_OPERATOR = re.compile(r"\"|\b(AND|OR|NOT)\b|(?<!\w)[-+](?=\w)|\w\*|\b(" + "|".join(QUERY_FIELDS) + r"):")
_NATURAL_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")  # letters and digits of any script


def has_syntax(query: str) -> bool:
    """Whether the query uses the syntax (a phrase, an operator, a field, a prefix, a required or excluded
    term) rather than being plain words, such as a question."""
    return bool(_OPERATOR.search(query))


def keyword_terms(query: str, stopwords: frozenset[str]) -> list[str]:
    """The words of a plain-language query worth matching: lowercased, possessives dropped ("Dana's" ->
    "dana"), stopwords and single letters removed, each once, in order."""
    terms: dict[str, None] = {}
    for word in _NATURAL_WORD.findall(query):
        word = re.sub(r"['’]s$", "", word.lower())
        if len(word) > 1 and word not in stopwords and "'" not in word and "’" not in word:
            terms[word] = None
    return list(terms)


def bm25_idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency (Lucene's form): ln(1 + (N - n + 0.5) / (n + 0.5))."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))

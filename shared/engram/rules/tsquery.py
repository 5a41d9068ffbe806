"""The keyword query syntax (terms, "exact phrase", field:value, AND / OR / NOT, +/-, prefix*, groups)
compiled to PostgreSQL tsquery text, for the full-text keyword index.

Clauses combine as Lucene's query parser combines them (so the three keyword adapters agree): a bare
clause is optional, `+x` and both sides of `AND` are required, `-x` and `NOT x` are excluded; when a
group has required clauses its optional ones only rank. Fields are tsvector weights: text A, speaker B,
kind C, conversation D; a clause with no field searches text and speaker. Every operand is a quoted
literal that `to_tsquery` normalizes with the index's own text-search configuration, so nothing in the
user's text can reach the tsquery grammar. Malformed syntax degrades to the plain words, OR'ed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.rules.keyword_query import plain_terms

FIELD_WEIGHTS = {"text": "A", "speaker": "B", "kind": "C", "conversation": "D"}
DEFAULT_WEIGHTS = ("A", "B")  # text and speaker, the fields a bare clause searches
_TOKEN = re.compile(r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<modifier>[+\-!])(?=\S)|'
                    r'(?:(?P<field>\w+):)?(?:"(?P<phrase>[^"]*)"|(?P<group>\()|(?P<word>[^\s()"]+)))')
_UNSAFE = re.compile(r"[\\^~\[\]{}:/!*]")


class QuerySyntaxError(ValueError):
    """The query does not follow the syntax (an unbalanced quote or parenthesis)."""


@dataclass(frozen=True)
class CompiledQuery:
    """`match` decides which documents match; `positive` (every positive operand, OR'ed) ranks and
    highlights them, so excluded words are never marked and optional ones still count."""

    match: str
    positive: str


def compile_query(query: str) -> CompiledQuery | None:
    """The query as tsquery text, or None when nothing in it can match (empty, or only exclusions)."""
    try:
        parsed = _Parser(query).parse()
    except QuerySyntaxError:
        words = plain_terms(query)
        parsed = _Parser(words).parse() if words else None
    if parsed is None:
        return None
    match, positives = parsed
    return CompiledQuery(match=match, positive=" | ".join(dict.fromkeys(positives)))


def _joined(operator: str, operands: list[str]) -> str | None:
    """Operands joined by a tsquery operator, parenthesized so that they nest safely."""
    if len(operands) <= 1:
        return operands[0] if operands else None
    return "(" + operator.join(operands) + ")"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _operand(value: str, weights: tuple[str, ...], *, prefix: bool = False, phrase: bool = False) -> str | None:
    """One quoted operand restricted to the fields' weights. A phrase is matched inside one field at a
    time: tsvectors of concatenated fields are adjacent, and a phrase must not span two of them."""
    value = " ".join(_UNSAFE.sub(" ", value).split())
    if not value:
        return None
    if phrase and " " in value and len(weights) > 1:
        return "(" + " | ".join(f"{_literal(value)}:{w}" for w in weights) + ")"
    return f"{_literal(value)}:{'*' if prefix else ''}{''.join(weights)}"


class _Parser:
    def __init__(self, query: str) -> None:
        if query.count('"') % 2:
            raise QuerySyntaxError("unbalanced quote")
        self.tokens = [m for m in _TOKEN.finditer(query) if m.group(0).strip()]
        self.pos = 0
        self.positives: list[str] = []

    def parse(self) -> tuple[str, list[str]] | None:
        match = self._group(DEFAULT_WEIGHTS, negated=False)
        if self.pos != len(self.tokens):
            raise QuerySyntaxError("unbalanced parenthesis")
        return None if match is None else (match, self.positives)

    def _group(self, weights: tuple[str, ...], *, negated: bool) -> str | None:
        """Clauses up to a closing parenthesis (not consumed), combined by their occurrence."""
        clauses: list[list[str]] = []  # [occur, operand]; occur: "must", "should" or "not"
        conjoin_next = False
        while self.pos < len(self.tokens) and not self.tokens[self.pos].group("close"):
            token: re.Match[str] | None = self._next()
            assert token is not None
            operator = None if token.group("field") else token.group("word")
            if operator in ("AND", "&&"):
                if clauses and clauses[-1][0] == "should":
                    clauses[-1][0] = "must"
                conjoin_next = True
                continue
            if operator in ("OR", "||"):
                continue
            occur = "must" if conjoin_next else "should"
            conjoin_next = False
            if operator == "NOT" or token.group("modifier"):
                occur = "must" if token.group("modifier") == "+" else "not"
                token = self._next()
            operand = None if token is None else self._clause(token, weights, negated=negated or occur == "not")
            if operand is not None:
                clauses.append([occur, operand])
        musts = [o for occur, o in clauses if occur == "must"]
        shoulds = [o for occur, o in clauses if occur == "should"]
        nots = [o for occur, o in clauses if occur == "not"]
        positive = _joined(" & ", musts) if musts else _joined(" | ", shoulds)
        if positive is None:
            return None  # exclusions alone match nothing, as in Lucene
        return _joined(" & ", [positive, *(f"!{n}" for n in nots)])

    def _next(self) -> re.Match[str] | None:
        if self.pos >= len(self.tokens) or self.tokens[self.pos].group("close"):
            return None
        self.pos += 1
        return self.tokens[self.pos - 1]

    def _clause(self, token: re.Match[str], weights: tuple[str, ...], *, negated: bool) -> str | None:
        field = (token.group("field") or "").lower()
        if field in FIELD_WEIGHTS:  # an unknown field is no field: its value is searched as a word
            weights = (FIELD_WEIGHTS[field],)
        if token.group("open") or token.group("group"):
            inner = self._group(weights, negated=negated)
            if self.pos >= len(self.tokens) or not self.tokens[self.pos].group("close"):
                raise QuerySyntaxError("unbalanced parenthesis")
            self.pos += 1
            return inner
        phrase = token.group("phrase")
        if phrase is not None:
            operand = _operand(phrase, weights, phrase=True)
        else:
            word = token.group("word") or ""
            prefix = word.endswith("*") and len(word.rstrip("*")) >= 2
            operand = _operand(word, weights, prefix=prefix)
        if operand is not None and not negated:
            self.positives.append(operand)
        return operand

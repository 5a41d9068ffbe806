"""Query classification: how a query reads decides how much each brain counts (L-gent's rules).

By default L-gent's own rules, in its order: an exact name (one capitalised word, maybe `_v2`), a type
query (`->`, `input:` or `output:`), a relationship (depends, compatible or implements anywhere in it),
otherwise semantic intent. A world may read conversational questions instead (`query_classifier`:
"conversational"): a name span, a relationship, a type query (things of a kind), temporal (when, how long,
dates), otherwise semantic. The brain weights of each intent are heuristics (`fusion_weights`).
"""

from __future__ import annotations

import re
from typing import Literal

from engram.rules.text import STOPWORDS

QueryClass = Literal["exact_name", "relationship", "type", "temporal", "semantic"]
QUERY_CLASSES: tuple[QueryClass, ...] = ("exact_name", "relationship", "type", "temporal", "semantic")

_RELATION_WORDS = (r"friend|friends|boss|manager|wife|husband|partner|sister|brother|mother|father|mom|dad|son|"
                   r"daughter|colleague|colleagues|client|customer|neighbou?r|cousin|aunt|uncle|girlfriend|boyfriend|"
                   r"parents?|kids?|children|family|team|coworkers?|mentor")
_RELATIONSHIP = re.compile(
    r"\b(relat(?:ed|ion|ionship|ionships)|connect(?:ed|ion|ions)|know each other|linked|in common|"
    r"between .+ and|works? (?:with|for)|married|dating)\b"
    rf"|\b(?:who|whom) (?:is|are|was|were) \w+(?:'s|s') (?:{_RELATION_WORDS})\b"
    rf"|\b\w+(?:'s|s') (?:{_RELATION_WORDS})\b", re.I)
_TYPE = re.compile(
    r"^\s*(?:list|show|name|find)\b(?: me)?(?: all| every)?"
    r"|\b(?:which|what) (?:kinds? of |types? of |sorts? of )?(?:people|persons|places|cities|countries|companies|"
    r"organi[sz]ations|projects|products|teams|events|books|movies|pets|tools|things)\b"
    r"|\ball (?:the )?(?:people|places|companies|organi[sz]ations|projects|products)\b", re.I)
_TEMPORAL = re.compile(
    r"\b(when|what time|what date|which (?:day|date|month|year|week)|how long|how often|since when|until|"
    r"before|after|during|ago|yesterday|today|tomorrow|last (?:week|month|year|night|time)|next (?:week|month|year)|"
    r"recently|latest|first time|january|february|march|april|june|july|august|september|october|november|"
    r"december|(?:19|20)\d\d)\b", re.I)
_WORD = re.compile(r"[\w'-]+")
_NAME_SPAN = re.compile(r"^\s*\"?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,3}\"?\s*\??\s*$")


# L-gent's rules, verbatim: the exact-name pattern, the type-signature markers, the relationship keywords.
EXACT_NAME = re.compile(r"^[A-Z][a-zA-Z]*(_v\d+)?$")
TYPE_MARKERS = ("->", "input:", "output:")
RELATIONSHIP_KEYWORDS = ("depends", "compatible", "implements")


def classify_query(query: str, rules: Literal["lgent", "conversational"] = "lgent") -> QueryClass:
    """The query's intent, by rules (no model call): L-gent's, or engram's conversational reading."""
    if rules == "conversational":
        return _conversational(query)
    if EXACT_NAME.match(query):
        return "exact_name"
    if any(marker in query for marker in TYPE_MARKERS):
        return "type"
    if any(keyword in query.lower() for keyword in RELATIONSHIP_KEYWORDS):
        return "relationship"
    return "semantic"


def _conversational(query: str) -> QueryClass:
    """A name span, a relationship, things of a kind, a time, else a meaning: questions about a conversation."""
    stripped = query.strip()
    words = [w for w in _WORD.findall(stripped) if w.lower() not in STOPWORDS]
    if stripped and (_NAME_SPAN.match(stripped) or (stripped.startswith('"') and stripped.endswith('"')
                                                     and len(words) <= 4)):
        return "exact_name"
    if _RELATIONSHIP.search(stripped):
        return "relationship"
    if _TYPE.search(stripped):
        return "type"
    if _TEMPORAL.search(stripped):
        return "temporal"
    return "semantic"

"""What a sentence's word stands for when the word itself is not the answer.

A question's words often meet a sentence at a word that only points at the answer: a relative pronoun ("the
movie script THAT I contributed to": what was contributed to is the script), a pronoun object shared with an
earlier verb ("I made vegan ice cream and shared IT": what was shared is the ice cream), a copula's complement
("This necklace is ... a GIFT from my grandma": the gift is the necklace), a noun whose purpose hangs on its
verb ("had an AUDITION yesterday for a writing gig"), or an image a turn shares ("[image: a photo of a bookcase
filled with dvds]": what the photo shows). Each function returns the token (or text) that is the answer's
head, or None when the sentence gives nothing more."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engram.rules.text import content_terms

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_RELATIVE = frozenset({"that", "which", "who", "whom", "what"})
_OBJECT = frozenset({"dobj", "obj", "attr", "oprd"})
_COPULA = frozenset({"be", "become"})
# An image a turn shares, as the conversation records it: "[image: a photo of a bowl of soup]".
_CAPTION = re.compile(r"\[image:\s*(?:an?\s+)?(?:photo|photograph|photography|picture|image|pic)\s+of\s+"
                      r"(?:an?\s+|the\s+)?([^\]]+)\]", re.I)
_SHOWING = frozenset(content_terms("photo photograph photography picture pic image snapshot"))


def relative_head(verb: Token) -> Token | None:
    """The noun a relative clause's verb describes when that noun is the verb's own object: "Another movie
    script that I contributed to" -> "script"; None when the verb has an object of its own after it."""
    if verb.dep_ != "relcl" or verb.head.pos_ not in ("NOUN", "PROPN"):
        return None
    own = [c for c in verb.children if c.dep_ in _OBJECT and c.lower_ not in _RELATIVE and c.i > verb.i]
    own += [g for c in verb.children if c.dep_ == "prep" for g in c.children
            if g.dep_ == "pobj" and g.lower_ not in _RELATIVE and g.i > verb.i]
    return None if own else verb.head


def shared_object(verb: Token) -> Token | None:
    """The object an earlier verb names when this one takes it again by a pronoun: "I made vegan ice cream and
    shared it" -> "cream" for "shared"; None otherwise."""
    if verb.dep_ != "conj":
        return None
    said = [c for c in verb.children if c.dep_ in ("dobj", "obj")]
    if not said or said[0].pos_ != "PRON":
        return None
    first = [c for c in verb.head.children if c.dep_ in ("dobj", "obj") and c.pos_ in ("NOUN", "PROPN")]
    return first[0] if first else None


def takes_object_pronoun(verb: Token) -> bool:
    """Whether a verb's direct object is a pronoun ("shared it"): what it did is said elsewhere, not by the
    verb's prepositional phrases ("with some people")."""
    return any(c.dep_ in ("dobj", "obj") and c.pos_ == "PRON" for c in verb.children)


def copula_subject(noun: Token) -> Token | None:
    """The subject a copula ("be", "become") says is the noun, or the noun it stands in apposition to: "This
    necklace is ... a gift from my grandma" -> "necklace" for "gift"; "rock climbing, such a great sport" ->
    "climbing" for "sport"; None when the subject is a pronoun or there is no copula."""
    if noun.dep_ == "appos" and noun.head.pos_ in ("NOUN", "PROPN"):
        return noun.head
    before = noun.doc[noun.left_edge.i - 2:noun.left_edge.i] if noun.left_edge.i >= 2 else None
    if before is not None and before[1].text == "," and before[0].pos_ in ("NOUN", "PROPN") and noun.dep_ in (
            "npadvmod", "appos", "attr"):
        return before[0]  # "rock climbing, such a great sport": an apposition the parse hung on the verb
    if noun.dep_ not in ("attr", "appos") or noun.head.lemma_ not in _COPULA:
        return None
    subject = [c for c in noun.head.children if c.dep_ in ("nsubj", "nsubjpass") and c.pos_ in ("NOUN", "PROPN")]
    return subject[0] if subject else None


def verb_purpose(noun: Token) -> Token | None:
    """What a verb's object is for or about, when the parse hangs the preposition on the verb: "had an audition
    yesterday for a writing gig" -> "gig" for "audition"."""
    if noun.dep_ not in ("dobj", "obj") or noun.head.pos_ not in ("VERB", "AUX"):
        return None
    for child in noun.head.children:
        if child.dep_ == "prep" and child.i > noun.i and child.lower_ in ("for", "about", "of", "on"):
            heads = [g for g in child.children if g.dep_ == "pobj" and g.pos_ in ("NOUN", "PROPN")]
            if heads:
                return heads[0]
    return None


def asks_what_is_shown(terms: frozenset[str], kind: frozenset[str] = frozenset()) -> bool:
    """Whether a question asks what a shared image shows ("What did Nate share a photo of..."), not a kind of
    thing in it ("What ingredients are in the dessert he shared a photo of")."""
    return bool(terms & _SHOWING) and not kind - _SHOWING


def shown(doc: Doc) -> str | None:
    """What the turn's shared image shows: "[image: a photo of a bookcase filled with dvds]" -> "bookcase filled
    with dvds"; None when the turn shares no image."""
    found = _CAPTION.search(doc.text)
    return found.group(1).strip(" .") if found else None


def only_praised(sent: Span, found: str, kind: frozenset[str], said: frozenset[str]) -> bool:
    """Whether a phrase is the kind asked for with only adjectives added ("a tasty meal", "a new TV series"
    asked which meal or series): it names the kind, not one of it."""
    terms = content_terms(found)
    if not kind or not terms & kind:
        return False
    adjectives = {t for w in sent if w.pos_ == "ADJ" for t in content_terms(w.text)}
    return terms - said - kind <= adjectives

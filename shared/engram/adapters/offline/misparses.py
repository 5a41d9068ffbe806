"""How the small parser misreads sentences about people it does not know, and the readings that repair them: a
name hung on its verb as a modifier ("Ilse works at ...": "Ilse" an amod), "lives" read as a noun after an
unknown name (the sentence parsed again with a pronoun for the name), "..., not at B" taken for the verb's
negation, and a place name labelled a date ("living in Winnipeg")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.adapters.offline.lexicon import CANONICAL, CANONICAL_NAMES, PERSON_PREDICATES, PERSON_VERBS
from engram.adapters.offline.phrases import Party, entity_of, name_of
from engram.adapters.offline.statements import Statement

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_CALENDAR = frozenset({"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "mon",
                       "tue", "wed", "thu", "fri", "sat", "sun", "chr", "eas", "tha", "hal", "new", "tod", "tom",
                       "yes", "ton"})


def reparsed(sent: Span, read: Callable[[Span], list[Statement]]) -> list[Statement]:
    """A sentence the small parser broke on an unknown name ("Oyelaran Sorensen lives in Tallinn": "lives" read
    as a noun), parsed again with a pronoun for the name and read by `read`; what it says of the pronoun is
    said of the name (only what people do, as for a bare name: the name may be no person's at all)."""
    tokens = list(sent)
    for k, token in enumerate(tokens[:-1]):
        after = tokens[k + 1]
        if not (token.is_title and token.pos_ in ("PROPN", "NOUN", "ADJ") and len(token) > 2 and after.is_alpha
                and after.is_lower and after.lower_.endswith(("s", "ed")) and after.pos_ != "VERB"):
            continue
        if token.pos_ != "PROPN" and not (k == 0 or entity_of(token) is not None):
            return []
        name = name_of(token) or Party(token.text, None, True)
        from engram.adapters.spacy_engine import shared_engine  # the one pipeline; imported late, parsed rarely

        again = shared_engine().doc("She " + sent.doc[after.i:sent.end].text)
        said = [st for s in again.sents for st in read(s) if st.subject == "she" and st.predicate in CANONICAL_NAMES]
        return [replace(st, subject=name.text, subject_type="person") for st in said]
    return []


def misparsed_subject(verb: Token) -> Token | None:
    """A name the small parser hung on its verb as a modifier ("Ilse works at ...": "Ilse" an amod of "works";
    "..., Kalani works at ...": a compound): a capitalised word right before a verb in the present or past,
    with nothing else between them but adverbs ("Ilse now lives in Krakow")."""
    if verb.tag_ not in ("VBZ", "VBD"):
        return None
    for child in verb.lefts:
        if child.dep_ in ("amod", "compound", "nmod", "npadvmod") and child.is_title and child.pos_ in (
                "PROPN", "ADJ", "NOUN") and all(t.pos_ == "ADV" for t in verb.doc[child.i + 1:verb.i]):
            return child
    return None


def own_subject(verb: Token) -> bool:
    """Whether a verb has its own subject (a joined clause without one shares its head's negation)."""
    return any(c.dep_ in ("nsubj", "nsubjpass") for c in verb.children) or misparsed_subject(verb) is not None


def contrast(verb: Token) -> list[int]:
    """Where "..., not" stands after a verb's first object ("works at Pinecrest, not at Kestrel"): it denies what
    follows it, not the verb."""
    return [t.i for t in verb.subtree if t.dep_ == "neg" and t.i > verb.i + 1 and verb.doc[t.i - 1].text == ","]


def misdated(token: Token) -> bool:
    """A lone capitalised word the small model labelled a date that says no time: no digit, month or weekday."""
    ent = entity_of(token)
    return (token.pos_ == "PROPN" and token.is_title and ent is not None and ent.label_ in ("DATE", "TIME")
            and len(ent) == 1 and token.lower_[:3] not in _CALENDAR)


def denied_phrase(prep: Token, contrasted: list[int]) -> bool:
    """Whether a verb's prepositional phrase is said against the rest: after its "..., not" (`contrasted`), with
    its own "not" ("not at Kestrel"), or "rather than B", "instead of B"."""
    before = prep.doc[prep.i - 1].lower_ if prep.i > 0 else ""
    return (any(i < prep.i for i in contrasted) or any(g.dep_ == "neg" for g in prep.children)
            or (prep.lower_, before) in (("than", "rather"), ("of", "instead")))


def denied_preposition(verb: Token, verb_name: str, prep: Token) -> str:
    """The preposition a denied phrase stands for: "works at A rather than B" denies working at B."""
    if (verb_name, prep.lower_) in CANONICAL:
        return prep.lower_
    return next((c.lower_ for c in verb.children if c.dep_ == "prep" and c.i < prep.i
                 and (verb_name, c.lower_) in CANONICAL), prep.lower_)


def typed_by_verb(subject: Party, *, predicate: str | None = None, lemma: str | None = None) -> Party:
    """A named subject of what only people do (work, live, marry: "Kalani works at ...") is a person, whatever
    entity label the small model gave the name."""
    if subject.is_entity and (predicate in PERSON_PREDICATES or lemma in PERSON_VERBS):
        return Party(subject.text, "person", True)
    return subject

"""Extraction by dependency parse and named entities: the offline model's reading of what a turn states.

For every asserted clause of a sentence (not a question, a condition, a wish or a "would"), the subject (the
speaker, a named entity, or a pronoun or "my sister" that coreference settles), the verb and each object or
prepositional object become a statement: "Kalani lives in Cork" (lives_in), "I work at Acme as an engineer"
(works_at, works_as), "we adopted a dog" (adopted). Copulas ("Ana is a nurse", "Tom is Priya's brother",
"My name is Dana", "I'm 26"), appositions ("Dee, my sister,", "my sister Ana"), relative clauses ("Acme, where
I work") and pets ("a dog named Rex") have their own readings. A negated clause ("no longer", "not") is a
negated statement, never a positive one; "Porto, not Lisbon" states Porto and denies Lisbon.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.adapters.offline.lexicon import (
    CANONICAL,
    CANONICAL_NAMES,
    DEGREE,
    ENDING,
    ENTITY_PREDICATES,
    JOB_VERBS,
    LIGHT_VERBS,
    NAMED_ONLY,
    OBJECT_TYPES,
    OWN_NOUNS,
    STANCES,
)
from engram.adapters.offline.misparses import (
    contrast,
    denied_phrase,
    denied_preposition,
    misdated,
    misparsed_subject,
    own_subject,
    reparsed,
    typed_by_verb,
)
from engram.adapters.offline.phrases import (
    PETS,
    Party,
    entity_of,
    is_occupation,
    is_time,
    name_of,
    negated,
    object_of,
    owner,
    phrase,
    relation_word,
    subject_of,
)
from engram.adapters.offline.sentences import assertion, is_question, misread, told
from engram.adapters.offline.statements import SELF, Statement, statements
from engram.rules.grounding import without_dates

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

def understand(doc: Doc) -> list[Statement]:
    """Every statement a parsed utterance makes, in order, each once; questions state nothing."""
    out: list[Statement] = []
    for sent in doc.sents:
        if is_question(sent) and not told(sent):
            continue
        _, when = without_dates(sent.text)
        if sent.root.pos_ not in ("VERB", "AUX") and any(t.tag_ in ("VBZ", "VBD", "VBP") for t in sent):
            out += statements(sent.text)  # a verb the parse missed ("Greta prefers tea" as one noun): the patterns
            continue
        read = _sentence(sent)
        if not any(st.predicate in CANONICAL_NAMES for st in read):
            read += reparsed(sent, _sentence)
        parsed = [replace(st, when=when) for st in read]
        # The small parser misreads some sentences ("My name is Rui and I live in Lisbon" as "Rui and I live"): a
        # first-person pattern's statement joins where the parse said nothing of the speaker under that predicate.
        if misread(sent):
            said = {(st.subject, st.predicate) for st in parsed}
            parsed += [st for st in statements(sent.text)
                       if st.subject == SELF and not st.negated and (st.subject, st.predicate) not in said]
        out += parsed
    seen: set[tuple[str, str, str, bool]] = set()
    unique = []
    for s in out:
        s = replace(s, predicate=re.sub(r"[^a-z0-9]+", "_", s.predicate.lower()).strip("_"))
        key = (s.subject, s.predicate, s.object.lower(), s.negated)
        # What the triple's fields allow: a predicate of letters and digits, bounded names and values.
        if (s.object and s.subject and key not in seen and s.predicate[:1].isalpha() and len(s.predicate) <= 80
                and len(s.subject) <= 200 and len(s.object) <= 500):
            seen.add(key)
            unique.append(s)
    return unique


def unread_clauses(doc: Doc, statements: Sequence[Statement]) -> int:
    """Asserted clauses about the speaker or a named entity, with an object, that gave no statement: what a
    model would read better (the engine-first wrapper sends their windows to it)."""
    if statements:
        return 0
    count = 0
    for sent in doc.sents:
        if is_question(sent):
            continue
        for verb in sent:
            if verb.pos_ != "VERB" or assertion(verb) is None:
                continue
            subject = _subject_token(verb)
            party = subject_of(subject) if subject is not None else None
            if party is None or (party.text not in (SELF,) and party.type is None):
                continue
            objects = [o for c in verb.children if c.dep_ in ("dobj", "attr", "oprd", "prep")
                       for o in ([c] if c.dep_ != "prep" else [g for g in c.children if g.dep_ == "pobj"])]
            if any(o.pos_ in ("NOUN", "PROPN") for o in objects):
                count += 1
    return count


def _sentence(sent: Span) -> list[Statement]:
    found: list[Statement] = []
    for token in sent:
        if token.pos_ in ("VERB", "AUX") and (token.pos_ == "VERB" or token.dep_ in ("ROOT", "conj", "ccomp")):
            found += _clause(token)
        if token.pos_ in ("NOUN", "PROPN"):
            found += _apposition(token)
    return found


def _subject_token(verb: Token) -> Token | None:
    for _ in range(6):
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
        # "My old friend Ana Lee lives ...": the parse may give both the noun and the name as subjects.
        for child in sorted(subjects, key=lambda c: c.pos_ != "PROPN") if len(subjects) > 1 else subjects:
            if child.lower_ in ("who", "that", "which") and verb.dep_ == "relcl":
                return verb.head
            return child
        misparsed = misparsed_subject(verb)
        if misparsed is not None:
            return misparsed
        if verb.dep_ in ("conj", "xcomp") and verb.head.pos_ in ("VERB", "AUX"):
            verb = verb.head
        else:
            return None
    return None


def _ended(verb: Token) -> bool:
    """"I stopped working at Acme": the clause ends, like a negation."""
    return verb.dep_ == "xcomp" and verb.head.lemma_.lower() in ENDING


def _statement(subject: Party, predicate: str, obj: Party, confidence: float, *, negative: bool = False,
               entity: bool | None = None) -> Statement:
    # Second-hand: 0.7 where the speaker's own would be 0.9; the speaker knows their own relations best.
    third = 1.0 if SELF in (subject.text, obj.text) else 7 / 9
    subject = typed_by_verb(subject, predicate=predicate)
    # The predicate says what its object is where the small pipeline's entity labels waver ("in Cork": ORG).
    object_type = OBJECT_TYPES.get(predicate, "person" if predicate.endswith("_of") and obj.is_entity else obj.type)
    return Statement(subject.text, predicate, obj.text,
                     obj.is_entity if entity is None else entity, round(min(1.0, confidence * third), 3),
                     subject_type=subject.type, object_type=object_type, negated=negative)


def _with_conjuncts(token: Token, denied: bool = False) -> Iterable[tuple[Token, bool]]:
    """An object and the objects joined to it ("jazz and blues"), each with whether it is denied ("not rock";
    in "Porto, not Lisbon" the parse hangs the "not" on Porto, before Lisbon)."""
    nots = [c.i for c in token.children if c.dep_ == "neg"]
    yield token, denied or any(i < token.i for i in nots)
    within = entity_of(token)
    for child in token.children:
        if within is not None and within.start <= child.i < within.end:
            continue  # "Harbor & Vale": one name, not two objects
        if child.dep_ in ("conj", "appos") and child.pos_ in ("NOUN", "PROPN", "NUM"):
            yield from _with_conjuncts(child, any(token.i < i < child.i for i in nots))
        elif child.dep_ == "prep" and any(token.i < i < child.i for i in nots):  # "Pinecrest, not at Kestrel"
            for denied_object in (g for g in child.children if g.dep_ == "pobj" and g.pos_ in ("NOUN", "PROPN")):
                yield denied_object, True


def _clause(verb: Token) -> list[Statement]:
    gate = assertion(verb)
    subject_token = _subject_token(verb)
    if gate is None or subject_token is None:
        return []
    subject = subject_of(subject_token)
    bare = subject is None and _bare_name(subject_token)
    if bare:
        subject = Party(subject_token.text, None, True)
    lemma = verb.lemma_.lower()
    if lemma == "be" and verb.pos_ == "AUX":
        return _copula(verb, subject_token, subject, gate, negated(verb))
    if subject is None:
        return []
    subject = typed_by_verb(subject, lemma=lemma)
    contrasted = contrast(verb)
    negative = negated(verb, contrasted) or _ended(verb) or (
        verb.dep_ == "conj" and negated(verb.head, contrast(verb.head)) and not own_subject(verb))
    if lemma == "stand" and negative and any(c.lower_ in ("ca", "can", "could") for c in verb.children):
        lemma, negative = "dislike", False  # "I can't stand crowds"
    particle = "_".join(c.lower_ for c in verb.children if c.dep_ == "prt")
    verb_name = f"{lemma}_{particle}" if particle else lemma
    if lemma in ("call", "name") and verb.dep_ != "xcomp":
        return _called(verb, subject_token, gate, negative)
    found: list[Statement] = []
    prepositional: list[Statement] = []
    habit = next((c.lower_ for c in verb.children if c.lower_ in ("always", "never")), None)
    for child in verb.children:
        if child.dep_ in ("dobj", "oprd"):
            found += _objects(subject, verb_name, None, child, gate, negative, habit)
        elif child.dep_ == "xcomp" and child.pos_ in ("VERB", "NOUN") and CANONICAL.get((verb_name, None)) in STANCES:
            activity = " ".join(t.text for t in child.subtree if t.dep_ != "aux" and not t.is_punct)
            found.append(_statement(subject, CANONICAL[(verb_name, None)], Party(activity, None, False), 0.9 * gate,
                                    negative=negative))  # "I love hiking", "I like to swim"
        elif child.dep_ == "prep":
            objects = [c for c in child.children if c.dep_ == "pobj"]
            if not objects and verb.dep_ == "relcl":
                objects = [_stand_in(verb.head)]  # "the company I work for"
            denied = denied_phrase(child, contrasted)
            preposition = denied_preposition(verb, verb_name, child) if denied else child.lower_
            for obj in objects:
                prepositional += _objects(subject, verb_name, preposition, obj, gate, negative or denied, habit)
    if verb.dep_ == "relcl" and any(c.lower_ == "where" for c in verb.children):
        preposition = "at" if lemma == "work" else "in"  # "the office where I work": works_at the office
        prepositional += _objects(subject, verb_name, preposition, _stand_in(verb.head), gate, negative, habit)
    # A clause's fact is its canonical reading, else its direct object: other prepositional phrases only say
    # where or how ("I live in Porto, by the river", "I bought a house in Lisbon").
    canonical = [s for s in [*found, *prepositional] if s.predicate in CANONICAL_NAMES]
    found = canonical or found or prepositional
    if habit is not None and not found and not negative:
        what = " ".join(t.text for t in verb.subtree if t.i >= verb.i and not t.is_punct and not is_time(t))
        found.append(_statement(subject, habit, Party(what, None, False), 0.85))
    return [s for s in found if s.predicate in CANONICAL_NAMES] if bare else found


def _bare_name(token: Token) -> bool:
    """A capitalised word alone as a subject, which the small pipeline did not tag as a name ("Amara prefers
    tea"): read as a name only for what people do (the canonical predicates), never for any verb."""
    return (token.is_title and token.pos_ in ("NOUN", "ADJ", "PROPN") and (
        token.dep_ == "nsubj" or getattr(misparsed_subject(token.head), "i", None) == token.i)
            and not any(True for _ in token.children) and len(token.text) > 2)


def _stand_in(noun: Token) -> Token:
    """What a relative clause's noun stands for: "The company I work for is Globex" -> Globex."""
    if noun.dep_ in ("nsubj", "nsubjpass") and noun.head.lemma_ == "be":
        attr = next((c for c in noun.head.children if c.dep_ == "attr"), None)
        if attr is not None:
            return attr
    return noun


def _objects(subject: Party, verb_name: str, preposition: str | None, token: Token, gate: float, negative: bool,
             habit: str | None) -> list[Statement]:
    canonical = CANONICAL.get((verb_name, preposition))
    if preposition is None and canonical is None:
        named = _pet(subject, token, gate, negative)  # "I have a dog named Rex", "we adopted a cat called Pixel"
        if named:
            return named
    if preposition is None and token.lemma_.lower() in ("job", "position", "internship") and verb_name in JOB_VERBS:
        return _job(subject, verb_name, token, gate, negative)
    if canonical is None and (verb_name in LIGHT_VERBS or habit is not None):
        return []
    if habit == "never" and canonical is not None:
        negative = True
    predicate = canonical or (f"{verb_name}_{preposition}" if preposition else verb_name)
    found = []
    for obj_token, denied in _with_conjuncts(token):
        obj = object_of(obj_token)
        if obj is None and canonical in ("lives_in", "works_at") and misdated(obj_token):
            obj = Party(obj_token.text, None, True)
        if obj is None or obj.text == subject.text:
            continue
        if canonical in NAMED_ONLY and not ((obj.is_entity and obj_token.pos_ == "PROPN") or name_of(obj_token)):
            continue  # "I married a lesbian" names no spouse
        if canonical in ("works_at", "lives_in") and not obj.is_entity and not _plain_place(obj_token):
            continue  # "at that massage place", "at being the most talented chef"
        entity = True if canonical in ENTITY_PREDICATES else None
        confidence = (0.9 if canonical else 0.75) * gate
        found.append(_statement(subject, predicate, obj, confidence, negative=negative or denied, entity=entity))
    return found


def _job(subject: Party, verb_name: str, job: Token, gate: float, negative: bool) -> list[Statement]:
    """"I got a job at Google" works there; "Amir quit his job at Stellar Foods" no longer does."""
    ended = JOB_VERBS[verb_name]
    return [_statement(subject, "works_at", place, 0.85 * gate, negative=negative or ended, entity=True)
            for prep in [*job.children, *job.head.children]  # "quit his job at X": the parse may hang "at" on quit
            if prep.dep_ == "prep" and prep.lower_ in ("at", "with", "for")
            for place in (name_of(c) for c in prep.children if c.dep_ == "pobj") if place is not None]


def _plain_place(noun: Token) -> bool:
    """"a hospital", "the bakery": a common noun for a place or employer, with an article and nothing else."""
    if noun.pos_ != "NOUN":
        return False
    kids = list(noun.children)
    return any(c.dep_ == "det" and c.lower_ in ("a", "an", "the") for c in kids) and all(
        c.dep_ in ("det", "compound", "prep") for c in kids)


def _pet(subject: Party, token: Token, gate: float, negative: bool) -> list[Statement]:
    """"I have a dog named Rex": has_dog Rex; "I have a sister named Ana": Ana sister_of me."""
    for acl in token.children:
        if acl.dep_ == "acl" and acl.lemma_.lower() in ("name", "call"):
            for named in acl.children:
                party = name_of(named) if named.dep_ in ("oprd", "attr", "dobj") else None
                if party is None:
                    continue
                relation = relation_word(token)
                if relation is not None and token.lemma_.lower() not in PETS:
                    return [_statement(Party(party.text, "person", True), f"{relation}_of", subject, 0.9 * gate,
                                       negative=negative, entity=True)]
                return [_statement(subject, f"has_{token.lemma_.lower()}", Party(party.text, None, True), 0.9 * gate,
                                   negative=negative)]
    return []


def _called(verb: Token, subject_token: Token, gate: float, negative: bool) -> list[Statement]:
    """"My sister is called Ana", "my dog is named Rex": the relation or pet the name belongs to."""
    who = owner(subject_token)
    relation = relation_word(subject_token)
    named = next((name_of(c) for c in verb.children if c.dep_ in ("oprd", "attr") and name_of(c)), None)
    if who is None or relation is None or named is None:
        return []
    return _related(named, relation, subject_token, who, gate, negative)


def _related(name: Party, relation: str, noun: Token, who: Party, gate: float, negative: bool) -> list[Statement]:
    if noun.lemma_.lower() in PETS:
        return [_statement(who, f"has_{noun.lemma_.lower()}", Party(name.text, None, True), 0.9 * gate,
                           negative=negative)]
    person = Party(name.text, "person", True)
    return [_statement(person, f"{relation}_of", who, 0.9 * gate,
                       negative=negative, entity=True)]


def _copula(verb: Token, subject_token: Token, subject: Party | None, gate: float, negative: bool
            ) -> list[Statement]:
    found: list[Statement] = []
    for child in verb.children:
        if child.dep_ == "attr":
            found += _attribute(subject_token, subject, child, gate, negative)
        if subject is None:
            continue
        elif child.dep_ == "acomp" and child.lower_ == "old" and subject.type in ("person", None):
            number = next((t for t in child.subtree if t.pos_ == "NUM"), None)
            if number is not None:
                found.append(_statement(subject, "age", Party(number.text, None, False), 0.85 * gate,
                                        negative=negative))
        elif child.dep_ == "prep" and child.lower_ == "from":
            for obj in (c for c in child.children if c.dep_ == "pobj"):
                place = name_of(obj)
                if place is not None:
                    found.append(_statement(subject, "comes_from", place, 0.85 * gate, negative=negative))
        elif child.dep_ == "acomp" and child.lemma_.lower() == "married":
            for prep in (c for c in child.children if c.dep_ == "prep" and c.lower_ == "to"):
                for obj in (c for c in prep.children if c.dep_ == "pobj"):
                    spouse = name_of(obj)
                    if spouse is not None:
                        found.append(_statement(subject, "married_to", spouse, 0.9 * gate, negative=negative))
    return found


def _attribute(subject_token: Token, subject: Party | None, attr: Token, gate: float, negative: bool) -> list[Statement]:
    """What "X is Y" says: a relation ("Priya is my boss"), a name ("My name is Dana", "I'm Joey", "My sister
    is Ana"), an age ("I'm 26"), a kind ("Ana is a nurse")."""
    head = subject_token.lemma_.lower()
    who = owner(subject_token)
    named = name_of(attr)
    if who is not None and head == "name" and subject_token.tag_ == "NN" and named is not None:
        return [_statement(who, "name", Party(named.text, None, False), 0.9 * gate, negative=negative)]
    if (who is not None and head in ("favorite", "favourite")) or any(
            c.lower_ in ("favorite", "favourite") for c in subject_token.lefts):
        what = head if head not in ("favorite", "favourite") else "thing"
        if who is not None:
            obj = object_of(attr)
            return [] if obj is None else [_statement(who, f"favorite_{what}", Party(obj.text, obj.type, False),
                                                      0.9 * gate, negative=negative)]
    if who is not None and head in OWN_NOUNS and subject_token.pos_ == "NOUN":
        value = object_of(attr)
        predicate = OWN_NOUNS[head]
        entity = predicate in ENTITY_PREDICATES
        return [] if value is None else [_statement(who, predicate, value, 0.85 * gate, negative=negative,
                                                    entity=entity or value.is_entity)]
    relation = relation_word(subject_token)
    if who is not None and relation is not None and named is not None:
        return _related(named, relation, subject_token, who, gate, negative)  # "My boss is Priya"
    if subject is None or subject.text.startswith("my "):
        return []
    relation = relation_word(attr)
    attr_owner = owner(attr)
    if relation is not None and attr_owner is not None:
        return _related(subject, relation, attr, attr_owner, gate, negative)  # "Tom is Priya's brother"
    if named is not None and subject.text == SELF and named.type in ("person", None) and attr.pos_ == "PROPN" and not any(
            c.dep_ == "acomp" for c in attr.head.children):  # "I'm Joey", not "I'm tired today, Casey here"
        return [_statement(subject, "name", Party(named.text, None, False), 0.8 * gate, negative=negative)]
    if attr.pos_ == "NUM" and subject.type in ("person", None) and attr.like_num and attr.lower_ != "one" and not any(
            c.dep_ not in ("npadvmod", "amod", "advmod") for c in attr.children):
        return [_statement(subject, "age", Party(attr.text, None, False), 0.8 * gate, negative=negative)]
    if attr.pos_ == "NOUN" and is_occupation(attr) and any(
            c.dep_ in ("det", "poss") and c.lower_ in ("a", "an", "the", "their", "his", "her") for c in attr.children):
        work = [_statement(subject, "works_as", Party(_occupation(attr), None, False), 0.85 * gate,
                           negative=negative)]  # "Ana is a nurse", "I'm the new teacher"
        for prep in (c for c in attr.children if c.dep_ == "prep" and c.lower_ in ("at", "for", "with")):
            for place in (name_of(c) for c in prep.children if c.dep_ == "pobj"):
                if place is not None:  # "a nurse at St. Mary's"
                    work.append(_statement(subject, "works_at", place, 0.85 * gate, negative=negative))
        return work
    if attr.pos_ == "NOUN" and attr.lower_ not in DEGREE and any(
            c.dep_ == "det" and c.lower_ in ("a", "an") for c in attr.children):
        kind = phrase(attr)
        return [_statement(subject, "is_a", Party(kind, None, False), 0.8 * gate, negative=negative)] if kind else []
    return []


def _occupation(noun: Token) -> str:
    """The occupation without its qualities: "the new teacher" -> teacher, "casting director" kept."""
    words = [t for t in noun.lefts if t.dep_ == "compound" and t.pos_ == "NOUN"] + [noun]
    return " ".join(t.lower_ for t in words)


def _apposition(noun: Token) -> list[Statement]:
    """"Dee, my sister,", "my sister Ana", "my dog Rex", "Ana's brother Tom", "Dee, a nurse,"."""
    if negated(noun):
        return []
    relation, who = relation_word(noun), owner(noun)
    if who is None and noun.dep_ == "compound" and noun.head.pos_ == "PROPN":
        who = owner(noun.head)  # "my roommate Denise": the parse hangs "my" on the name
    name: Party | None = None
    if relation is not None and who is not None:
        if noun.dep_ == "appos" or (noun.dep_ == "compound" and noun.head.pos_ == "PROPN"):
            name = name_of(noun.head)
        for child in noun.children:
            if child.dep_ == "appos" and child.pos_ == "PROPN":
                name = name_of(child)
        if name is not None and name.text != who.text and name.type != "place":
            return _related(name, relation, noun, who, 1.0, False)
        return []
    if noun.dep_ == "appos" and noun.pos_ == "NOUN" and any(c.dep_ == "det" and c.lower_ in ("a", "an")
                                                             for c in noun.children):
        person = name_of(noun.head)
        if person is not None and person.type in ("person", None):
            return [_statement(person, "is_a", Party(phrase(noun), None, False), 0.8)]
    return []

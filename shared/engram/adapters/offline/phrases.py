"""Noun phrases of a spaCy parse as the offline model reads them: who a subject is (the speaker, a named entity,
a pronoun or "my sister" for coreference to settle), what an object says (a name, or a phrase without its
articles), and the entity type named-entity recognition gave it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.adapters.offline.statements import SELF
from engram.rules.mentions import RELATION_NOUNS

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

# spaCy's entity labels as the entity types triples carry; the rest (MONEY, CARDINAL...) name no entity.
ENTITY_TYPES = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
                "NORP": "thing", "PRODUCT": "thing", "WORK_OF_ART": "thing", "EVENT": "thing", "LANGUAGE": "thing"}
TIME_LABELS = frozenset({"DATE", "TIME"})
FIRST_PERSON = frozenset({"i", "me", "myself"})
# A pronoun subject is left for coreference (the resolve step's linked references); others are no one.
REFERRING_PRONOUNS = frozenset({"he", "she", "they"})
# Nouns that say how two people (or a person and a pet) are related: "my sister", "Priya's boss".
RELATIONS = frozenset({*RELATION_NOUNS, "mum", "mother", "parent", "parents", "kid", "child", "children", "baby",
                       "grandmother", "grandfather", "grandma", "grandpa", "granddaughter", "grandson", "aunt",
                       "uncle", "cousin", "niece", "nephew", "fiance", "fiancee", "fiancé", "fiancée", "spouse",
                       "roommate", "flatmate", "housemate", "coworker", "co-worker", "stepmother", "stepfather",
                       "stepsister", "stepbrother", "half-sister", "half-brother", "ex", "ex-wife", "ex-husband",
                       "ex-girlfriend", "ex-boyfriend", "mentor", "assistant", "agent", "lawyer", "therapist",
                       "dentist", "dog", "cat", "pet", "twin", "in-law", "mother-in-law", "father-in-law",
                       "sister-in-law", "brother-in-law", "daughter-in-law", "son-in-law", "godmother", "godfather"})
PETS = frozenset({"dog", "cat", "pet", "puppy", "kitten", "hamster", "parrot", "rabbit", "horse", "fish", "bird",
                  "turtle", "snake", "lizard", "monkey", "duck", "chick"})
# What people do for a living ("a nurse", "the new teacher"): "X is a nurse" says what X works as. Suffixes
# catch most of the rest (-ist, -ician, -ologist, -eer, -smith, -grapher, -ographer).
OCCUPATIONS = frozenset("""
accountant actor actress administrator agent analyst architect artist assistant astronaut athlete attorney
auditor author baker banker barber barista bartender biologist bookkeeper bouncer broker builder butcher
butler buyer captain caretaker carpenter cashier caterer ceo cfo chef chemist clerk coach columnist comedian
commander composer conductor consultant cook coordinator counselor courier curator dancer dealer dean
decorator dentist designer detective developer dietitian diplomat director doctor doorman driver economist
editor electrician engineer entrepreneur executive farmer firefighter fisherman florist founder gardener
geologist guard guide hairdresser historian host hostess housekeeper illustrator instructor intern
interpreter investigator janitor jeweler journalist judge lawyer lecturer librarian lifeguard lieutenant
lobbyist locksmith machinist maid manager mechanic mediator midwife miner minister model musician nanny
navigator negotiator novelist nurse officer operator optician painter paleontologist paralegal paramedic
pastor pharmacist photographer physician physicist pianist pilot plumber poet politician porter president
priest principal producer professor programmer psychiatrist psychologist publisher rabbi realtor
receptionist recruiter reporter researcher salesman saleswoman salesperson scientist screenwriter
secretary senator sergeant server sheriff singer soldier surgeon surveyor tailor teacher technician
therapist trainer translator tutor veterinarian vet waiter waitress welder writer masseuse masseur
stylist supervisor sommelier bodyguard cameraman stuntman mailman postman policeman policewoman
fireman nutritionist dermatologist pediatrician neurosurgeon cardiologist radiologist anesthesiologist
""".split())
_OCCUPATION_ENDINGS = ("ologist", "ician", "grapher", "smith", "eer")
_ARTICLES = frozenset({"a", "an", "the", "some", "any"})
_LEFT_OUT = frozenset({"relcl", "acl", "appos", "conj", "cc", "punct", "advcl", "neg", "prep", "mark", "predet",
                       "dep", "parataxis", "intj", "meta"})
_NOT_THINGS = frozenset({"it", "this", "that", "these", "those", "what", "which", "who", "something", "anything",
                         "everything", "nothing", "one", "thing", "stuff", "lot", "bit", "you", "yourself", "him",
                         "her", "them", "us", "we", "there", "here", "way", "time", "all", "both", "each", "thanks",
                         "please", "lol", "okay", "ok", "yes", "no", "idea", "god", "gosh", "man", "guy", "guys"})


@dataclass(frozen=True)
class Party:
    """A subject or object as read: its text (SELF for the speaker), type, and whether it names an entity."""

    text: str
    type: str | None
    is_entity: bool


def is_occupation(noun: Token) -> bool:
    """Whether a noun names an occupation ("nurse", "casting director", "neurologist")."""
    word = noun.lemma_.lower()
    return word in OCCUPATIONS or noun.lower_ in OCCUPATIONS or (len(word) > 6 and word.endswith(
        _OCCUPATION_ENDINGS)) or (len(word) > 5 and word.endswith("ist") and word not in _NOT_OCCUPATIONS)


_NOT_OCCUPATIONS = frozenset({"list", "wrist", "twist", "assist", "exist", "insist", "resist", "persist",
                              "racist", "sexist", "narcissist", "egoist", "tourist"})
# Words a speech transcript capitalises that name no one: "Oh", "Umm", "Hey".
_INTERJECTIONS = frozenset({"oh", "ohh", "ooh", "umm", "um", "uh", "uhh", "hmm", "hey", "hi", "hello", "okay", "ok",
                            "well", "wow", "yeah", "yes", "no", "god", "gosh", "man", "please", "thanks", "sorry",
                            "whoa", "ah", "aw", "huh", "look", "listen", "so", "y'know", "alright", "i'm", "i"})


def entity_of(token: Token) -> Span | None:
    """The named entity the token is part of, if any."""
    for ent in token.doc.ents:
        if ent.start <= token.i < ent.end:
            return ent
    return None


def is_time(token: Token) -> bool:
    ent = entity_of(token)
    return ent is not None and ent.label_ in TIME_LABELS


def name_of(token: Token) -> Party | None:
    """A proper name at `token`: its entity span (without a leading "the"), else its chain of proper nouns."""
    ent = entity_of(token)
    if ent is not None and ent.label_ in ENTITY_TYPES:
        # The small model runs names together across a comma ("Tessellate Labs, Ilse"): the part with the token.
        words = [t for t in ent if not (t.i == ent.start and t.lower_ == "the")
                 and not any(p.text in (",", ";", ":") for p in token.doc[min(t.i, token.i):max(t.i, token.i) + 1])]
        # and cuts a full name short ("Ilse Esposito" with only "Esposito" named): its first name joins it.
        first = words[0] if words else token
        while first.i > 0 and (left := token.doc[first.i - 1]).pos_ == "PROPN" and left.is_title and \
                left.dep_ == "compound" and left.head.i in range(first.i, ent.end) and left.lower_ not in _INTERJECTIONS:
            words.insert(0, left)
            first = left
        while words and (words[0].is_lower or words[0].is_punct):
            words = words[1:]  # "marry Chandler" as one PERSON: the verb is no part of the name
        while words and (words[-1].lower_ in ("'s", "’s", "'") or words[-1].is_punct):
            words = words[:-1]
        if words and words[0].lower_ in _INTERJECTIONS:
            return None
        text = "".join(t.text_with_ws for t in words).strip()
        return Party(text, ENTITY_TYPES[ent.label_], True) if text else None
    if token.pos_ != "PROPN" or token.lower_ in FIRST_PERSON or token.lower_ in _INTERJECTIONS:
        return None
    words = [t for t in token.lefts if t.dep_ in ("compound", "flat") and t.pos_ == "PROPN"] + [token]
    words += [t for t in token.rights if t.dep_ in ("flat",) and t.pos_ == "PROPN"]
    if words[0].lower_ in _INTERJECTIONS:
        return None
    return Party(" ".join(t.text for t in words), None, True)


def owner(noun: Token) -> Party | None:
    """Whose relation a noun names: "my" is the speaker, "Priya's" is Priya; None when no one's."""
    for child in noun.children:
        if child.dep_ == "poss":
            if child.lower_ in ("my", "mine", "our", "ours"):
                return Party(SELF, "person", True)
            named = name_of(child)
            if named is not None:
                return Party(named.text, named.type or "person", True)
    return None


def relation_word(noun: Token) -> str | None:
    """The relation a noun names in snake case ("best friend" -> best_friend), when it is one."""
    if noun.lemma_.lower() not in RELATIONS and noun.lower_ not in RELATIONS:
        return None
    mods = [t.lower_ for t in noun.lefts if t.dep_ in ("amod", "compound") and t.pos_ in ("ADJ", "NOUN")
            and t.lower_ in ("best", "older", "younger", "big", "little", "twin", "ex", "step", "half", "old")]
    return "_".join([*mods, noun.lower_]).replace("-", "_")


def subject_of(token: Token) -> Party | None:
    """Who a subject is: the speaker, a named entity, a pronoun or a relation the speaker has ("my boss"),
    else None (a common noun or a word that names no one)."""
    low = token.lower_
    if low in FIRST_PERSON:
        return Party(SELF, "person", True)
    if low in REFERRING_PRONOUNS:
        return Party(low, "person" if low != "they" else None, True)
    if low == "we":
        return Party(SELF, "person", True)  # "we moved to Porto": the speaker did too
    named = name_of(token) or _appositive_name(token)
    if named is not None:
        return named
    if token.pos_ == "NOUN" and low in RELATION_NOUNS and any(
            c.dep_ == "poss" and c.lower_ in ("my", "our") for c in token.children):
        return Party(f"my {low}", "person", True)  # a description the resolve step links, or nothing
    return None


def _appositive_name(noun: Token) -> Party | None:
    """"my sister Ana", "the new hire, Ben Okafor,": the name a noun is given next to it."""
    if noun.pos_ != "NOUN":
        return None
    return next((name_of(c) for c in noun.children if c.dep_ == "appos" and c.pos_ == "PROPN"), None)


def phrase(token: Token) -> str:
    """A noun phrase's words without articles, possessive pronouns, clauses or trailing prepositions ("of"
    kept: "a cup of coffee" -> cup of coffee)."""
    words: list[Token] = []

    def collect(t: Token) -> None:
        for child in t.children:
            if t is token and child.i < t.i and child.dep_ in ("det", "poss") and (
                    child.lower_ in _ARTICLES or child.tag_ == "PRP$"):
                continue
            if child.dep_ in _LEFT_OUT and not (child.dep_ == "prep" and child.lower_ == "of" and child.i > t.i):
                continue
            if child.dep_ == "case" and child.i > t.i:
                words.append(child)
                continue
            words.append(child)
            collect(child)

    words.append(token)
    collect(token)
    words.sort(key=lambda t: t.i)
    text = ""
    for t, after in zip(words, [*words[1:], None], strict=True):
        gap = token.doc[t.i + 1:after.i] if after is not None else None
        if gap is None or not len(gap):
            text += t.text_with_ws
        elif all(g.text == "-" and not g.whitespace_ for g in gap) and not t.whitespace_:
            text += t.text + "-"  # "dance-inspired": the hyphen left out with the punctuation stays in the word
        else:
            text += t.text + " "
    return " ".join(text.split()).strip("\"'“”‘’ ")


def object_of(token: Token) -> Party | None:
    """What an object says: a name (an entity), else its phrase (a value); None for pronouns, dates and
    words that name nothing ("it", "something")."""
    low = token.lower_
    if low in FIRST_PERSON:
        return Party(SELF, "person", True)
    if low in _NOT_THINGS or token.pos_ in ("PRON", "DET") or is_time(token):
        return None
    if any(c.dep_ == "poss" and c.lower_ in ("your", "yours") for c in token.children):
        return None  # "your suggestion": the other side's, not a fact about the speaker
    if token.pos_ == "PROPN" and any(c.dep_ == "prep" and c.lower_ == "of" for c in token.children):
        return Party(phrase(token), None, True)  # "Queens of the Stone Age"
    named = name_of(token) or _appositive_name(token)
    if named is not None:
        return named
    if token.pos_ not in ("NOUN", "NUM", "ADJ", "X") and token.tag_ != "VBG":  # "I love gardening"
        return None
    text = phrase(token)
    return Party(text, None, False) if text and text.lower() not in _NOT_THINGS else None


def negated(token: Token, contrast: Sequence[int] = ()) -> bool:
    """Said not to hold: "not", "n't", "never", "no longer"; a "not" at `contrast` denies only what follows it."""
    for child in token.children:
        if child.dep_ == "neg" and child.lower_ != "never" and child.i not in contrast:
            return True
        if child.dep_ == "advmod" and child.lower_ in ("longer", "anymore") and any(
                g.dep_ == "neg" for g in child.children):
            return True
    return False

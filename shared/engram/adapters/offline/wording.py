"""Which words of a chosen sentence are the answer.

A "what" question's verb meets the sentence's verb (by lemma: "see" meets "saw"), and the answer is that verb's
whole object: the phrase with its conjuncts and prepositional modifiers ("inspiring quotes, photos, and little
keepsakes"), without its determiner, the speaker's praise ("awesome fantasy RPG" -> "fantasy RPG") or a clause
hanging off it. A question naming the kind it wants ("what book", "what kind of deal") takes a title or name the
sentence gives, else the phrase headed by that kind. A "why" is answered by the because- or to-clause; a "how
did X feel" by the adjectives the sentence says; a "how did X manage" by its by-phrase (each from the next
sentence when the chosen one has none). A phrase that names nothing (a pronoun, an interjection,
"stuff", "a lot", the question's own words) is never the answer."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

from engram.adapters.offline import causes, referents, spans
from engram.adapters.offline.spans import residue
from engram.rules.text import content_terms, stem

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# Nouns that hold a place in a sentence without naming anything: never an answer on their own.
_EMPTY = frozenset(content_terms(
    "thing stuff lot lots bit way time times kind sort type world meantime moment moments day days one ones "
    "pic pics picture pictures photo photos image shot idea question news fun yep yeah yes sure ok okay thanks "
    "hey wow oh cool awesome great glad deal piece part bunch couple fan fans people person everyone everything "
    "something someone anyone difference blast"))  # "make a difference", "had a blast": idioms, not things
# The speaker's praise before a noun, rarely part of what is named ("awesome fantasy RPG").
_PRAISE = frozenset({"awesome", "amazing", "great", "cool", "nice", "lovely", "wonderful", "fantastic",
                     "incredible", "super", "really", "so", "totally", "pretty", "very", "neat", "sweet", "gorgeous",
                     "stunning", "beautiful", "favorite", "favourite", "fav", "fave", "own", "such", "quite", "exciting", "perfect"})
_SIZE = frozenset(content_terms("huge big total true real"))  # "a huge fan" names no more than "a fan"
_NOTHING = _EMPTY | _SIZE | frozenset(stem(w) for w in _PRAISE)  # says nothing new when it is all a phrase adds
_OBJECTS = frozenset({"dobj", "attr", "oprd", "xcomp", "ccomp", "acomp", "dative", "pobj", "obj"})
_CUT = frozenset({"relcl", "advcl", "punct", "cc", "mark", "parataxis", "intj", "discourse", "appos"})
_REASON_MARKS = frozenset({"because", "since", "as", "cause", "'cause", "cuz"})  # not "so": what follows is the effect
_WHEN = frozenset({"DATE", "TIME"})
_TIMELY = frozenset(content_terms("just yesterday today tonight tomorrow recently lately ago last week weekend month "
                                  "year morning evening night now so far still already"))
_PERSONAL = frozenset({"i", "me", "my", "we", "us", "our", "you", "your"})
_SHAPES = frozenset(content_terms("kind sort type name names one ones"))  # words that shape the question
_GREETING = frozenset({"hey", "hi", "hello", "thanks", "thank", "congrats", "wow", "oh", "yeah", "yes", "dear", "sorry"})
_MINDING = frozenset({"realize", "realise", "think", "learn", "say", "decide", "know", "believe", "notice", "discover",
                      "hope", "tell", "mention", "agree", "figure", "understand", "wish", "suggest", "promise"})
_TELLING = frozenset(stem(w) for w in ("feel", "describe", "seem", "find", "think", "react", "look", "sound"))
_QUOTED = re.compile(r"[\"“]([^\"”]{2,60})[\"”]")
_LISTED = re.compile(r",| and | or ")
_SEVERAL = 3  # values from one sentence when several are asked for
_MAX_WORDS = 9  # past this a phrase is a clause: cut back to its head's own words
_NAME = stem("name")


class Asked(spans.Asked, Protocol):
    """What the wording reads of a question (engram.adapters.offline.answers.Reading)."""

    @property
    def several(self) -> bool: ...

    @property
    def wh(self) -> str: ...

    @property
    def verbs(self) -> frozenset[str]: ...

    @property
    def kind(self) -> frozenset[str]: ...


def thing_in(asked: Asked, sent: Span) -> str | None:
    """The thing a "what" question asks for in the sentence: the object of the sentence's verb the question
    says, a title or name, the phrase headed by the kind asked for, else the noun phrase nearest the question's
    words that says something new; None when the sentence names nothing new. Several asked for ("what
    activities"): the sentence's other such phrases follow it."""
    said = asked.terms | asked.names
    anchors = sorted((t for t in sent if (_says(t, asked.terms) and t.pos_ in ("VERB", "NOUN", "ADJ", "PROPN"))
                      or (t.pos_ == "VERB" and _says(t, asked.verbs))),
                     key=lambda t: (t.pos_ != "VERB", not _says(t, asked.terms), t.i))
    if referents.asks_what_is_shown(asked.terms, asked.kind) and (image := referents.shown(sent.doc)):
        return image  # "what did X share a photo of": what the turn's image shows
    # A kind asked ("which superhero"): a title the sentence gives, or a name when it does not say the kind.
    kind_said = any(_says(t, asked.kind) for t in sent)
    if _NAME in asked.kind:  # "what is the name of her puppy": a name, or nothing here
        return _title(sent, said | asked.kind, proper=True)
    named = _title(sent, said, proper=not kind_said) if asked.kind else None
    found = named or next((f for a in anchors if (
        f := _governed(a, said, asked.verbs) if a.pos_ in ("VERB", "ADJ") else _headed(a, said))), None) or \
        _title(sent, said)
    chunks = [c for c in sent.noun_chunks if _names_something(c, said)]
    # A kind asked that the sentence says ("learning an instrument") or that a neighbour of it only echoes: which
    # one it is, is said elsewhere.
    if found is None and chunks and not (kind_said or (asked.kind and not anchors)):
        marks = [t.i for t in anchors] or [sent.start]
        found = _phrase(min(chunks, key=lambda c: min(abs(c.root.i - m) for m in marks)).root, said)
    if found is not None and found != named and referents.only_praised(sent, found, asked.kind, said | _EMPTY):
        # "a tasty meal" asked what kind of meal: which one it was is said elsewhere, or by a copula or apposition
        return next((p for a in anchors if (r := referents.copula_subject(a)) and (p := _phrase(r, said))), None)
    if found is None or found == named or not asked.several or _LISTED.search(found):
        return found
    others = [p for c in chunks if (p := _phrase(c.root, said)) and p not in found and found not in p]
    return ", ".join(list(dict.fromkeys([found, *others]))[:_SEVERAL])


def kind_asked(question: Doc) -> frozenset[str]:
    """The kind of thing a question asks for, stemmed: the nouns right after its "what"/"which" ("which TV
    series", "what kind of deal") or after "favorite"; empty when it asks "what did...". """
    kind: list[str] = []
    for n, token in enumerate(question):
        if token.lower_ in ("what", "which", "favorite", "favourite") and n + 1 < len(question):
            for word in question[n + 1:]:
                if (word.pos_ in ("AUX", "VERB", "PRON", "PUNCT", "ADP") and word.lower_ != "of") or word.tag_ == "POS":
                    break
                kind.append(word.lower_)
    named = any(t.lemma_.lower() == "name" and t.i + 1 < len(question) and question[t.i + 1].lower_ == "of"
                for t in question)  # "the name of her puppy": a name is asked for
    return frozenset(content_terms(" ".join(kind)) - _SHAPES) | ({_NAME} if named else frozenset())


def explanation(asked: Asked, sent: Span) -> str | None:
    """The reason ("why") or manner ("how ... feel") a sentence gives: its because- or to-clause, or the
    adjectives it says of the feeling, else the next sentence's ("I joined a church. I wanted to feel closer to
    my faith."); else its own words less the question's (spans.residue), or the next sentence's when its own
    say only when ("Just yesterday")."""
    said = asked.terms | asked.names
    after = [sent, *_following(sent)]
    telling = asked.wh == "how" and (not asked.verbs or asked.verbs & _TELLING)
    of_it = [t for part in after for t in part if telling and _describes(t) and stem(t.lower_) not in said and any(
        _says(s, asked.terms) for s in _subject(t))]
    if of_it:  # "The views were spectacular" asked how the views were: said of the question's own thing
        return " and ".join(dict.fromkeys(t.text for t in of_it[:3]))
    for part in after:
        if asked.wh == "why" and (reason := _reason(asked, part, said)):
            return reason
        if asked.wh == "how" and (not asked.verbs or asked.verbs & _TELLING):  # "how did X feel", "how was it"
            feeling = [t for t in part if _describes(t) and stem(t.lower_) not in said]
            if feeling:
                return " and ".join(dict.fromkeys(t.text for t in feeling[:3]))
        elif asked.wh == "how":  # "how did X get better": "by practising every day"
            means = next((t for t in part if t.lower_ == "by" and t.dep_ == "prep" and any(
                c.dep_ == "pcomp" for c in t.children)), None)
            if means is not None and content_terms(clause := _text(list(means.subtree))) - said:
                return clause
    return next((r for part in after if (r := residue(asked, part)) and content_terms(r) - _NOTHING - _TIMELY), None)


def _following(sent: Span, count: int = 2) -> list[Span]:
    """The statements after this one in the same turn, up to `count`, stopping at a question."""
    doc = sent.doc
    out: list[Span] = []
    while len(out) < count and sent.end < len(doc):
        sent = doc[sent.end].sent
        if sent.text.rstrip().endswith("?"):
            break
        out.append(sent)
    return out


def _reason(asked: Asked, sent: Span, said: frozenset[str]) -> str | None:
    """A sentence's because-clause, else its to-clause of purpose ("to feel closer to my faith")."""
    for token in sent:
        if token.lower_ in _REASON_MARKS and token.dep_ in ("mark", "advmod", "cc") and token.i + 1 < sent.end:
            clause = _clause_after(token, sent)
            if clause and content_terms(clause) - said:
                return clause
    for token in sent:
        if token.lower_ == "to" and token.dep_ == "aux" and token.head.dep_ in ("advcl", "xcomp") and \
                not _says(token.head, asked.terms):
            clause = _text(list(token.head.subtree), start=token.i)
            if content_terms(clause) - said:
                return clause
    if cause := causes.before_so(sent, said):  # "I love dance, so combining them...": the reason comes first
        return cause
    return None


def _describes(token: Token) -> bool:
    """Whether a word says how something was or felt: an adjective or participle the verb predicates ("felt
    relieved", "left me thrilled", "was electric") or joined to one ("and happy")."""
    if not (token.pos_ == "ADJ" or token.tag_ == "VBN"):
        return False
    return token.dep_ in ("acomp", "oprd") or (token.pos_ == "ADJ" and token.dep_ == "ROOT") or (
        token.dep_ == "conj" and _describes(token.head)) or (token.dep_ == "amod" and token.head.dep_ == "attr")


def _subject(token: Token) -> list[Token]:
    """The subject of the verb a describing word hangs on (through the word it is joined to), with its own
    words ("the views" of "were spectacular")."""
    while token.dep_ in ("conj", "amod") and token.head is not token:
        token = token.head
    verb = token.head if token.dep_ != "ROOT" else token
    return [t for c in verb.children if c.dep_ in ("nsubj", "nsubjpass") for t in c.subtree]


def _says(token: Token, terms: frozenset[str]) -> bool:
    """Whether a word is one of the question's terms, by its form or its lemma ("saw" says "see")."""
    return stem(token.lower_) in terms or stem(token.lemma_.lower()) in terms


def _governed(verb: Token, said: frozenset[str], asked_verbs: frozenset[str] = frozenset()) -> str | None:
    """The object or complement of a verb (its phrase through a preposition too), else the nouns right after it:
    "researching adoption agencies" -> "adoption agencies", "went to a pottery class" -> "pottery class"; through
    a verb it leads to ("started to learn the violin", "started doing aerial yoga") last."""
    referent = referents.relative_head(verb) or referents.shared_object(verb)
    if referent is not None and (found := _phrase(referent, said)):
        return found  # "the script that I contributed to", "made ice cream and shared it"
    inner = []
    for child in verb.children:
        if child.i < verb.i or (child.dep_ == "prep" and referents.takes_object_pronoun(verb)):
            continue  # "shared it with some people": what was shared is not the people
        if child.dep_ in ("prep", "agent"):
            heads = [g for g in child.children if g.dep_ in ("pobj", "pcomp")]
        elif child.dep_ in _OBJECTS:
            heads = [child]
        else:
            continue
        for head in heads:
            # A verb in between leads on, unless it is the answer itself ("loves competing in tournaments").
            if head.dep_ == "ccomp" and head.pos_ in ("VERB", "AUX") and verb.lemma_ in _MINDING and \
                    _says(verb, asked_verbs | said):
                # "realized that self-care is important": what is realized is the clause
                clause = _text([t for t in head.subtree if t.dep_ != "mark"])
                if content_terms(clause) - said - _NOTHING:
                    return clause
            if head.pos_ in ("VERB", "AUX") and (head.tag_ != "VBG" or _says(head, asked_verbs | said)):
                if head.dep_ in ("xcomp", "pcomp"):
                    inner.append(head)
                continue
            found = _phrase(head, said)
            if found:
                return found
    return _nouns_after(verb, said) or next((f for h in inner if (f := _governed(h, said, asked_verbs))), None)


def _nouns_after(anchor: Token, said: frozenset[str]) -> str | None:
    """The phrase of the noun right after a word, past a determiner, possessive or preposition, when the parse
    hangs it elsewhere ("Researching adoption agencies - it's been a dream")."""
    doc, i = anchor.doc, anchor.i + 1
    while i < len(doc) and i - anchor.i <= 3 and (doc[i].pos_ in ("DET", "ADP", "PART") or doc[i].tag_ == "PRP$"):
        i += 1
    end = i
    while end < len(doc) and doc[end].pos_ in ("ADJ", "NOUN", "PROPN", "NUM") and end - i < 6 and \
            doc[end].ent_type_ not in _WHEN and stem(doc[end].lower_) not in _TIMELY:
        end += 1
    if end == i or not any(t.pos_ in ("NOUN", "PROPN", "NUM") for t in doc[i:end]):
        return None
    words = list(doc[i:end])
    while words and _loose(words[0], words[-1]):
        words = words[1:]
    text = _join(words)
    return text if content_terms(text) - said - _EMPTY - _TIMELY else None


def _headed(noun: Token, said: frozenset[str]) -> str | None:
    """The phrase a question's own noun heads, when its modifiers say something new ("a fantasy literature
    forum" asked "what forum"), else the object its preposition leads to ("deal with an outdoor company"), or
    what a copula says of it ("my favorite memory was winning ...")."""
    found = _phrase(noun, said)
    if found and content_terms(found) - said - _EMPTY:
        return found
    for referent in (referents.copula_subject(noun), referents.verb_purpose(noun)):
        if referent is not None and (found := _phrase(referent, said)):
            return found  # "this necklace is a gift", "an audition for a writing gig"
    for child in noun.children:
        if child.dep_ == "prep":
            for head in child.children:
                if head.dep_ == "pobj" and (found := _phrase(head, said)):
                    return found
    if noun.dep_ == "nsubj" and noun.head.lemma_ == "be":
        for child in noun.head.children:
            if child.i > noun.head.i and child.dep_ in ("attr", "acomp", "advcl", "ccomp", "xcomp"):
                held = [g for c in child.children if child.pos_ == "ADJ" and c.dep_ == "prep" and c.lower_ in (
                    "of", "with") for g in c.children if g.dep_ == "pobj"]  # "is full of quotes": the quotes
                if held and (found := _phrase(held[0], said)):
                    return found
                text = _text([t for t in child.subtree if t.dep_ != "mark" and t.lower_ not in ("when", "that")])
                if content_terms(text) - said - _EMPTY:
                    return text
    return None


def _title(sent: Span, said: frozenset[str], proper: bool = False) -> str | None:
    """A title or name the sentence gives: quoted words, a work of art; with `proper`, also a run of capitalised
    words past the sentence's first that the question does not say ("a sucker for Spider-Man")."""
    quoted = _QUOTED.search(sent.text)
    if quoted and content_terms(quoted.group(1)) - said:
        return quoted.group(1).strip(" ,.!?")
    if not proper:
        return None
    for ent in sent.ents:
        if ent.label_ in ("WORK_OF_ART", "PRODUCT", "EVENT") and content_terms(ent.text) - said:
            return ent.text
    runs: list[list[Token]] = [[]]
    for token in sent:
        capital = token.text[:1].isupper() and (token.pos_ == "PROPN" or (
            token.pos_ not in ("PRON", "INTJ") and token.i > sent.start))  # a sentence's first word is capitalised anyway
        inside = runs[-1] and (token.lower_ in ("of", "the", "to", "and", "a", "in", "on") or (token.text == "-" and not token.whitespace_))
        if capital or inside:
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    for run in runs:
        while run and not (run[-1].pos_ == "PROPN" or run[-1].is_title):
            run.pop()
        addressed = run and _addressed(run)
        if run and not addressed and content_terms(_join(run)) - said - _EMPTY and run[0].ent_type_ not in _WHEN:
            return _join(run)
    return None


def _addressed(run: list[Token]) -> bool:
    """Whether a name is said to the listener ("Hey Jon, ...", "That's great, Jon!"), not of a thing."""
    doc = run[0].doc
    before = doc[run[0].i - 1] if run[0].i else None
    after = doc[run[-1].i + 1].text if run[-1].i + 1 < len(doc) else "."
    return after in (",", "!", ".", "?") and before is not None and (before.text == "," or before.lower_ in _GREETING)


def _names_something(chunk: Span, said: frozenset[str]) -> bool:
    return chunk.root.pos_ not in ("PRON", "INTJ") and bool(content_terms(chunk.text) - said - _EMPTY)


def _phrase(head: Token, said: frozenset[str]) -> str | None:
    """The phrase a word heads: its subtree less clauses, leading determiners and praise; cut back to the head's
    own modifiers when it runs past a clause's length; None when it names nothing the question does not say."""
    if head.pos_ in ("PRON", "INTJ", "AUX", "SCONJ", "CCONJ", "PART", "DET", "PUNCT", "SPACE"):
        return None
    if stem(head.lower_) in said and head.pos_ in ("ADJ", "VERB"):
        # "ready for a fundraiser" asked "getting ready for": what it is for
        inner = next((f for c in head.children if c.dep_ == "prep" for g in c.children
                      if g.dep_ == "pobj" and (f := _phrase(g, said))), None)
        if inner:
            return inner
    for child in head.children:  # "a fantasy RPG called Xenoblade": the name
        if child.dep_ == "acl" and child.lemma_ in ("call", "name", "title"):
            name = [t for c in child.children if c.dep_ in ("oprd", "dobj", "attr", "xcomp") for t in c.subtree]
            if name and name[0].text[:1].isupper() and content_terms(_join(name)) - said:
                return _join(name)
    kept = _kept(head, said)
    if len(kept) > _MAX_WORDS:  # too long for a name: without the prepositional phrases, then the head's own words
        kept = _kept(head, said, {"prep"})
    if len(kept) > _MAX_WORDS:
        kept = [t for t in head.lefts if t.dep_ in ("amod", "compound", "nmod", "nummod")] + [head]
    while kept and _loose(kept[0], head):
        kept = kept[1:]
    while kept and kept[0].ent_type_ in _WHEN:  # "yesterday", "last week": when, not what
        kept = kept[1:]
    while kept and (kept[-1].is_punct or kept[-1].pos_ in ("CCONJ", "ADP", "DET", "PART") or kept[-1].ent_type_ in _WHEN):
        kept = kept[:-1]
    text = _join(kept)
    new = content_terms(text) - said - _EMPTY - _SIZE - _TIMELY
    if not kept or not new or all(t.pos_ in ("PRON", "INTJ") for t in kept):
        return None
    return text


def _loose(token: Token, head: Token) -> bool:
    """Whether a phrase's first word can go: a determiner or possessive, the speaker's praise, punctuation, a
    conjunction or preposition left at the edge, an adverb of something inside."""
    if token is head:
        return False
    return ((token.dep_ in ("det", "poss", "case", "predet") and token.pos_ != "NUM") or token.lower_ in _PRAISE
            or token.is_punct or token.pos_ in ("CCONJ", "ADP", "PART") or token.dep_ == "advmod")


def _kept(head: Token, said: frozenset[str], also: frozenset[str] | set[str] = frozenset()) -> list[Token]:
    """A word's subtree without the clauses hanging off it (relative and adverbial clauses, interjections), the
    phrases `also` names, and prepositional phrases that add nothing: to a pronoun ("in it"), to the speaker's
    own ("with my dad") or to the question's words ("gaming content for YouTube" asked "for YouTube")."""
    cut: set[int] = set()
    for token in head.subtree:
        if token is head or token.i in cut:
            continue
        joins = (token.dep_ in ("cc", "punct") and any(s.dep_ == "conj" for s in token.head.children)) or (
            token.text in "-/" and not token.whitespace_)  # "Spider-Man"
        objects = [c for c in token.children if c.dep_ == "pobj"]
        empty = token.dep_ == "prep" and (all(c.pos_ == "PRON" or c.ent_type_ in _WHEN for c in objects) or (
            token.lower_ != "of" and (not content_terms(_join(list(token.subtree))) - said - _NOTHING or any(
                g.dep_ == "poss" and g.pos_ == "PRON" for c in objects for g in c.children))))
        when = token.ent_type_ in _WHEN and token.dep_ in ("npadvmod", "advmod", "tmod")  # "last month": when
        # "a fantasy RPG called Xenoblade" asked about Xenoblade: the name is the question's, not the answer
        empty = empty or (token.dep_ == "acl" and token.lemma_ in ("call", "name") and not content_terms(
            _join(list(token.subtree))) - said - _NOTHING)
        if (token.dep_ in _CUT and not joins) or token.dep_ in also or empty or when:
            cut |= {t.i for t in token.subtree}
    return [t for t in head.subtree if t.i not in cut]


def _join(tokens: list[Token]) -> str:
    """Tokens as text, with the spacing the sentence had between neighbours ("I'm", "photos, and")."""
    out = ""
    for n, token in enumerate(tokens):
        adjacent = n + 1 < len(tokens) and tokens[n + 1].i == token.i + 1
        out += token.text + (token.whitespace_ if adjacent else " ")
    return out.strip()


def _clause_after(mark: Token, sent: Span) -> str | None:
    """The clause a "because" introduces: its subtree (or the rest of the sentence) after the marker."""
    clause = [t for t in mark.head.subtree if t.i > mark.i] if mark.dep_ == "mark" else list(sent.doc[mark.i + 1:sent.end])
    return _text(clause) or None


def _text(tokens: list[Token], start: int = -1) -> str:
    """A clause's words from `start`, without punctuation and the speaker's or listener's pronouns ("I'm")."""
    return _join([t for t in tokens if t.i >= start and not (t.is_punct and t.text not in "'-") and not (
        t.lower_ in _PERSONAL or (t.pos_ == "AUX" and t.text.startswith("'")))])

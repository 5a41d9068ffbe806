"""The words the offline extraction knows: which verb and preposition make which canonical predicate (the names
the regex extractor, the ontology and the fact rules use), and which verbs state nothing durable by themselves."""

from __future__ import annotations

# (verb lemma, preposition or None for a direct object) -> the predicate the rules and the ontology know.
CANONICAL: dict[tuple[str, str | None], str] = {
    ("live", "in"): "lives_in", ("live", "at"): "lives_in", ("move", "to"): "lives_in",
    ("relocate", "to"): "lives_in", ("settle", "in"): "lives_in", ("reside", "in"): "lives_in",
    ("work", "at"): "works_at", ("work", "for"): "works_at", ("work", "as"): "works_as",
    ("start", "at"): "works_at", ("join", None): "works_at", ("employ", "at"): "works_at", ("employ", "by"): "works_at",
    ("marry", None): "married_to", ("marry", "to"): "married_to",
    ("like", None): "likes", ("enjoy", None): "likes", ("love", None): "loves", ("adore", None): "loves",
    ("prefer", None): "prefers", ("hate", None): "dislikes", ("dislike", None): "dislikes",
    ("detest", None): "dislikes", ("come", "from"): "comes_from", ("base", "in"): "lives_in",
    ("grow_up", "in"): "comes_from", ("bear", "in"): "born_in",
}
CANONICAL_NAMES = frozenset(CANONICAL.values())
OBJECT_TYPES = {"lives_in": "place", "comes_from": "place", "born_in": "place", "works_at": "organization",
                "married_to": "person"}
# What only a person is the subject of ("Kalani works at ...", whatever type the small model gave "Kalani"); "based
# in" is an organization's lives_in, so lives_in is typed by its verb instead (PERSON_VERBS).
PERSON_PREDICATES = frozenset({"works_at", "works_as", "married_to", "age", "born_in"})
PERSON_VERBS = frozenset({"live", "reside", "move", "relocate", "work", "marry", "employ"})
NAMED_ONLY = frozenset({"married_to", "comes_from", "born_in"})
# Objects of these predicates name entities (a place, an employer, a person) even in lower case.
ENTITY_PREDICATES = frozenset({"lives_in", "works_at", "married_to", "comes_from"})
# Verbs that say nothing durable by themselves ("I know that", "I said ..."): no generic fact from them.
LIGHT_VERBS = frozenset({"be", "say", "tell", "think", "know", "mean", "guess", "see", "ask", "want", "need", "hope",
                         "wish", "try", "let", "seem", "feel", "look", "get", "do", "make", "go", "come", "take",
                         "give", "put", "talk", "call", "hear", "believe", "remember", "forget", "understand",
                         "thank", "bet", "kid", "care", "mind", "wait", "happen", "keep", "start", "stop", "begin",
                         "use", "have", "show", "find", "leave", "name", "speak", "sound", "like", "love",
                         "watch", "check", "pick", "bring", "sit", "stand", "run", "turn", "hold", "meet", "help",
                         "imagine", "suppose", "promise", "swear", "apologize", "excuse", "forgive", "hate"})
# How a clause is said: conditions and unreal modals (not asserted), hedges, beliefs and reports (less sure),
# verbs that carry on or end a clause ("started working", "stopped working").
CONDITIONS = frozenset({"if", "unless", "whether", "when", "once", "until", "before", "after", "whenever", "while"})
UNREAL = frozenset({"would", "could", "should", "'d", "must", "ought"})
HEDGES = frozenset({"might", "may", "maybe", "perhaps", "probably", "possibly"})
BELIEF = frozenset({"think", "guess", "believe", "suppose", "feel", "bet", "reckon", "hear"})
REPORT = frozenset({"say", "tell", "mention", "know", "realize", "realise", "remember", "learn", "find", "mean"})
ONGOING = frozenset({"start", "begin", "continue", "keep"})
ENDING = frozenset({"stop", "quit"})
JOB_VERBS = {"get": False, "take": False, "land": False, "accept": False, "start": False, "have": False,
             "quit": True, "leave": True, "lose": True}  # verb -> whether it ends the job
STANCES = frozenset({"likes", "loves", "prefers", "dislikes"})
# "My employer is Globex": the predicate a possessed noun names when the copula gives its value.
OWN_NOUNS = {"employer": "works_at", "company": "works_at", "workplace": "works_at", "job": "works_as",
             "occupation": "works_as", "profession": "works_as", "age": "age", "birthday": "birthday",
             "hometown": "comes_from", "home": "lives_in"}
DEGREE = frozenset({"bit", "little", "lot", "tad", "kind", "sort"})

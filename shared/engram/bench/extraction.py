"""A generated conversation set for the extraction bench: users who state facts about themselves and the
people around them, restate some, correct some, contradict some (each kind of conflict the rules know, and a
cross-predicate one), among greetings, questions, negations and assistant turns; with the answers.

Deterministic for a seed. About a fifth of the statements use phrasings the offline patterns do not cover
("I'm based in ...", "My employer is ..."), so the offline extractor's recall is measured, not assumed.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CITIES = ("Lisbon Porto Madrid Seville Lyon Munich Hamburg Vienna Prague Krakow Warsaw Oslo Bergen Helsinki Tallinn "
          "Riga Dublin Glasgow Antwerp Utrecht Basel Zurich Geneva Turin Bologna Naples Athens Sofia Zagreb").split()
ORGS = ("Acme Robotics", "Globex", "Initech", "Umbrella Labs", "Stark Logistics", "Wayne Foods", "Tyrell Systems",
        "Cyberdyne Health", "Soylent Energy", "Hooli", "Vandelay Imports", "Wonka Media")
JOBS = ("nurse", "engineer", "teacher", "designer", "accountant", "chef", "pilot", "pharmacist", "architect")
HOBBIES = ("jazz", "hiking", "chess", "sushi", "climbing", "opera", "cycling", "gardening", "pottery", "tennis")
PEOPLE = ("Priya", "Tomas", "Ingrid", "Kenji", "Amara", "Felix", "Nadia", "Omar", "Lucia", "Viktor", "Greta", "Rafael")
PETS = ("Rex", "Miso", "Biscuit", "Luna", "Pepper", "Ziggy", "Mochi", "Olive")
NAMES = ("Dana", "Sam", "Alex", "Robin", "Jordan", "Casey", "Morgan", "Taylor", "Jamie", "Riley", "Avery", "Quinn")
CONFLICT_KINDS = ("correction", "ask_user", "confidence_gap", "semantic_conflict")

# (template, covered by the offline patterns)
LIVES = [("I live in {x}.", True), ("I'm living in {x} these days.", True), ("I'm based in {x}.", False),
         ("Home is {x} for me.", False)]
WORKS = [("I work at {x} as a {job}.", True), ("I work for {x} as an {job}.", True),
         ("My employer is {x}, I'm their {job}.", False)]
LIKES = [("I like {x}.", "likes", True), ("I love {x}.", "loves", True), ("I enjoy {x}.", "likes", True),
         ("{x} is my thing.", "likes", False)]
FILLER = ["Hi!", "Thanks, that helps.", "ok", "What's the weather like tomorrow?", "Can you recommend a book?",
          "Good morning."]
ASSISTANT = ["Nice to hear that!", "Got it.", "Tell me more.", "Thanks for sharing.", "I'll remember that."]


@dataclass(frozen=True)
class Turn:
    conversation_id: str
    role: str
    content: str
    at: datetime


@dataclass(frozen=True)
class Fact:
    """A fact a user stated: the subject is the user's id for their own facts, else a person's name."""

    user: str
    subject: str
    predicate: str
    object: str
    covered: bool  # in a phrasing the offline patterns read

    def key(self) -> tuple[str, str, str]:
        return (self.subject.lower(), self.predicate, self.object.lower())


@dataclass(frozen=True)
class PlantedConflict:
    user: str
    strategy: str  # what the rules should decide: correction, confidence_gap, trust_recent, ask_user
    kind: str  # memory_vs_memory or semantic_conflict (seed 004's conflict types)
    predicate: str
    active: tuple[str, ...]  # the values that should be active afterwards


@dataclass
class ExtractionSet:
    turns: dict[str, list[list[Turn]]] = field(default_factory=dict)  # user -> sessions (one batch each)
    facts: list[Fact] = field(default_factory=list)
    restatements: int = 0  # restatements the offline patterns can see: each should reinforce one fact
    conflicts: list[PlantedConflict] = field(default_factory=list)

    def events(self) -> int:
        return sum(len(s) for sessions in self.turns.values() for s in sessions)

    def planted_by_strategy(self) -> Counter[str]:
        return Counter(c.strategy for c in self.conflicts)


def generate(users: int = 36, seed: int = 20260105) -> ExtractionSet:
    """Three sessions per user: facts (day 0), restatements and one planted conflict (day 3), and for every
    third user a move long after (day 100: a recency-gap conflict)."""
    rnd = random.Random(seed)
    out = ExtractionSet()
    for i in range(users):
        user = f"u{i:02d}"
        city1, city2, city3 = rnd.sample(CITIES, 3)
        org1, org2 = rnd.sample(ORGS, 2)
        hobby1, hobby2 = rnd.sample(HOBBIES, 2)
        boss, sister = rnd.sample(PEOPLE, 2)
        job, pet, name = rnd.choice(JOBS), rnd.choice(PETS), NAMES[i % len(NAMES)]
        stated: list[tuple[str, list[Fact]]] = []

        def fact(subject: str, predicate: str, obj: str, covered: bool = True, u: str = user) -> Fact:
            return Fact(u, subject, predicate, obj, covered)

        lives, lives_ok = rnd.choice(LIVES)
        works, works_ok = rnd.choice(WORKS)
        likes, likes_predicate, likes_ok = rnd.choice(LIKES)
        stated += [
            (f"My name is {name}.", [fact(user, "name", name)]),
            (lives.format(x=city1), [fact(user, "lives_in", city1, lives_ok)]),
            (works.format(x=org1, job=job), [fact(user, "works_at", org1, works_ok),
                                             fact(user, "works_as", job, works_ok)]),
            (likes.format(x=hobby1), [fact(user, likes_predicate, hobby1, likes_ok)]),
            (f"I love {hobby2}.", [fact(user, "loves", hobby2)]),
            (f"{boss} is my boss.", [fact(boss, "boss_of", user)]),
            (f"My sister is called {sister}.", [fact(sister, "sister_of", user)]),
            (f"I have a dog named {pet}.", [fact(user, "has_dog", pet)]),
            (f"I don't live in {city3}.", []),
            (f"Do you know a good place to eat in {city1}?", []),
            (f"I'm a bit tired today, {name} here.", []),  # traps: no durable fact in them
            ("I like your suggestion, thanks.", []),
            (f"I used to live in {city3} as a kid.", []),
        ]
        rnd.shuffle(stated)
        session_a = _session(rnd, f"{user}-a", T0 + timedelta(hours=i), [text for text, _ in stated])
        out.facts += [f for _, facts in stated for f in facts]

        kind = CONFLICT_KINDS[i % len(CONFLICT_KINDS)]
        b_texts = []
        if lives_ok:  # a restatement the offline patterns can read reinforces the fact
            b_texts.append(f"I live in {city1}, as I said.")
            out.restatements += 1
        else:
            b_texts.append(lives.format(x=city1))
        if likes_ok:
            b_texts.append(likes.format(x=hobby1))
            out.restatements += 1
        lives_now = city1 if lives_ok else None
        if kind == "correction":
            b_texts.append(f"Actually, I live in {city2} now.")
            out.facts.append(fact(user, "lives_in", city2))
            if lives_ok:
                out.conflicts.append(PlantedConflict(user, "correction", "memory_vs_memory", "lives_in", (city2,)))
            lives_now = city2
        elif kind == "ask_user" and works_ok:
            b_texts.append(f"I work at {org2}.")
            out.facts.append(fact(user, "works_at", org2))
            out.conflicts.append(PlantedConflict(user, "ask_user", "memory_vs_memory", "works_at", (org1, org2)))
        elif kind == "confidence_gap" and works_ok:
            b_texts.append(f"I think I work at {org2}.")
            out.facts.append(fact(user, "works_at", org2))
            out.conflicts.append(PlantedConflict(user, "confidence_gap", "memory_vs_memory", "works_at", (org1,)))
        elif kind == "semantic_conflict" and likes_ok:
            b_texts.append(f"I hate {hobby1}.")
            out.facts.append(fact(user, "dislikes", hobby1))
            out.conflicts.append(PlantedConflict(user, "ask_user", "semantic_conflict", likes_predicate,
                                                 (hobby1,)))
        b_texts.append(f"{boss} prefers tea.")
        out.facts.append(fact(boss, "prefers", "tea"))
        session_b = _session(rnd, f"{user}-b", T0 + timedelta(days=3, hours=i), b_texts)
        sessions = [session_a, session_b]

        if i % 3 == 0:
            sessions.append(_session(rnd, f"{user}-c", T0 + timedelta(days=100, hours=i), [f"I live in {city3}."]))
            out.facts.append(fact(user, "lives_in", city3))
            if lives_now is not None:
                # What stays active is the last move: an earlier planted conflict on where they live ends there too.
                out.conflicts = [dataclasses.replace(c, active=(city3,)) if c.user == user and c.predicate == "lives_in"
                                 else c for c in out.conflicts]
                out.conflicts.append(PlantedConflict(user, "trust_recent", "memory_vs_memory", "lives_in", (city3,)))
        out.turns[user] = sessions
    return out


def _session(rnd: random.Random, conversation_id: str, start: datetime, texts: list[str]) -> list[Turn]:
    """The user's texts in order, each answered by the assistant, with a little small talk around them."""
    turns: list[Turn] = []
    lines = [rnd.choice(FILLER), *texts]
    if rnd.random() < 0.5:
        lines.append(rnd.choice(FILLER))
    for text in lines:
        turns.append(Turn(conversation_id, "user", text, start + timedelta(minutes=2 * len(turns))))
        turns.append(Turn(conversation_id, "assistant", rnd.choice(ASSISTANT), start + timedelta(minutes=2 * len(turns))))
    return turns

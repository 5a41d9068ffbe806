"""Planted facts: people's homes and employers, their moves and corrections, said among a real conversation's
turns, then read back as memory and as answers. This is how issue 19 is judged on conversations no one here
wrote: third-person facts, moves and corrections extracted and superseded as planted, one entity per person,
and no wrong answer labelled high confidence.

Each planted person has a full name said once ("Kalani Brandt lives in Cork."), a first name used after that,
a home that changes ("Update: Kalani moved and now lives in Porto."), and an employer that is corrected
("Actually Kalani works at Ferrowave, not Bluefin Analytics."). The phrasings are drawn from several templates
per kind and the names from lists that appear in no benchmark conversation, with a fixed seed.

Scored from the store after the real pipeline (ingest, resolve, extract, index) and from the query loop:

- `facts`: each planted statement is held as a fact of the person's one entity (current or history);
- `changes`: after a move or a correction, the current value is the new one and the old one is no longer current;
- `entities`: the person is one entity (no second entity named by the first name alone);
- `answers`: "Where does X live now?" and "Where does X work?" answered with the current value; a question
  about something never said ("Which school did X go to?") answered "I don't know";
- `wrong_high`: answers that are wrong (or answer the unanswerable) with confidence level "high".
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from engram.bench.locomo import Conversation

FIRST = ("Kalani", "Oyelaran", "Thandeka", "Ilse", "Corwin", "Marisol", "Tobiah", "Saoirse", "Anselm", "Yevgenia",
         "Priyanka", "Leopold", "Ngozi", "Bertrand", "Ximena", "Ragnhild", "Dashiell", "Inaya", "Florian", "Zuzana")
LAST = ("Brandt", "Okonkwo", "Vasquez", "Lindqvist", "Achterberg", "Moreau", "Halloran", "Castellanos", "Nakagawa",
        "Petrescu", "Whitcombe", "Oyelowo", "Fairbanks", "Kowalczyk", "Esposito", "Delacroix", "Haugland", "Sorensen")
CITIES = ("Cork", "Porto", "Leipzig", "Tallinn", "Halifax", "Bergen", "Valencia", "Krakow", "Adelaide", "Winnipeg",
          "Bologna", "Nantes", "Ghent", "Aarhus", "Ljubljana", "Tucson", "Cardiff", "Gdansk", "Lyon", "Seville")
COMPANIES = ("Bluefin Analytics", "Ferrowave", "Northwind Logistics", "Calder Biotech", "Quillon Systems",
             "Harbor & Vale", "Lumen Freight", "Solace Health", "Brightmoor Capital", "Tessellate Labs",
             "Oakridge Foods", "Meridian Robotics", "Kestrel Insurance", "Pinecrest Media", "Aldergate Partners")
JOBS = ("nurse", "data engineer", "architect", "accountant", "paramedic", "product designer", "lawyer", "chef")

LIVES = ("{full} lives in {city}.", "Did I tell you that {full} lives in {city}?",
         "My old friend {full} lives in {city} these days.", "{full} has been living in {city} for a few years.")
WORKS = ("{first} works at {company}.", "{first} works at {company} as a {job}.",
         "By the way, {first} has a job at {company}.", "{first} is a {job} at {company}.")
MOVES = ("Update: {first} moved and now lives in {city}.", "{first} moved to {city} last month.",
         "Big news, {first} relocated to {city} and lives there now.", "{first} now lives in {city}.")
CORRECTIONS = ("Actually {first} works at {company}, not {old}.", "Sorry, I mixed that up: {first} works at "
               "{company}, not at {old}.", "Correction: {first} doesn't work at {old}, {first} works at {company}.")
UNSAID = ("Which school did {first} go to?", "What is the name of {first}'s dog?", "When is {first}'s birthday?")


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    city: str
    new_city: str
    company: str
    new_company: str
    job: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"


@dataclass
class PlantedWorld:
    world_id: str
    user_id: str
    events: list[dict[str, Any]]  # every turn, planted ones included, in the order said
    people: list[Person]
    planted_ids: list[str] = field(default_factory=list)


def people(rng: random.Random, n: int) -> list[Person]:
    """`n` people with distinct first names, homes and employers; each moves once and has their employer
    corrected once."""
    firsts, lasts = rng.sample(FIRST, n), rng.sample(LAST, n)
    out = []
    for first, last in zip(firsts, lasts, strict=True):
        city, new_city = rng.sample(CITIES, 2)
        company, new_company = rng.sample(COMPANIES, 2)
        out.append(Person(first, last, city, new_city, company, new_company, rng.choice(JOBS)))
    return out


def plant(conversation: Conversation, rng: random.Random, *, n_people: int = 3, turns: int = 80,
          world_id: str | None = None) -> PlantedWorld:
    """The conversation's first `turns` turns with each person's four statements planted in order among
    them (said by the conversation's first speaker, the user the questions are asked for)."""
    base = conversation.turns[:turns]
    planted = people(rng, n_people)
    statements: list[tuple[int, str]] = []  # (position among the base turns, text)
    for person in planted:
        slots = sorted(rng.sample(range(1, len(base)), 4))
        texts = [rng.choice(LIVES).format(full=person.full, city=person.city),
                 rng.choice(WORKS).format(first=person.first, company=person.company, job=person.job),
                 rng.choice(MOVES).format(first=person.first, city=person.new_city),
                 rng.choice(CORRECTIONS).format(first=person.first, company=person.new_company, old=person.company)]
        statements += list(zip(slots, texts, strict=True))
    by_slot: dict[int, list[str]] = {}
    for slot, text in statements:
        by_slot.setdefault(slot, []).append(text)
    user = conversation.speakers[0]
    world = PlantedWorld(world_id or f"planted-{conversation.sample_id}", _identifier(user), [], planted)
    for n, turn in enumerate(base):
        for k, text in enumerate(by_slot.get(n, [])):
            event_id = f"p{n}-{k}"
            world.planted_ids.append(event_id)
            world.events.append(_event(event_id, world.user_id, turn.session, text,
                                       turn.occurred_at - timedelta(milliseconds=500 - k)))
        world.events.append(_event(turn.dia_id.replace(":", "-"), _identifier(turn.speaker), turn.session,
                                   turn.content, turn.occurred_at))
    return world


def questions(person: Person, rng: random.Random) -> list[tuple[str, str | None, str | None]]:
    """(question, the expected value (None: memory holds no answer), the old value it replaced)."""
    return [(f"Where does {person.first} live now?", person.new_city, person.city),
            (f"Where does {person.first} work?", person.new_company, person.company),
            (rng.choice(UNSAID).format(first=person.first), None, None)]


def said(answer: str, value: str) -> bool:
    """The answer names the value (case and punctuation aside)."""
    return _norm(value) in _norm(answer)


def answered_with(answer: str, value: str, old: str | None) -> bool:
    """The answer names the value, and before the old one if it names that too (history comes after)."""
    text = _norm(answer)
    at = text.find(_norm(value))
    before = text.find(_norm(old)) if old else -1
    return at >= 0 and (before < 0 or at < before)


def abstained(answer: str) -> bool:
    return bool(re.search(r"\b(?:i don't know|don't have|no information|nothing (?:in memory|that answers)|"
                          r"not (?:in|found in) memory|cannot answer|can't answer|unknown)\b", answer, re.I))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w&]+", " ", text.lower()).split())


def _identifier(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-").lower() or "user"


def _event(event_id: str, user_id: str, session: str, content: str, at: datetime) -> dict[str, Any]:
    return {"event_id": event_id, "user_id": user_id, "conversation_id": session, "role": "user",
            "content": content, "occurred_at": at.isoformat()}

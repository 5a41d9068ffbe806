"""The evidence floor on the real parts (PostgreSQL with pgvector, tantivy, the hash embedder): in a small world
about a user's job and pets, a question about something the world never mentions finds nothing relevant, one
about the world finds the turn that answers it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from engram.ports.clients import Clients
from engram.retrieval.search import search
from tests.builder import remember

pytestmark = pytest.mark.integration

T0 = datetime(2026, 4, 6, 18, 0, tzinfo=UTC)
TURNS = [
    "I work as a nurse at St Mary's hospital in Leeds.",
    "My shift starts at seven in the morning.",
    "I have two cats, Luna and Pepper.",
    "Pepper is a grey tabby who hates the vet.",
    "My brother Jake is a firefighter in Manchester.",
    "I adopted a rabbit called Clover last spring.",
    "Night shifts on the ward make me tired.",
    "Luna likes to sleep on my laptop.",
]
ANSWERS = [("What are the cats called?", "f2"), ("What is the rabbit called?", "f5"), ("What does Jake do?", "f4"),
           ("Which pet hates the vet?", "f3"), ("Who sleeps on the laptop?", "f7")]
NEVER_MENTIONED = ["What is the capital gains tax rate in France?", "When did Mount Vesuvius last erupt?",
                   "How do I configure a Kubernetes ingress?", "Who won the 1998 football World Cup?",
                   "Who designed the Eiffel Tower?"]


@pytest.fixture(scope="module")
def world(clients: Clients) -> str:
    remember(clients, "wfloor", [{"event_id": f"f{n}", "user_id": "kim", "conversation_id": "c1", "role": "user",
                                  "content": text, "occurred_at": (T0 + timedelta(minutes=n)).isoformat()}
                                 for n, text in enumerate(TURNS)], received_at=T0, now=T0)
    return "wfloor"


@pytest.mark.parametrize(("question", "turn"), ANSWERS)
def test_a_question_about_the_world_finds_the_turn_that_answers_it(clients: Clients, world: str, question: str,
                                                                   turn: str) -> None:
    result = search(clients, clients.world(world), question, user_id=None, now=T0 + timedelta(days=1))
    assert not result.nothing_relevant
    assert turn in [e for h in result.hits for e in (h.event_ids or [h.doc_id])][:5]


@pytest.mark.parametrize("question", NEVER_MENTIONED)
def test_a_question_about_what_the_world_never_mentions_finds_nothing_relevant(clients: Clients, world: str,
                                                                              question: str) -> None:
    result = search(clients, clients.world(world), question, user_id=None, now=T0 + timedelta(days=1))
    assert result.hits == [] and result.nothing_relevant


def test_without_the_floor_a_stray_word_would_have_brought_a_turn(clients: Clients, world: str) -> None:
    # "last" is in "last spring": without the evidence floor the question about a volcano gets that turn.
    open_world = clients.world(world).heuristics.with_overrides({"search_min_evidence": 0.0})
    result = search(clients, replace(clients.world(world), heuristics=open_world),
                    "When did Mount Vesuvius last erupt?", user_id=None, now=T0 + timedelta(days=1))
    assert result.hits and not result.nothing_relevant

"""Planted changes over time: moves, job changes and stated ends, in the third and the first person, each told
after the value it changes, through the whole pipeline (the configured offline model's extraction, the fact
lifecycle, PostgreSQL). Measured: how many the extractor read (both values stored) and how many of those memory
saw as a change (the old value closed, the new one current); the baseline is the same pairs told with no word of
change, which must stay a question for the user."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from engram.enrichment.resolve import user_entity
from engram.ports.clients import Clients
from tests.bench.conftest import BenchReport
from tests.builder import remember

pytestmark = pytest.mark.bench
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=UTC)
NAME = "Kalani Brandt"
# (before, after, predicate, old value, new value)
CHANGES: list[tuple[str, str, str, str, str]] = [
    *((f"{NAME} lives in Cork.", text, "lives_in", "Cork", "Porto") for text in (
        f"{NAME} relocated to Porto last month.", f"{NAME} has been living in Porto since March.",
        f"These days {NAME} lives in Porto.", f"{NAME} lives in Porto now.", f"{NAME} packed up and moved to Porto.",
        f"{NAME} just moved to Porto.", f"As of this week {NAME} lives in Porto.",
        f"{NAME} is currently living in Porto.", f"Update: {NAME} moved and now lives in Porto.",
        f"{NAME} recently settled in Porto.", f"{NAME} moved to Porto.")),
    *((f"{NAME} works at Bluefin.", text, "works_at", "Bluefin", "Globex") for text in (
        f"{NAME} changed jobs and works at Globex.", f"{NAME} started a new job at Globex.",
        f"{NAME} took a job at Globex.", f"{NAME} joined Globex last week.", f"{NAME} now works at Globex.",
        f"{NAME} quit Bluefin and works at Globex.", f"{NAME} works for Globex these days.",
        f"{NAME} started working at Globex.")),
]
# Stated ends: whether one is read shows only in what it closes, so they are counted, not held to a rule here.
ENDS = [f"{NAME} no longer works at Bluefin.", f"{NAME} doesn't work at Bluefin anymore.", f"{NAME} quit Bluefin."]
PLAIN: list[tuple[str, str, str, str, str]] = [(f"{NAME} lives in Cork.", f"{NAME} lives in Porto.", "lives_in", "Cork", "Porto"),
         (f"{NAME} works at Bluefin.", f"{NAME} works at Globex.", "works_at", "Bluefin", "Globex")]


def first_person(text: str) -> str:
    for said, mine in ((f"{NAME} has", "I have"), (f"{NAME} is", "I am"), (f"{NAME} doesn't", "I don't"),
                       (f"{NAME} lives", "I live"), (f"{NAME} works", "I work"),
                       (f"{NAME} no longer works", "I no longer work"), (NAME, "I")):
        text = text.replace(said, mine)
    return text


def told(clients: Clients, world: str, before: str, after: str, subject: str, predicate: str) -> dict[str, str]:
    """The two statements three days apart; the subject's values of the predicate and their status."""
    for n, (text, day) in enumerate(((before, 0), (after, 3))):
        remember(clients, world, [{"event_id": f"{world}-{n}", "user_id": "dana", "conversation_id": "c1",
                                   "role": "user", "content": text,
                                   "occurred_at": (T0 + timedelta(days=day)).isoformat()}],
                 now=T0 + timedelta(days=day, hours=1))
    entity = user_entity(clients, world, "dana") if subject == "dana" else clients.store.find_entity_by_name(
        world, subject)
    if entity is None:
        return {}
    return {f.object_value.lower(): f.status for f in clients.store.find_facts(
        world, entity.entity_id, predicate, statuses=("active", "superseded"), user_id="dana")}


def test_planted_changes_are_superseded_whenever_both_values_are_read(clients: Clients,
                                                                       bench_report: BenchReport) -> None:
    r = bench_report
    misses: list[str] = []
    persons: list[tuple[str, str, Callable[[str], str]]] = [("third", NAME, lambda t: t),
                                                           ("first", "dana", first_person)]
    for person, subject, voice in persons:
        read = changed = 0
        for n, (before, after, predicate, old, new) in enumerate(CHANGES):
            values = told(clients, f"bench-time-{person}-{n}", voice(before), voice(after), subject, predicate)
            both = old.lower() in values and new.lower() in values
            seen = values.get(old.lower()) == "superseded" and values.get(new.lower()) == "active"
            read += both
            changed += seen
            if both and not seen:
                misses.append(voice(after))
        r.add(f"{person} person: changes read (both values stored)", read, "count", baseline="changes planted",
              baseline_value=len(CHANGES))
        r.add(f"{person} person: changes superseded", changed, "count", baseline="changes read", baseline_value=read)
        ended = sum(told(clients, f"bench-time-end-{person}-{n}", voice(f"{NAME} works at Bluefin."), voice(text),
                         subject, "works_at").get("bluefin") == "superseded" for n, text in enumerate(ENDS))
        r.add(f"{person} person: stated ends closing the fact", ended, "count", baseline="ends planted",
              baseline_value=len(ENDS))
        plain_read = asked = 0
        for n, (before, after, predicate, old, new) in enumerate(PLAIN):
            values = told(clients, f"bench-time-plain-{person}-{n}", voice(before), voice(after), subject, predicate)
            plain_read += {old.lower(), new.lower()} <= values.keys()
            asked += values == {old.lower(): "active", new.lower(): "active"}
        r.add(f"{person} person: plain contradictions left to the user", asked, "count",
              baseline="plain contradictions read", baseline_value=plain_read)
        assert asked == plain_read  # no word of change: still a question for the user, not a silent change
    r.context["read_but_not_superseded"] = misses
    assert misses == []  # every change memory read is seen as a change

"""Signal rules: when a conversation is read for signals, which type a sentence carries, and the key
that keeps a signal once per conversation."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.model.events import StoredEvent
from engram.model.heuristics import DEFAULT_HEURISTICS as H
from engram.model.signals import SIGNAL_TYPES, SignalCursor
from engram.rules.signals import (
    classify_sentence,
    classify_signals,
    has_trigger_phrase,
    plan_signals,
    signal_key,
    trigger_reason,
)

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SHORT = "Ok, noted that one."  # no trigger phrase, well under 200 characters
LONG = "The onboarding flow has four screens and most people leave on the third one " * 2  # 150 characters


def _event(i: int, content: str, *, role: str = "user", conversation: str = "c1") -> StoredEvent:
    return StoredEvent(world_id="w", event_id=f"e{i:02d}", user_id="u", conversation_id=conversation, role=role,  # type: ignore[arg-type]
                       content=content, content_type="userinput", occurred_at=T0 + timedelta(minutes=i),
                       received_at=T0, importance=0.5)


# ---------------------------------------------------------------- when
def test_the_first_message_of_a_conversation_always_triggers() -> None:
    assert trigger_reason(first_message=True, text="ok", turns_since=1, chars_since=2, h=H) == "first_message"


@pytest.mark.parametrize("text", ["I assume it ships in May", "Not sure if that works", "Should we wait",
                                  "The deadline moved", "the DEADLINE moved", "Two deadlines moved"])
def test_a_trigger_phrase_triggers_at_once(text: str) -> None:
    assert trigger_reason(first_message=False, text=text, turns_since=1, chars_since=len(text), h=H) == "trigger_phrase"


def test_two_turns_and_two_hundred_characters_trigger_and_fewer_of_either_waits() -> None:
    assert trigger_reason(first_message=False, text=SHORT, turns_since=2, chars_since=200, h=H) == "turns_and_chars"
    assert trigger_reason(first_message=False, text=SHORT, turns_since=2, chars_since=199, h=H) is None
    assert trigger_reason(first_message=False, text=SHORT, turns_since=1, chars_since=5_000, h=H) is None


def test_five_turns_without_an_extraction_force_one() -> None:
    assert trigger_reason(first_message=False, text=SHORT, turns_since=4, chars_since=80, h=H) is None
    assert trigger_reason(first_message=False, text=SHORT, turns_since=5, chars_since=80, h=H) == "forced"


def test_a_trigger_phrase_counts_at_the_start_of_a_word_only() -> None:
    assert has_trigger_phrase("Two reports came in", ("report",))
    assert not has_trigger_phrase("We flew from the airport", ("report",))


def test_a_world_can_replace_the_trigger_phrases_and_thresholds() -> None:
    tuned = H.with_overrides({"signal_trigger_phrases": ["blocker"], "signal_force_after_turns": 2})
    assert trigger_reason(first_message=False, text="a blocker", turns_since=1, chars_since=9, h=tuned) == "trigger_phrase"
    assert trigger_reason(first_message=False, text="I assume so", turns_since=1, chars_since=9, h=tuned) is None
    assert trigger_reason(first_message=False, text=SHORT, turns_since=2, chars_since=9, h=tuned) == "forced"


def test_a_conversation_is_cut_into_windows_where_the_rule_fires() -> None:
    events = [_event(0, SHORT), *(_event(i, SHORT) for i in range(1, 6)), _event(6, SHORT), _event(7, LONG),
              _event(8, LONG), _event(9, "I assume the budget holds.")]
    plan = plan_signals("w", "c1", None, events, H)
    assert [(w.event_ids, w.reason) for w in plan.windows] == [
        (("e00",), "first_message"),
        (("e01", "e02", "e03", "e04", "e05"), "forced"),
        (("e06", "e07", "e08"), "turns_and_chars"),  # e07 makes 2 turns but 169 characters; e08 passes 200
        (("e09",), "trigger_phrase"),
    ]
    assert plan.cursor is not None and plan.cursor.last_event_id == "e09" and plan.cursor.turns_since == 0


def test_turns_left_waiting_are_carried_by_the_cursor_into_the_next_batch() -> None:
    first = plan_signals("w", "c1", None, [_event(0, SHORT), _event(1, SHORT), _event(2, SHORT)], H)
    assert first.cursor is not None
    assert first.cursor.pending_event_ids == ("e01", "e02") and first.cursor.chars_since == 2 * len(SHORT)
    saved = first.cursor.model_copy(update={"version": 1})
    second = plan_signals("w", "c1", saved, [_event(3, SHORT), _event(4, SHORT), _event(5, SHORT)], H)
    assert [w.event_ids for w in second.windows] == [("e01", "e02", "e03", "e04", "e05")]
    assert second.cursor is not None and second.cursor.version == 1


def test_a_re_run_moves_nothing_and_revisits_only_what_was_already_read() -> None:
    batch = [_event(0, SHORT), _event(1, SHORT)]
    cursor = plan_signals("w", "c1", None, batch, H).cursor
    again = plan_signals("w", "c1", cursor, batch, H)
    assert again.windows == () and again.cursor is None
    assert again.revisit == ("e00",)  # read in the first window; e01 still waits for its trigger


def test_a_message_arriving_after_later_ones_is_read_rather_than_lost() -> None:
    cursor = SignalCursor(world_id="w", conversation_id="c1", last_event_id="e05", last_occurred_at=T0 + timedelta(minutes=5))
    plan = plan_signals("w", "c1", cursor, [_event(3, "We must keep the old API.")], H)
    assert plan.revisit == ("e03",) and plan.windows == () and plan.cursor is None


def test_only_user_messages_count_as_turns() -> None:
    plan = plan_signals("w", "c1", None, [_event(0, "Should we start?", role="assistant"), _event(1, SHORT)], H)
    assert [w.event_ids for w in plan.windows] == [("e01",)]


# ---------------------------------------------------------------- what
@pytest.mark.parametrize(("sentence", "expected"), [
    ("Should we move the launch to May?", "DecisionIntent"),
    ("Let's go with Postgres.", "DecisionIntent"),
    ("We decided to drop the beta.", "DecisionIntent"),
    ("I'll go with the blue design.", "DecisionIntent"),
    ("The API is slow under load.", "Claim"),
    ("Our customers are mostly in Europe.", "Claim"),
    ("I want to cut onboarding time in half.", "Goal"),
    ("The goal is a release every week.", "Goal"),
    ("We aim to reach a thousand users.", "Goal"),
    ("We must ship before the audit.", "Constraint"),
    ("We can't exceed the budget.", "Constraint"),
    ("The deadline is March 3.", "Constraint"),
    ("It has to be done no later than Friday.", "Constraint"),
    ("I assume the vendor will deliver on time.", "Assumption"),
    ("Assuming the tests pass, we deploy.", "Assumption"),
    ("The server is probably fine.", "Assumption"),
    ("I think the bug is in the parser.", "Assumption"),
    ("Presumably they read the email.", "Assumption"),
    ("Let's assume the budget doubles.", "Assumption"),
    ("What does the contract say?", "Question"),
    ("Do we have a deadline?", "Question"),
    ("Not sure if the API supports batching.", "Question"),
    ("According to the survey, users want dark mode.", "EvidenceMention"),
    ("The data shows a 20% drop.", "EvidenceMention"),
    ("A recent study found no effect.", "EvidenceMention"),
    ("We measured 40 ms at p95.", "EvidenceMention"),
])
def test_each_sentence_is_read_as_its_signal_type(sentence: str, expected: str) -> None:
    candidate = classify_sentence(sentence, H)
    assert candidate is not None and candidate.signal_type == expected and candidate.content == sentence


@pytest.mark.parametrize("sentence", ["Hi!", "Thanks", "ok", "Sounds good.", "Blue."])
def test_greetings_acknowledgements_and_fragments_carry_no_signal(sentence: str) -> None:
    assert classify_sentence(sentence, H) is None


def test_a_message_yields_one_signal_per_sentence_and_a_repeated_sentence_once() -> None:
    found = classify_signals("We must ship by May. Should we cut scope?\nWE MUST SHIP BY MAY.  Hello!", H)
    assert [(c.signal_type, c.content) for c in found] == [
        ("Constraint", "We must ship by May."), ("DecisionIntent", "Should we cut scope?")]


def test_an_explicit_marker_is_surer_than_a_bare_claim() -> None:
    claim, assumption = classify_signals("The API is slow under load. I assume it is the cache.", H)
    assert claim.confidence == H.signals.signal_claim_confidence \
        < assumption.confidence == H.signals.signal_marker_confidence


def test_a_very_long_sentence_is_cut_before_it_is_stored() -> None:
    [candidate] = classify_signals("The report is " + "very " * 200 + "long.", H)
    assert len(candidate.content) == H.signals.signal_max_chars


# ---------------------------------------------------------------- once
def test_the_dedup_key_is_sha256_of_type_colon_lowercased_text() -> None:
    assert signal_key("Claim", "The API Is Slow") == hashlib.sha256(b"Claim:the api is slow").hexdigest()


def test_the_same_text_under_two_types_has_two_keys() -> None:
    assert signal_key("Claim", "the api is slow") != signal_key("Assumption", "the api is slow")


@given(signal_type=st.sampled_from(SIGNAL_TYPES), text=st.text(alphabet="abcXYZ 09:-", min_size=1, max_size=80),
       variant=st.sampled_from([str.upper, str.lower, str.swapcase, str.title, str.casefold]))
def test_the_dedup_key_ignores_the_case_of_ascii_text(signal_type: str, text: str, variant: object) -> None:
    assert signal_key(signal_type, variant(text)) == signal_key(signal_type, text)  # type: ignore[operator]


@given(signal_type=st.sampled_from(SIGNAL_TYPES), text=st.text(min_size=1, max_size=80),
       variant=st.sampled_from([str.upper, str.lower, str.swapcase, str.title, str.casefold]))
def test_a_casefolding_world_s_dedup_key_ignores_any_case(signal_type: str, text: str, variant: object) -> None:
    assert signal_key(signal_type, variant(text), casefold=True) == signal_key(  # type: ignore[operator]
        signal_type, text, casefold=True)


@given(words=st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=6), min_size=1, max_size=6),
       gaps=st.lists(st.sampled_from([" ", "  ", "\t", "\n "]), min_size=6, max_size=6))
def test_a_casefolding_world_s_dedup_key_ignores_how_the_words_are_spaced(words: list[str], gaps: list[str]) -> None:
    spaced = "".join(w + g for w, g in zip(words, gaps, strict=False))
    assert signal_key("Goal", spaced, casefold=True) == signal_key("Goal", " ".join(words), casefold=True)

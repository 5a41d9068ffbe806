"""The Intelligence Engine's rules as its document states them (docs/rules.md): the extraction
rules table, the trigger phrases, the seven signal types, the SHA256 dedup key, the inflection check (every 3
turns, 0.75 minimum), the four intervention patterns and their cooldown, the research budgets and iterations.
Each table below is copied from the document."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from engram.adapters.embedders import HashEmbedder
from engram.config import Settings
from engram.enrichment.ingest import ingest_events
from engram.enrichment.signals import dismiss_signal, event_signals, extract_signals, list_signals
from engram.errors import NotFound
from engram.model.context import QueryContext
from engram.model.events import StoredEvent
from engram.model.heuristics import DEFAULT_HEURISTICS as H
from engram.model.heuristics import Heuristics
from engram.model.insights import (
    INFLECTION_KINDS,
    INTERVENTION_PATTERNS,
    InflectionAssessment,
    InflectionKind,
    Intervention,
)
from engram.model.queries import ContextItem, QueryConfig
from engram.model.research import ResearchReport
from engram.model.signals import SIGNAL_TYPES, AssumptionStatus, Signal
from engram.model.world import World
from engram.query.budget import thin_research
from engram.rules.insights import detect_intervention, inflection_checkpoint, inflection_counts, intervention_due
from engram.rules.signals import classify_sentence, signal_key, trigger_reason
from tests.fakes.conversations import said
from tests.fakes.ports import EMBEDDING_DIM, FakePorts

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
QUIET = "Ok, noted."  # no trigger phrase, a few characters


def _event(i: int, content: str, conversation: str = "c1") -> StoredEvent:
    return StoredEvent(world_id="w", event_id=f"e{i:02d}", user_id="u", conversation_id=conversation, role="user",
                       content=content, content_type="userinput", occurred_at=T0 + timedelta(minutes=i),
                       received_at=T0, importance=0.5)


def _signals(*turns: str, h: Heuristics = H) -> list[Signal]:
    return [s for i, text in enumerate(turns) for s in event_signals("w", _event(i, text), h, T0)]


# ---------------------------------------------------------------- Extraction Rules
# | Condition | Action |, one row each, with a turn that meets it.
EXTRACTION_RULES = [
    ("first message in thread", True, QUIET, 1, len(QUIET), "first_message"),
    ("trigger phrase", False, "I assume it ships in May", 1, 24, "trigger_phrase"),
    ("2 turns and 200 chars since last extraction", False, QUIET, 2, 200, "turns_and_chars"),
    ("2 turns but 199 chars", False, QUIET, 2, 199, None),
    ("1 turn however many chars", False, QUIET, 1, 5_000, None),
    ("5 turns without an extraction", False, QUIET, 5, 50, "forced"),
    ("otherwise", False, QUIET, 4, 50, None),
]


@pytest.mark.parametrize(("condition", "first", "text", "turns", "chars", "action"), EXTRACTION_RULES,
                         ids=[row[0] for row in EXTRACTION_RULES])
def test_each_row_of_the_extraction_rules_table_decides_a_turn(condition: str, first: bool, text: str, turns: int,
                                                               chars: int, action: str | None) -> None:
    assert trigger_reason(first_message=first, text=text, turns_since=turns, chars_since=chars, h=H) == action


TRIGGER_PHRASES = ["I assume", "not sure if", "should we", "deadline"]  # the document's, verbatim


@pytest.mark.parametrize("phrase", TRIGGER_PHRASES)
def test_each_trigger_phrase_of_the_document_starts_an_extraction(phrase: str) -> None:
    text = f"Well, {phrase} this one matters"
    assert trigger_reason(first_message=False, text=text, turns_since=1, chars_since=len(text), h=H) == "trigger_phrase"


def test_the_default_trigger_phrases_are_the_document_s_four() -> None:
    assert [p.lower() for p in TRIGGER_PHRASES] == list(H.signals.signal_trigger_phrases)
    for other in ("We need to hire", "Let's go", "It was decided", "The budget is tight"):
        assert trigger_reason(first_message=False, text=other, turns_since=1, chars_since=20, h=H) is None


# ---------------------------------------------------------------- Configuration
CONFIGURATION = [  # | Setting | Value |
    ("Extraction: min turns between", "signal_min_turns", 2),
    ("Extraction: min chars between", "signal_min_chars", 200),
    ("Extraction: max turns without", "signal_force_after_turns", 5),
    ("Agent check interval", "inflection_interval_turns", 3),
    ("Agent confidence threshold", "inflection_min_confidence", 0.75),
    ("Analyzes last 6 messages", "inflection_window_messages", 6),
    ("Checks cooldown (max every 3 turns)", "intervention_cooldown_turns", 3),
    ("40k tokens: noise removal", "research_drop_tokens", 40_000),
    ("60k tokens: observation masking", "research_mask_tokens", 60_000),
    ("80k tokens: LLM compaction digest", "research_compact_tokens", 80_000),
]


@pytest.mark.parametrize(("setting", "name", "value"), CONFIGURATION, ids=[row[0] for row in CONFIGURATION])
def test_the_configuration_table_s_values_are_engram_s_defaults(setting: str, name: str, value: float) -> None:
    assert H.flat()[name] == value


def test_the_inflection_check_runs_on_the_haiku_model() -> None:
    assert "haiku" in str(Settings.model_fields["anthropic_fast_model"].default)
    assert "haiku" in str(Settings.model_fields["bedrock_fast_model"].default)


# ---------------------------------------------------------------- Signal Types
DOCUMENT_SIGNAL_TYPES = "DecisionIntent · Claim · Goal · Constraint · Assumption · Question · EvidenceMention"


def test_the_seven_signal_types_are_the_document_s() -> None:
    assert tuple(DOCUMENT_SIGNAL_TYPES.split(" · ")) == SIGNAL_TYPES


@pytest.mark.parametrize(("sentence", "signal_type"), [
    ("Should we move the launch to May?", "DecisionIntent"),
    ("The API is slow under load.", "Claim"),
    ("The goal is a release every week.", "Goal"),
    ("The deadline is March 3.", "Constraint"),
    ("I assume the vendor delivers on time.", "Assumption"),
    ("Not sure if the API supports batching.", "Question"),
    ("According to the survey, users want dark mode.", "EvidenceMention"),
])
def test_a_sentence_carrying_each_type_is_read_as_it(sentence: str, signal_type: str) -> None:
    candidate = classify_sentence(sentence, H)
    assert candidate is not None and candidate.signal_type == signal_type


@pytest.mark.parametrize("status", ["confirmed", "challenged", "refuted"])
def test_an_assumption_starts_untested_and_moves_to_the_document_s_statuses(status: AssumptionStatus) -> None:
    fakes = FakePorts()
    world = World("w1")
    request = said(("user", "I assume the vendor delivers on time."), user="maya")
    ingest_events(fakes, world, request)
    extract_signals(fakes, world, fakes.store.get_events("w1", [e.event_id or "" for e in request.events]))
    [assumption] = fakes.store.list_signals("w1", "c1", "Assumption")
    assert assumption.assumption_status == "untested"
    assert fakes.store.set_assumption_status("w1", assumption.signal_id, status) is not None
    assert fakes.store.list_signals("w1", "c1", "Assumption")[0].assumption_status == status


# ---------------------------------------------------------------- Signal Lifecycle: dismissed, stored with embedding
def _read(fakes: FakePorts, *turns: str, first: int = 1, minute: int = 0, conversation: str = "c1") -> dict[str, int]:
    """Turns of maya's, stored and read for signals as the extract step reads them."""
    world = World("w1")
    request = said(*turns, conversation=conversation, user="maya", first=first, start=T0 + timedelta(minutes=minute))
    ingest_events(fakes, world, request)
    return extract_signals(fakes, world, fakes.store.get_events("w1", [e.event_id or "" for e in request.events]))


def test_a_dismissed_signal_leaves_the_conversation_s_signals_and_keeps_its_first_dismissal() -> None:
    fakes = FakePorts()
    _read(fakes, "The deadline is March 3.", "I assume the vendor delivers on time.")
    deadline, assumption = fakes.store.list_signals("w1", "c1")
    dismissed = dismiss_signal(fakes, "w1", deadline.signal_id, now=T0 + timedelta(days=1))
    assert dismissed.dismissed_at == T0 + timedelta(days=1)
    assert list_signals(fakes, "w1", "c1") == [assumption]
    assert [s.signal_id for s in list_signals(fakes, "w1", "c1", include_dismissed=True)] == [
        deadline.signal_id, assumption.signal_id]
    again = dismiss_signal(fakes, "w1", deadline.signal_id, now=T0 + timedelta(days=2))
    assert again.dismissed_at == T0 + timedelta(days=1)  # dismissing twice keeps the first time
    with pytest.raises(NotFound):
        dismiss_signal(fakes, "w1", "sig_unknown")
    with pytest.raises(NotFound):
        dismiss_signal(fakes, "elsewhere", assumption.signal_id)


def test_reading_a_dismissed_signal_s_turn_again_does_not_bring_it_back() -> None:
    fakes = FakePorts()
    _read(fakes, "The deadline is March 3.")
    [deadline] = fakes.store.list_signals("w1", "c1")
    dismiss_signal(fakes, "w1", deadline.signal_id)
    again = extract_signals(fakes, World("w1"), fakes.store.get_events("w1", ["e1"]))
    assert again["signals"] == 0 and fakes.store.list_signals("w1", "c1") == []


class CountingEmbedder(HashEmbedder):
    """The hash embedder, recording the texts of each call."""

    def __init__(self) -> None:
        super().__init__(EMBEDDING_DIM)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return super().embed(texts)


def test_each_new_signal_is_stored_with_its_content_s_vector_from_one_embedding_call_per_step() -> None:
    embedder = CountingEmbedder()
    fakes = FakePorts(embedder=embedder)
    counts = _read(fakes, "We are planning the Q3 launch. Should we move it to May?",
                   "I assume the vendor delivers the chips on time. The deadline is March 3.")
    stored = fakes.store.list_signals("w1", "c1")
    assert counts["signals"] == len(stored) == 4 and len(embedder.calls) == 1
    for signal in stored:
        vector = fakes.store.t.signal_vectors[("w1", signal.signal_id)]
        assert len(vector) == EMBEDDING_DIM and vector == HashEmbedder(EMBEDDING_DIM).embed([signal.content])[0]


def test_a_conversation_s_signals_are_ranked_by_meaning_when_asked() -> None:
    fakes = FakePorts()
    _read(fakes, "We are planning the Q3 launch. Should we move it to May?",
          "I assume the vendor delivers the chips on time. The deadline is March 3.")
    said_order = [s.content for s in list_signals(fakes, "w1", "c1")]
    assert said_order[0] == "We are planning the Q3 launch."
    ranked = [s.content for s in list_signals(fakes, "w1", "c1", q="vendor chips delivered on time")]
    assert ranked[0] == "I assume the vendor delivers the chips on time." and sorted(ranked) == sorted(said_order)


# ---------------------------------------------------------------- Deduplication
# Key: SHA256(type + ":" + text.lower()) -> 64-char hex; the right column is what is hashed.
DEDUP_KEYS = [
    ("Claim", "The API Is Slow", "Claim:the api is slow"),
    ("Constraint", "The DEADLINE is March 3.", "Constraint:the deadline is march 3."),
    ("Goal", "Ship  BY May", "Goal:ship  by may"),  # text.lower() keeps the spacing
    ("Constraint", "Die Straße schließt um 5", "Constraint:die straße schließt um 5"),  # and the ß
]


@pytest.mark.parametrize(("signal_type", "text", "hashed"), DEDUP_KEYS)
def test_the_dedup_key_is_sha256_of_type_colon_lowercased_text(signal_type: str, text: str, hashed: str) -> None:
    assert signal_key(signal_type, text) == hashlib.sha256(hashed.encode()).hexdigest()


def test_the_dedup_key_is_64_hex_characters() -> None:
    key = signal_key("Question", "Who owns billing?")
    assert len(key) == 64 and set(key) <= set("0123456789abcdef")


def test_a_world_can_casefold_the_dedup_key_so_every_case_variant_meets() -> None:
    assert signal_key("Claim", "STRASSE") != signal_key("Claim", "Straße")
    assert signal_key("Claim", "STRASSE", casefold=True) == signal_key("Claim", "Straße", casefold=True)
    folding = H.with_overrides({"signal_key_casefold": True})
    [signal] = _signals("The Straße is closed for the whole week.", h=folding)
    assert signal.content_hash == signal_key(signal.signal_type, signal.content, casefold=True)


def test_the_same_signal_is_kept_once_per_conversation() -> None:
    fakes = FakePorts()
    world = World("w1")
    for conversation, turns in (("c1", ["The deadline is March 3.", "the DEADLINE is march 3."]),
                                ("c2", ["The deadline is March 3."])):
        request = said(*turns, conversation=conversation, user="maya", prefix=conversation)
        ingest_events(fakes, world, request)
        extract_signals(fakes, world, fakes.store.get_events("w1", [e.event_id or "" for e in request.events]))
    assert [s.content for s in fakes.store.list_signals("w1", "c1")] == ["The deadline is March 3."]
    assert [s.content for s in fakes.store.list_signals("w1", "c2")] == ["The deadline is March 3."]


# Scope: per thread, among the non-dismissed signals. (whether the first saying was dismissed, what the thread
# holds after the same words are said again: the non-dismissed signals' turns, and every signal's turns)
DEDUP_SCOPE = [
    ("said again while the first stands", False, ["e1"], ["e1"]),
    ("said again after the first was dismissed", True, ["e2"], ["e1", "e2"]),
]


@pytest.mark.parametrize(("case", "dismiss_first", "standing", "every"), DEDUP_SCOPE, ids=[r[0] for r in DEDUP_SCOPE])
def test_the_dedup_scope_is_the_thread_s_non_dismissed_signals(case: str, dismiss_first: bool, standing: list[str],
                                                               every: list[str]) -> None:
    fakes = FakePorts()
    _read(fakes, "The deadline is March 3.")
    if dismiss_first:
        dismiss_signal(fakes, "w1", fakes.store.list_signals("w1", "c1")[0].signal_id)
    _read(fakes, "the DEADLINE is march 3.", first=2, minute=5)
    assert [s.event_id for s in fakes.store.list_signals("w1", "c1")] == standing
    assert [s.event_id for s in fakes.store.list_signals("w1", "c1", include_dismissed=True)] == every
    assert len({s.signal_id for s in fakes.store.list_signals("w1", "c1", include_dismissed=True)}) == len(every)


# ---------------------------------------------------------------- Inflection Detector
def test_the_three_inflection_types_are_the_document_s() -> None:
    assert INFLECTION_KINDS == ("research_depth", "critique_assumptions", "synthesis_decision")


@pytest.mark.parametrize(("turns", "checked", "checkpoint"), [
    (1, 0, None), (2, 0, None), (3, 0, 3), (4, 3, None), (6, 3, 6), (7, 6, None),
])
def test_the_inflection_check_runs_every_third_turn(turns: int, checked: int, checkpoint: int | None) -> None:
    assert inflection_checkpoint(turns, checked, H) == checkpoint


@pytest.mark.parametrize(("kind", "confidence", "activates"), [
    ("research_depth", 0.74, False), ("critique_assumptions", 0.75, True), ("synthesis_decision", 0.76, True),
    (None, 0.99, False),
])
def test_an_inflection_activates_from_the_threshold_up(kind: InflectionKind | None, confidence: float,
                                                       activates: bool) -> None:
    assessment = InflectionAssessment(kind=kind, confidence=confidence, suggested_topic="the launch")
    assert inflection_counts(assessment, H) is activates


# ---------------------------------------------------------------- Intervention System
QUESTIONS = ("Who owns the billing service?", "When does the contract end?", "Where are the backups stored?")
ASSUMPTIONS = ("I assume the data fits in memory.", "I assume nobody uses the old API.")
CASE = ("Should we build it ourselves or buy the vendor's tool?", "The deadline is the end of May.")
DENSE = ("The API is slow. The queue is full. The cache is cold. The disk is full. The CPU is hot. "
         "The logs are noisy.",)


@pytest.mark.parametrize(("pattern", "turns"), [
    ("multiple_questions", QUESTIONS),  # -> suggest organizing into an inquiry
    ("unvalidated_assumptions", ASSUMPTIONS),  # -> suggest validation
    ("case_structure", CASE),  # -> suggest creating a case
    ("high_signal_density", DENSE),  # -> suggest organizing signals
])
def test_each_document_pattern_is_detected_as_its_intervention(pattern: str, turns: tuple[str, ...]) -> None:
    signals = _signals(*turns)
    candidate = detect_intervention(signals, [], [s.event_id for s in signals], H)
    assert candidate is not None and INTERVENTION_PATTERNS[candidate.kind] == pattern


@pytest.mark.parametrize(("turns", "last", "due"), [
    (1, None, True), (2, 1, False), (3, 1, False), (4, 1, True), (6, 3, True),
])
def test_an_intervention_waits_three_turns_after_the_last(turns: int, last: int | None, due: bool) -> None:
    assert intervention_due(turns, last, H) is due


def test_a_dismissed_suggestion_is_not_suggested_again() -> None:
    signals = _signals(*QUESTIONS)
    candidate = detect_intervention(signals, [], [], H)
    assert candidate is not None
    dismissed = Intervention(world_id="w", intervention_id="itv_1", conversation_id="c1", kind=candidate.kind,
                             status="dismissed", message=candidate.message(H), signal_ids=list(candidate.signal_ids),
                             turn=1, created_at=T0, dismissed_at=T0)
    assert detect_intervention(signals, [dismissed], [], H) is None


# ---------------------------------------------------------------- Research Agent
def _sized(tokens: int, n: int = 100) -> QueryContext:
    body = "x" * int(tokens * H.query.chars_per_token / n)
    return QueryContext(query_id="q", world_id="w", question="q",
                        items=[ContextItem(kind="event", id=f"e{i}", text=body, score=i / n) for i in range(n)])


@pytest.mark.parametrize(("gathered", "measures"), [
    (39_000, []),
    (50_000, ["dropped"]),  # 40k tokens: noise removal, drop low-scoring findings
    (70_000, ["masked"]),  # 60k tokens: observation masking (and under 40k after it)
    (90_000, ["masked", "compacted"]),  # 80k tokens: compaction
])
def test_a_context_past_each_budget_is_thinned_by_its_measure(gathered: int, measures: list[str]) -> None:
    _, taken = thin_research(_sized(gathered), H)
    assert [t.split()[0] for t in taken] == measures


@pytest.mark.parametrize(("max_iterations", "rounds_run", "remaining"), [
    (2, 1, 1), (2, 2, 0), (1, 1, 0), (4, 1, 3),
])
def test_research_gathers_at_most_max_iterations_rounds(max_iterations: int, rounds_run: int, remaining: int) -> None:
    assert QueryConfig().max_research_iterations == 2  # "Research max iterations: 2"
    report = ResearchReport(max_iterations=max_iterations, iterations=rounds_run)
    assert report.remaining_iterations == remaining

"""Ranking several candidates for one name: 0.4 alias confidence, 0.2 recency, 0.2 usage, 0.2 source."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram.model.heuristics import Heuristics
from engram.rules.ranking import CandidateEvidence, candidate_score, clear_winner, rank_candidates

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
H = Heuristics()


def test_the_default_weights_are_the_issues() -> None:
    assert (H.resolve.rank_weight_alias, H.resolve.rank_weight_recency, H.resolve.rank_weight_usage,
            H.resolve.rank_weight_source) == (0.4, 0.2, 0.2, 0.2)


def test_a_perfect_candidate_scores_one_and_each_signal_adds_its_weight() -> None:
    perfect = CandidateEvidence("e", match=1.0, source="user", mentions=10**9, last_seen=NOW)
    assert candidate_score(perfect, NOW, H) == pytest.approx(1.0, abs=1e-6)
    bare = CandidateEvidence("e", match=1.0, source="user")
    assert candidate_score(bare, NOW, H) == pytest.approx(0.4 + 0.2)  # no recency, no usage
    half = CandidateEvidence("e", match=1.0, source="user", mentions=5,
                             last_seen=NOW - timedelta(days=H.resolve.rank_recency_half_life_days))
    assert candidate_score(half, NOW, H) == pytest.approx(0.4 + 0.2 * 0.5 + 0.2 * 0.5 + 0.2)


def test_recency_and_usage_break_a_tie_between_equal_aliases() -> None:
    talked_about = CandidateEvidence("kim", match=0.9, source="seed", mentions=6, last_seen=NOW - timedelta(days=1))
    forgotten = CandidateEvidence("park", match=0.9, source="seed", mentions=1, last_seen=NOW - timedelta(days=300))
    ranked = rank_candidates([forgotten, talked_about], NOW, H)
    assert [entity for entity, _ in ranked] == ["kim", "park"]
    assert clear_winner(ranked, H.resolve.rank_margin) == "kim"


def test_a_user_taught_alias_outranks_a_guessed_one_of_equal_confidence() -> None:
    ranked = rank_candidates([CandidateEvidence("a", 0.9, "fuzzy"), CandidateEvidence("b", 0.9, "user")], NOW, H)
    assert ranked[0][0] == "b"


def test_a_close_race_has_no_clear_winner_and_one_candidate_always_wins() -> None:
    assert clear_winner([("a", 0.62), ("b", 0.55)], 0.15) is None
    assert clear_winner([("a", 0.62)], 0.15) == "a"
    assert clear_winner([], 0.15) is None


def test_an_entity_counts_its_best_evidence_once() -> None:
    ranked = rank_candidates([CandidateEvidence("a", 0.5, "fuzzy"), CandidateEvidence("a", 0.9, "seed")], NOW, H)
    assert len(ranked) == 1 and ranked[0][1] == pytest.approx(0.4 * 0.9 + 0.2 * 0.9)

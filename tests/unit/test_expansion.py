"""The expansion brain (pure ranking and its use case, on a stub store): linked turns ranked by link weight times
similarity, the question's words, a lift for a dated turn (more for a question asking when), capped."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.search import LinkedTurn
from engram.retrieval.expansion import ExpansionPorts, asks_when, expansion_brain, rank_turns

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
H = DEFAULT_HEURISTICS.with_overrides({"search_expansion_limit": 60})  # the brain is off by default


def turn(event_id: str, text: str, *, weight: float = 1.0, similarity: float = 0.5, conversation: str = "s1",
         via: str = "said") -> LinkedTurn:
    return LinkedTurn(event_id=event_id, text=text, user_id="ana", conversation_id=conversation, occurred_at=T0,
                      via=via, weight=weight, similarity=similarity)  # type: ignore[arg-type]


def ids(hits: Sequence[object]) -> list[str]:
    return [h.doc_id for h in hits]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("question", "when"), [
    ("When did Ana go to the support group?", True),
    ("How long has Ana had her dog?", True),
    ("What year did Rui move to Porto?", True),
    ("How many weeks ago did Eva start?", True),
    ("Where does the sister of Ana's boss live?", False),
    ("What activities does Ana do with her kids?", False),
])
def test_a_question_asking_when_is_told_apart(question: str, when: bool) -> None:
    assert asks_when(question) is when


def test_a_stronger_link_ranks_first_at_equal_similarity() -> None:
    hits = rank_turns("Where does the sister of Ana's boss live?",
                      [turn("far", "Porto is lovely", weight=0.25), turn("near", "Porto is lovely", weight=1.0)], H)
    assert ids(hits) == ["near", "far"]
    assert hits[0].kind == "event" and hits[0].score > hits[1].score


def test_the_questions_words_lift_a_turn_and_its_names_do_not() -> None:
    question = "What pottery has Ana made?"
    plain = turn("plain", "Ana said hello to everyone at the party", similarity=0.5)
    worded = turn("worded", "I made a bowl in my pottery class", similarity=0.45)
    assert ids(rank_turns(question, [plain, worded], H)) == ["worded", "plain"]
    # "Ana" is the entity the turns are linked through: naming her again shares no word with the question.
    named = rank_turns(question, [plain, turn("other", "nothing in common", similarity=0.5)], H, names=["Ana"])
    assert named[0].score == named[1].score


def test_a_dated_turn_rises_for_a_question_asking_when_more_than_for_another() -> None:
    dated = turn("dated", "I went to the support group yesterday", similarity=0.5)
    undated = turn("undated", "The support group was so powerful", similarity=0.65)
    assert ids(rank_turns("When did Ana go to the support group?", [undated, dated], H)) == ["dated", "undated"]
    assert ids(rank_turns("Why does Ana like the support group?", [undated, dated], H)) == ["undated", "dated"]


def test_a_turn_reached_twice_counts_once_at_its_best_and_the_list_is_capped() -> None:
    twice = rank_turns("anything", [turn("t", "x", weight=0.25, via="mention"), turn("t", "x", weight=1.0)], H)
    assert ids(twice) == ["t"] and twice[0].score == pytest.approx(0.5)
    capped = H.with_overrides({"search_expansion_limit": 2})
    many = [turn(f"t{i}", "x", similarity=i / 10, conversation=f"c{i}") for i in range(5)]
    assert ids(rank_turns("anything", many, capped)) == ["t4", "t3"]


class StubStore:
    """Answers `linked_turns` with fixed turns and records what it was asked."""

    def __init__(self, turns: list[LinkedTurn]) -> None:
        self.turns, self.asked = turns, []  # type: list[LinkedTurn], list[tuple[str, dict[str, float], str | None]]

    def linked_turns(self, world_id: str, entity_weights: dict[str, float], embedding: Sequence[float], *,
                     user_id: str | None, limit: int, context_weight: float = 0.0) -> list[LinkedTurn]:
        self.asked.append((world_id, entity_weights, user_id))
        return self.turns[:limit]


class StubPorts:
    def __init__(self, store: StubStore) -> None:
        self.store = store


def test_the_brain_reads_the_linked_turns_of_the_reached_entities_in_the_world_for_the_user() -> None:
    store = StubStore([turn("boss", "My boss Rui is kind", via="relationship"),
                       turn("moved", "She moved to Porto last spring", weight=0.25, via="fact", conversation="s2")])
    ports: ExpansionPorts = StubPorts(store)
    reached = {"ana": 1.0, "rui": 0.5, "eva": 0.25}
    hits = expansion_brain(ports, "w1", "Where does the sister of Ana's boss live?", reached, [0.1] * 4,
                           user_id="ana", h=H, names=["Ana"])
    assert ids(hits) == ["boss", "moved"] and store.asked == [("w1", reached, "ana")]


def test_with_no_entity_reached_or_no_room_the_brain_sits_the_question_out() -> None:
    store = StubStore([turn("t", "x")])
    assert expansion_brain(StubPorts(store), "w1", "anything", {}, [0.1], user_id=None, h=H) == []
    off = H.with_overrides({"search_expansion_limit": 0})
    assert expansion_brain(StubPorts(store), "w1", "anything", {"ana": 1.0}, [0.1], user_id=None, h=off) == []
    assert store.asked == []

"""Research mode's pure parts: the question's clauses, the offline plan, evaluation and synthesis, and
thinning at the 40k / 60k / 80k token budgets."""

from __future__ import annotations

from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.offline.research import clauses
from engram.model.context import QueryContext
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.queries import ContextItem, InfoRequest
from engram.model.research import EvidenceConflict, SubQuestion
from engram.query.budget import thin_research

H = DEFAULT_HEURISTICS
LLM = OfflineLLM()


def test_a_question_splits_at_question_marks_semicolons_and_conjunctions_that_open_a_new_question() -> None:
    assert clauses("Where does Dana live and who is her boss?") == ["Where does Dana live", "who is her boss"]
    assert clauses("What did Sarah decide; when is the deadline?") == ["What did Sarah decide", "when is the deadline"]
    assert clauses("Tell me about Tom and Jerry.") == ["Tell me about Tom and Jerry"]  # no new question opens
    assert clauses("and why?") == ["and why?"]  # no clause with a content word: the question itself


def _context(question: str, *items: ContextItem) -> QueryContext:
    return QueryContext(query_id="q", world_id="w", question=question, items=list(items))


DANA = ContextItem(kind="entity", id="ent_dana", text="Dana (person) [summary: expand for the full record]",
                   full=False, name="Dana", entity_ids=["ent_dana"])


def test_the_offline_plan_searches_each_clause_and_expands_the_entities_it_names() -> None:
    plan = LLM.plan_research(_context("Where does Dana live and who is her boss?", DANA), max_sub_questions=5).value
    first, second = plan.sub_questions
    assert [(r.capability, r.params) for r in first.requests] == [
        ("search_memories", {"query": "Where does Dana live", "limit": 10}), ("expand_entity", {"entity_id": "ent_dana"})]
    assert [r.capability for r in second.requests] == ["search_memories", "search_entities"]  # names no entity


def test_an_entity_the_question_names_outside_every_clause_gets_a_sub_question_of_its_own() -> None:
    context = _context("Compare Dana's plans", DANA)
    plan = LLM.plan_research(context, max_sub_questions=5).value
    assert [s.question for s in plan.sub_questions] == ["Compare Dana's plans"]  # the clause names Dana already
    assert LLM.plan_research(context, max_sub_questions=1).value.sub_questions[0].question == "Compare Dana's plans"


def _sub(sub_id: str, question: str, status: str = "gathered", evidence: list[str] | None = None) -> SubQuestion:
    return SubQuestion(sub_id=sub_id, question=question, iteration=1, status=status,  # type: ignore[arg-type]
                       requests=[InfoRequest(capability="search_memories", params={"query": question})],
                       evidence=evidence or [])


LIVES = ContextItem(kind="semantic", id="sem_1", text="Dana lives in Lisbon", score=0.9, entity_ids=["ent_dana"])


def test_the_offline_evaluation_answers_covered_sub_questions_and_asks_again_in_new_ways_for_the_rest() -> None:
    context = _context("q", DANA, LIVES)
    subs = [_sub("s1", "Where does Dana live"), _sub("s2", "Who is Dana's dentist", evidence=["sem_1"])]

    verdict = LLM.evaluate_research(context, subs, can_continue=True, max_follow_ups=3).value

    assert (verdict.complete, verdict.answered) == (False, ["s1"])
    [follow_up] = verdict.follow_ups
    assert follow_up.question == "Who is Dana's dentist"
    assert [(r.capability, r.params) for r in follow_up.requests] == [
        ("get_entity_by_name", {"name": "Dana", "limit": 3}), ("expand_entity", {"entity_id": "ent_dana"}),
        ("search_entities", {"query": "dana dentist", "limit": 5})]  # not the search already tried
    assert LLM.evaluate_research(context, subs, can_continue=False, max_follow_ups=3).value.follow_ups == []


def test_the_offline_synthesis_cites_each_answer_names_both_sides_of_a_conflict_and_what_is_unknown() -> None:
    acme = ContextItem(kind="semantic", id="sem_2", text="Dana works at Acme", score=0.7)
    globex = ContextItem(kind="semantic", id="sem_3", text="Dana works at Globex", score=0.7)
    conflict = EvidenceConflict(kind="memory_conflict", ids=("sem_2", "sem_3"), status="open", conflict_id="c1",
                                statements=("Dana works at Acme", "Dana works at Globex"))
    subs = [_sub("s1", "Where does Dana live"), _sub("s2", "Who is Dana's dentist")]

    answer = LLM.synthesize(_context("q", DANA, LIVES, acme, globex), subs, [conflict], temperature=0.2).value

    assert "Where does Dana live: Lisbon [sem_1]." in answer.content  # the value asked for, not the sentence
    assert ('Conflicting evidence: "Dana works at Acme." [sem_2] against "Dana works at Globex." [sem_3] '
            "(an open conflict: memory has not settled which is true)") in answer.content
    assert "Memory holds nothing that answers: Who is Dana's dentist." in answer.content
    assert [s.id for s in answer.sources] == ["sem_1", "sem_2", "sem_3"]
    assert answer.confidence < 0.5 and answer.suggested_follow_ups == ["Who is Dana's dentist"]


def _sized(tokens: int, n: int) -> QueryContext:
    """A context of `n` items of about `tokens` estimated tokens in all (4 characters a token)."""
    body = "x" * int(tokens * H.query.chars_per_token / n)
    return _context("q", *(ContextItem(kind="event", id=f"e{i}", text=body, score=i / n) for i in range(n)))


def test_a_context_under_40k_tokens_is_left_alone() -> None:
    context = _sized(39_000, 100)
    assert thin_research(context, H) == (39_000, [])
    assert len(context.items) == 100


def test_over_40k_the_lowest_scores_are_dropped_down_to_40k() -> None:
    context = _sized(50_000, 100)
    gathered, taken = thin_research(context, H)
    assert gathered == 50_000 and taken == ["dropped 20 low-scoring items (over 40000 tokens)"]
    assert context.stats().estimated_tokens <= 40_000
    assert min(i.score for i in context.items) == 0.2  # the lowest scores went


def test_a_context_gathered_over_60k_has_its_long_bodies_masked_first_and_keeps_its_breadth() -> None:
    context = _sized(70_000, 100)
    _, taken = thin_research(context, H)
    assert taken == ["masked long bodies (gathered 70000 > 60000 tokens)"]
    assert len(context.items) == 100 and context.stats().estimated_tokens <= 40_000


def test_over_80k_it_is_compacted_too_and_the_80k_ceiling_holds_even_against_the_kept_floor() -> None:
    context = _sized(90_000, 100)
    context.conversation = [f"line {i}" for i in range(10)]
    _, taken = thin_research(context, H)
    assert [t.split(" (")[0] for t in taken[:2]] == ["masked long bodies", "compacted"]
    assert len(context.conversation) == H.query.context_compact_conversation

    # Bodies masked to 200k characters stay huge: the ceiling drops items below the kept floor.
    huge = _context("q", *(ContextItem(kind="entity", id=f"ent_{i}", text="y" * 200_000, score=1.0) for i in range(3)))
    _, taken = thin_research(huge, H.with_overrides({"context_summary_body_chars": 200_000}))
    assert taken[-1] == "dropped 2 more items to the 80000-token ceiling"
    assert len(huge.items) == 1 and huge.stats().estimated_tokens <= 80_000


def test_protected_items_are_dropped_last() -> None:
    context = _sized(50_000, 100)
    _, _ = thin_research(context, H, frozenset({"e0", "e1"}))
    assert {"e0", "e1"} <= {i.id for i in context.items}

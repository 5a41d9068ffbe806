"""Research mode's pure parts: the question's clauses, the offline plan, evaluation and synthesis, and
thinning at the 40k / 60k / 80k token budgets."""

from __future__ import annotations

from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.offline.research import clauses
from engram.model.context import QueryContext
from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.model.queries import ContextItem, InfoRequest
from engram.model.research import EvidenceConflict, SubQuestion
from engram.ports import ContextDigest, DigestedItem
from engram.query.budget import apply_digest, thin_research

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


# ---------------------------------------------------------------- 80k tokens: the LLM compaction digest
def _gathered(tokens: int) -> QueryContext:
    """`_sized`'s context with a conversation and items whose text has runs of whitespace to collapse."""
    context = _sized(tokens, 100)
    context.items = [i.model_copy(update={"text": "a  b\n c " + i.text}) for i in context.items]
    context.conversation = [f"- dana (1 May 2026): line {i}" for i in range(10)]
    return context


def test_the_digest_is_asked_only_past_80k_and_the_offline_models_digest_compacts_exactly_as_the_rules_do() -> None:
    asked: list[int] = []

    def offline(context: QueryContext) -> ContextDigest:
        asked.append(context.stats().estimated_tokens)
        return LLM.digest(context, keep_lines=H.query.context_compact_conversation).value

    for tokens in (39_000, 50_000, 70_000):
        thin_research(_gathered(tokens), H, digest=offline)
    assert asked == []  # 40k and 60k have their own measures: no model call
    by_model, by_rules = _gathered(90_000), _gathered(90_000)
    assert thin_research(by_model, H, digest=offline) == thin_research(by_rules, H)
    assert len(asked) == 1 and by_model == by_rules
    assert by_model.conversation == [f"- dana (1 May 2026): line {i}" for i in (7, 8, 9)]


def test_the_models_digest_replaces_the_conversation_and_condenses_only_the_items_it_names_by_kind_and_id() -> None:
    context = _context("Where does Dana live?",
                       ContextItem(kind="event", id="e1", text="user: so, um, I moved to Lisbon last spring, yes."),
                       ContextItem(kind="semantic", id="e1", text="Dana lives_in Lisbon"),  # one id, another kind
                       ContextItem(kind="semantic", id="s2", text="Dana works at Acme"))
    context.conversation = ["- dana (1 May 2026): hi", "- dana (1 May 2026): I moved to Lisbon last spring."]
    made = ContextDigest(conversation=["- dana: moved to Lisbon last spring."], items=[
        DigestedItem(kind="event", id="e1", text="Dana moved to Lisbon last spring."),
        DigestedItem(kind="semantic", id="s2", text="Dana works at Acme Corporation, the robotics firm"),  # longer
        DigestedItem(kind="semantic", id="s9", text="Dana lives in Porto"),  # no such item: never added
    ])
    assert apply_digest(context, made) == 1
    assert context.conversation == ["- dana: moved to Lisbon last spring."]
    assert [(i.kind, i.id, i.text) for i in context.items] == [
        ("event", "e1", "Dana moved to Lisbon last spring."), ("semantic", "e1", "Dana lives_in Lisbon"),
        ("semantic", "s2", "Dana works at Acme")]


def test_a_digest_that_failed_leaves_the_compaction_to_the_rules_and_the_ceiling_still_holds() -> None:
    by_rules, failed = _gathered(90_000), _gathered(90_000)
    _, expected = thin_research(by_rules, H)
    _, taken = thin_research(failed, H, digest=lambda context: None)
    assert failed == by_rules
    assert taken[1].startswith("compacted (gathered ") and taken[1].endswith("by rules: the digest call failed)")
    assert [t for n, t in enumerate(taken) if n != 1] == [t for n, t in enumerate(expected) if n != 1]
    assert failed.stats().estimated_tokens <= 80_000

"""Spend control and stage routing over the model port: the budget is checked before every call, each call's tokens
are counted by stage, and a spent budget hands the call to the offline engine, labelled."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import ValidationError

from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.staged_llm import StagedLLM
from engram.app.factory import build_offline_llm
from engram.config import Settings, parse_stage_model
from engram.errors import ExtractionRejected
from engram.model.context import QueryContext
from engram.model.overrides import WorldConfig, world_overrides
from engram.ports import Usage
from engram.ports.usage import STAGE_OF, MeteredLLM
from tests.fakes.usage import InMemoryUsageLedger, SpendingLLM

DAY = date(2026, 3, 1)


def _metered(llm: SpendingLLM, ledger: InMemoryUsageLedger, budget: int | None) -> MeteredLLM:
    return MeteredLLM(llm, OfflineLLM(), ledger, "w1", budget, today=lambda: DAY)


def _context() -> QueryContext:
    return QueryContext(world_id="w1", query_id="q1", question="Where does Ana live?")


def test_every_call_is_counted_by_stage_and_world() -> None:
    ledger, llm = InMemoryUsageLedger(), SpendingLLM()
    metered = _metered(llm, ledger, None)

    metered.answer(_context(), can_request_more=False, remaining_info_requests=0, temperature=0.0)
    metered.summarize("user ana", ["Ana moved to Kyoto."])

    rows = {r.stage: (r.input_tokens, r.output_tokens, r.calls) for r in ledger.usage_since("w1", DAY)}
    assert rows == {"answer": (100, 20, 1), "summarize": (100, 20, 1)}
    assert ledger.usage_since("w2", DAY) == []


def test_once_the_budget_is_spent_the_offline_engine_answers_and_says_why() -> None:
    ledger, llm = InMemoryUsageLedger(), SpendingLLM()
    metered = _metered(llm, ledger, 240)  # two calls of 120 spend it

    replies = [metered.answer(_context(), can_request_more=False, remaining_info_requests=0, temperature=0.0)
               for _ in range(4)]

    assert llm.asked == ["answer", "answer"]  # the model is not asked once the budget is spent
    assert [r.fallback for r in replies] == [None, None, "budget", "budget"]
    assert replies[2].model == OfflineLLM.name and replies[2].usage == Usage()
    assert ledger.tokens_used("w1", DAY) == 240  # the offline engine spends nothing


def test_a_zero_budget_never_reaches_the_model() -> None:
    ledger, llm = InMemoryUsageLedger(), SpendingLLM()

    reply = _metered(llm, ledger, 0).summarize("user ana", ["Ana moved to Kyoto."])

    assert llm.asked == [] and reply.fallback == "budget" and reply.value.summary


def test_tokens_spent_on_output_rejected_twice_are_counted_too() -> None:
    ledger, llm = InMemoryUsageLedger(), SpendingLLM(reject=True)

    with pytest.raises(ExtractionRejected):
        _metered(llm, ledger, None).summarize("user ana", ["Ana moved to Kyoto."])

    [row] = ledger.usage_since("w1", DAY)
    assert (row.stage, row.input_tokens, row.output_tokens, row.calls) == ("summarize", 200, 40, 2)


def test_each_port_method_goes_to_its_stage_model_and_the_rest_to_the_default() -> None:
    default, answers = SpendingLLM(), SpendingLLM()
    staged = StagedLLM(default, {"answer": answers})

    staged.force_answer(_context(), temperature=0.0)
    staged.summarize("user ana", ["Ana moved to Kyoto."])

    assert answers.asked == [] and default.asked == ["summarize"]  # force_answer is not recorded by SpendingLLM
    assert staged.model_for("force_answer") is answers and staged.model_for("synthesize") is default
    assert set(STAGE_OF.values()) == {"extract", "answer", "summarize", "research"}


def test_the_research_compaction_digest_runs_on_the_summarize_stages_model_and_is_counted_there() -> None:
    default, cheap = SpendingLLM(), SpendingLLM()
    staged = StagedLLM(default, {"summarize": cheap})
    ledger = InMemoryUsageLedger()

    MeteredLLM(staged, OfflineLLM(), ledger, "w1", None, today=lambda: DAY).digest(_context(), keep_lines=3)

    assert (STAGE_OF["digest"], cheap.asked, default.asked) == ("summarize", ["digest"], [])
    [row] = ledger.usage_since("w1", DAY)
    assert (row.stage, row.input_tokens, row.output_tokens, row.calls) == ("summarize", 100, 20, 1)


@pytest.mark.parametrize(("value", "parsed"), [("openai:qwen2.5:7b", ("openai", "qwen2.5:7b")),
                                               ("anthropic:claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
                                               ("offline", ("offline", None))])
def test_a_stage_model_is_provider_then_model_and_the_model_may_hold_colons(value: str, parsed: tuple) -> None:
    assert parse_stage_model(value) == parsed


@pytest.mark.parametrize("value", ["gpt-4o", "openai:", "ollama:llama3", "offline:x", ""])
def test_a_stage_model_that_names_no_known_provider_is_refused_at_start(value: str) -> None:
    with pytest.raises(ValueError, match="provider:model"):
        Settings(model_answer=value)


def test_nothing_is_metered_where_every_stage_runs_offline() -> None:
    assert build_offline_llm(Settings(llm="offline")) is None
    assert build_offline_llm(Settings(llm="openai", model_extract="offline", model_answer="offline",
                                      model_summarize="offline", model_research="offline")) is None
    assert isinstance(build_offline_llm(Settings(llm="offline", model_answer="openai:qwen2.5:7b")), OfflineLLM)


def test_a_worlds_budget_is_a_config_key_of_its_own_validated_and_a_bad_stored_one_is_ignored() -> None:
    assert WorldConfig.model_validate({"llm_budget": 50_000}).llm_budget == 50_000
    with pytest.raises(ValidationError):
        WorldConfig.model_validate({"llm_budget": -1})
    config, ignored = world_overrides({"llm_budget": "lots", "heuristics": {"rrf_k": 30}})
    assert config.llm_budget is None and list(ignored) == ["llm_budget"] and config.heuristics == {"rrf_k": 30}

"""The LLM port over the `anthropic` SDK: the Anthropic API or Anthropic on Bedrock.

Structured output is forced tool use: each task offers tools whose input schema is a pydantic
model's JSON schema, and the reply's tool input is validated against that model. Invalid output is
retried once, then raised as `ExtractionRejected`. SDK errors become engram errors here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import anthropic
from pydantic import BaseModel, Field, ValidationError

from engram.config import Settings
from engram.errors import ConfigurationError, ExtractionRejected, InvalidInput, LLMUnavailable
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, NeedsMoreInfo, QuestionSignal
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.ports import (
    LLM,
    ConflictCheck,
    ExtractionResult,
    KnownFact,
    LLMReply,
    Reference,
    Usage,
    WindowEvent,
    WrittenSummary,
)
from engram.prompts import answer as answer_prompt
from engram.prompts import conflicts as conflicts_prompt
from engram.prompts import extraction as extraction_prompt
from engram.prompts import inflection as inflection_prompt
from engram.prompts import research as research_prompt
from engram.prompts import summary as summary_prompt
from engram.rules.ontology import PredicateMap

M = TypeVar("M", bound=BaseModel)


class CitedItem(BaseModel):
    id: str = Field(description="a context item's id")
    contribution: float = Field(default=1.0, ge=0.0, le=1.0, description="the share of the answer resting on it")


class AnswerTool(BaseModel):
    content: str
    confidence: float = Field(ge=0.0, le=1.0)
    sources: list[CitedItem | str] = Field(default_factory=list, description="the context items relied on")
    suggested_follow_ups: list[str] = Field(default_factory=list, max_length=3)
    question_signals: list[QuestionSignal] = Field(default_factory=list, description="what the question itself carries")


class RequestInfoTool(NeedsMoreInfo):
    question_signals: list[QuestionSignal] = Field(default_factory=list, description="what the question itself carries")


class SynthesisTool(BaseModel):
    content: str = Field(min_length=1)
    confidence: float = Field(ge=0.0, le=1.0)
    sources: list[CitedItem | str] = Field(default_factory=list, description="the context items relied on")
    conflicts_named: list[str] = Field(default_factory=list, description="the conflicts named in content: C1, C2...")
    suggested_follow_ups: list[str] = Field(default_factory=list, max_length=3)


_TOOLS: dict[str, tuple[type[BaseModel], str]] = {
    "record_facts": (ExtractionResult, "Record the facts the messages state."),
    "answer": (AnswerTool, "Answer the question from the context, citing item ids."),
    "request_info": (RequestInfoTool, "Ask for information the context lacks, through declared capabilities."),
    "write_summary": (WrittenSummary, "Write the summary and name the facts it confirms."),
    "report_inflection": (InflectionAssessment, "Report the inflection point the conversation is at, or none."),
    "report_conflicts": (ConflictCheck, "Report the pairs of facts that cannot both be true."),
    "plan_research": (ResearchPlan, "Report the sub-questions of the research and the requests answering each."),
    "evaluate_research": (ResearchEvaluation, "Report which sub-questions are answered and what to gather next."),
    "synthesize_research": (SynthesisTool, "Answer the researched question, citing item ids and naming conflicts."),
}


def _tool(name: str) -> dict[str, Any]:
    model, description = _TOOLS[name]
    return {"name": name, "description": description, "input_schema": model.model_json_schema()}


class AnthropicLLM:
    def __init__(self, client: anthropic.Anthropic | anthropic.AnthropicBedrock, *, model: str, fast_model: str,
                 max_tokens: int = 2048) -> None:
        self.client = client
        self.model = model
        self.fast_model = fast_model
        self.max_tokens = max_tokens
        self.name = model

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        # The world's ontology is a second system block: instructions and ontology are the cached prefix.
        system = [extraction_prompt.SYSTEM, extraction_prompt.ontology(predicates)] if predicates \
            else extraction_prompt.SYSTEM
        value, usage = self._call(self.fast_model, system,
                                  extraction_prompt.messages(events, known_entities, references, candidates),
                                  ["record_facts"], "record_facts", temperature=0.0)
        assert isinstance(value, ExtractionResult)
        # A free predicate the ontology has a word for (a synonym the model kept) is recorded as the ontology's.
        as_ontology = PredicateMap(predicates)
        value = value.model_copy(update={"triples": [t.model_copy(update={"predicate": as_ontology(t.predicate)})
                                                     for t in value.triples]})
        return LLMReply(value, usage, self.fast_model)

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        tools = ["answer", "request_info"] if can_request_more else ["answer"]
        remaining = remaining_info_requests if can_request_more else None
        # Both tools offered and `tool_choice: any`: the model must call one of the two.
        value, usage = self._call(self.model, answer_prompt.SYSTEM, answer_prompt.messages(context, remaining),
                                  tools, None if can_request_more else "answer", temperature=temperature)
        signals = tuple(getattr(value, "question_signals", ()))
        if isinstance(value, RequestInfoTool):
            more = NeedsMoreInfo(info_requests=value.info_requests, reason=value.reason)
            return LLMReply(more, usage, self.model, signals)
        assert isinstance(value, AnswerTool)
        return LLMReply(_to_answer(value, context), usage, self.model, signals)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        value, usage = self._call(self.model, answer_prompt.SYSTEM, answer_prompt.messages(context, None),
                                  ["answer"], "answer", temperature=temperature)
        assert isinstance(value, AnswerTool)
        return LLMReply(_to_answer(value, context).model_copy(update={"forced": True}), usage, self.model,
                        tuple(value.question_signals))

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        value, usage = self._call(self.fast_model, summary_prompt.SYSTEM,
                                  summary_prompt.messages(scope, items, facts), ["write_summary"], "write_summary",
                                  temperature=0.0)
        assert isinstance(value, WrittenSummary)
        offered = {f.memory_id for f in facts}  # the model cannot confirm a fact it was not shown
        confirmed = [i for i in dict.fromkeys(value.confirmed_fact_ids) if i in offered]
        return LLMReply(value.model_copy(update={"confirmed_fact_ids": confirmed}), usage, self.fast_model)

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        value, usage = self._call(self.fast_model, conflicts_prompt.SYSTEM,
                                  conflicts_prompt.messages(new_facts, known_facts), ["report_conflicts"],
                                  "report_conflicts", temperature=0.0)
        assert isinstance(value, ConflictCheck)
        return LLMReply(value, usage, self.fast_model)

    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        # `h` is the offline model's: the LLM reads the conversation, the threshold is applied by the caller.
        value, usage = self._call(self.fast_model, inflection_prompt.SYSTEM,
                                  inflection_prompt.messages(messages, signals), ["report_inflection"],
                                  "report_inflection", temperature=0.0)
        assert isinstance(value, InflectionAssessment)
        return LLMReply(value, usage, self.fast_model)

    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        value, usage = self._call(self.fast_model, research_prompt.PLAN_SYSTEM,
                                  research_prompt.plan_messages(context, max_sub_questions), ["plan_research"],
                                  "plan_research", temperature=0.0)
        assert isinstance(value, ResearchPlan)
        return LLMReply(value, usage, self.fast_model)

    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        value, usage = self._call(self.fast_model, research_prompt.EVALUATE_SYSTEM,
                                  research_prompt.evaluate_messages(context, sub_questions, can_continue,
                                                                    max_follow_ups),
                                  ["evaluate_research"], "evaluate_research", temperature=0.0)
        assert isinstance(value, ResearchEvaluation)
        if not can_continue:  # a follow-up the round cannot run is not kept
            value = value.model_copy(update={"follow_ups": []})
        return LLMReply(value, usage, self.fast_model)

    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        value, usage = self._call(self.model, research_prompt.SYNTHESIZE_SYSTEM,
                                  research_prompt.synthesize_messages(context, sub_questions, conflicts),
                                  ["synthesize_research"], "synthesize_research", temperature=temperature)
        assert isinstance(value, SynthesisTool)
        answer = _to_answer(AnswerTool(content=value.content, confidence=value.confidence, sources=value.sources,
                                       suggested_follow_ups=value.suggested_follow_ups), context)
        # A conflict the model left unnamed is named here: the synthesis never hides disagreeing evidence.
        named = {c.strip().upper() for c in value.conflicts_named}
        unnamed = [line for n, line in enumerate(research_prompt.conflict_lines(conflicts), 1) if f"C{n}" not in named]
        if unnamed:
            answer = answer.model_copy(update={"content": answer.content + "\n\nConflicting evidence not addressed "
                                               "above:\n" + "\n".join(unnamed)})
        return LLMReply(answer, usage, self.model)

    def _call(self, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str], forced: str | None,
              *, temperature: float) -> tuple[BaseModel, Usage]:
        """One forced-tool request, validated; on invalid output one corrective retry that shows the model
        its own reply and what was wrong with it, then ExtractionRejected."""
        usage = Usage()
        problem = ""
        conversation = list(messages)
        for _attempt in range(2):
            response = self._create(model=model, system=system, messages=conversation, tools=tools, forced=forced,
                                    temperature=temperature)
            usage = usage + _usage(response.usage)
            block = next((b for b in response.content if b.type == "tool_use" and b.name in tools), None)
            if block is None:
                problem = f"no tool call among {tools} (stop_reason {response.stop_reason})"
                conversation = [*messages, {"role": "assistant", "content": _replayed(response.content)},
                                {"role": "user", "content": f"Reply by calling one of these tools: {', '.join(tools)}."}]
                continue
            try:
                return _TOOLS[block.name][0].model_validate(block.input), usage
            except ValidationError as exc:
                problem = f"invalid {block.name} input: {exc.error_count()} errors"
                errors = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                                   for e in exc.errors(include_url=False))
                conversation = [*messages, {"role": "assistant", "content": _replayed(response.content)},
                                {"role": "user", "content": [{
                                    "type": "tool_result", "tool_use_id": block.id, "is_error": True,
                                    "content": f"The {block.name} input is invalid ({errors}). Call the tool again "
                                               "with input that follows its schema."}]}]
        raise ExtractionRejected(f"the model's output was rejected twice: {problem}", details={"model": model})

    def _create(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
                forced: str | None, temperature: float) -> Any:
        # `temperature` is accepted for the port's sake; this SDK's Messages API no longer takes it.
        choice = {"type": "tool", "name": forced} if forced else {"type": "any"}
        texts = [system] if isinstance(system, str) else system
        blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        blocks[-1]["cache_control"] = {"type": "ephemeral"}  # the prefix ends after the last system block
        try:
            request: dict[str, Any] = {
                "model": model, "max_tokens": self.max_tokens, "messages": messages, "tool_choice": choice,
                "system": blocks,
                "tools": [_tool(t) for t in tools],
            }
            return self.client.messages.create(**request)
        except anthropic.RateLimitError as exc:
            raise LLMUnavailable("the model provider is rate limiting", details=_error_details(exc)) from exc
        except anthropic.APITimeoutError as exc:
            raise LLMUnavailable("the model provider timed out") from exc
        except anthropic.APIConnectionError as exc:
            raise LLMUnavailable("the model provider is unreachable") from exc
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError) as exc:
            raise ConfigurationError(f"the model provider refused the credentials or model: {exc.message}",
                                     details=_error_details(exc)) from exc
        except anthropic.BadRequestError as exc:
            raise InvalidInput(f"the model provider rejected the request: {exc.message}",
                               details=_error_details(exc)) from exc
        except anthropic.APIStatusError as exc:  # 500, 529 overloaded and other server errors
            raise LLMUnavailable(f"the model provider failed ({exc.status_code})", details=_error_details(exc)) from exc


def _usage(usage: Any) -> Usage:
    """Tokens of one call as the provider counts them: `input_tokens` are the uncached ones."""
    return Usage(usage.input_tokens, usage.output_tokens, 1, getattr(usage, "cache_read_input_tokens", None) or 0,
                 getattr(usage, "cache_creation_input_tokens", None) or 0)


def _replayed(content: Sequence[Any]) -> list[dict[str, Any]]:
    """The assistant's reply as the next request's history (text and tool_use blocks)."""
    return [b.model_dump(include={"type", "text"}) if b.type == "text"
            else b.model_dump(include={"type", "id", "name", "input"}) for b in content if b.type in ("text", "tool_use")]


def _error_details(exc: anthropic.APIStatusError) -> dict[str, Any]:
    return {"status": exc.status_code, "retry_after": exc.response.headers.get("retry-after")}


def _to_answer(tool: AnswerTool, context: QueryContext) -> Answer:
    """An Answer citing only ids present in the context (the model cannot invent a source)."""
    by_id = {i.id: i for i in context.items}
    cited: dict[str, CitedItem] = {}  # the first citation of an id counts
    for c in tool.sources:
        cited.setdefault(c if isinstance(c, str) else c.id, CitedItem(id=c) if isinstance(c, str) else c)
    sources: list[dict[str, Any]] = []
    for c in cited.values():
        item = by_id.get(c.id)
        if item is not None:
            kind = "semantic" if item.kind == "relationship" else item.kind
            sources.append({"kind": kind, "id": item.id, "excerpt": item.text[:200], "score": item.score,
                            "contribution": c.contribution})
    return Answer.model_validate({"content": tool.content, "confidence": tool.confidence, "sources": sources,
                                  "suggested_follow_ups": tool.suggested_follow_ups})


def build_llm(settings: Settings) -> LLM:
    """The model named by `ENGRAM_LLM` (default: anthropic with a key, else offline)."""
    kind = settings.resolved_llm()
    if kind == "offline":
        from engram.adapters.offline.llm import OfflineLLM

        return OfflineLLM()
    if kind == "anthropic":
        if not settings.anthropic_api_key:
            raise ConfigurationError("ENGRAM_LLM=anthropic needs ANTHROPIC_API_KEY")
        client: anthropic.Anthropic | anthropic.AnthropicBedrock = anthropic.Anthropic(
            api_key=settings.anthropic_api_key, base_url=settings.anthropic_base_url,
            max_retries=settings.llm_max_retries, timeout=settings.llm_timeout_s)
        return AnthropicLLM(client, model=settings.anthropic_model, fast_model=settings.anthropic_fast_model)
    client = anthropic.AnthropicBedrock(aws_region=settings.bedrock_region, max_retries=settings.llm_max_retries,
                                        timeout=settings.llm_timeout_s)
    return AnthropicLLM(client, model=settings.bedrock_model, fast_model=settings.bedrock_fast_model)

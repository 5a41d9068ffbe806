"""The model port as structured requests, for any provider: each task is a tool whose input schema is a pydantic
model's JSON schema; the reply is validated against that model, invalid output retried once with what was wrong with
it, then raised as `ExtractionRejected` (the caller keeps the window and marks it failed).

A provider adapter (`anthropic`, `openai_compat`) subclasses `StructuredLLM` and says only how one request is sent
(`_send`) and how a corrective retry is written into the conversation (`_corrected`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from engram.errors import ExtractionRejected
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, NeedsMoreInfo, QuestionSignal
from engram.model.research import EvidenceConflict, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.ports import (
    ConflictCheck,
    ContextDigest,
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
from engram.prompts import digest as digest_prompt
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


TOOLS: dict[str, tuple[type[BaseModel], str]] = {
    "record_facts": (ExtractionResult, "Record the facts the messages state."),
    "answer": (AnswerTool, "Answer the question from the context, citing item ids."),
    "request_info": (RequestInfoTool, answer_prompt.REQUEST_INFO),
    "write_summary": (WrittenSummary, "Write the summary and name the facts it confirms."),
    "report_inflection": (InflectionAssessment, "Report the inflection point the conversation is at, or none."),
    "report_conflicts": (ConflictCheck, "Report the pairs of facts that cannot both be true."),
    "plan_research": (ResearchPlan, "Report the sub-questions of the research and the requests answering each."),
    "evaluate_research": (ResearchEvaluation, "Report which sub-questions are answered and what to gather next."),
    "synthesize_research": (SynthesisTool, "Answer the researched question, citing item ids and naming conflicts."),
    "digest_context": (ContextDigest, "Report the compacted context: the conversation digested, items condensed."),
}


@dataclass(frozen=True)
class Attempt:
    """One request's outcome as the retry loop reads it: the tool the reply called and its input, or why none."""

    tool: str | None  # None: the reply called no offered tool (`problem` says what it did instead)
    payload: Any
    usage: Usage
    raw: Any  # the provider's reply, for the corrective request's history
    problem: str = ""


class StructuredLLM:
    """The LLM port over a provider that can force structured output. `model` answers; `fast_model` extracts,
    summarizes, checks conflicts and inflections, plans and evaluates research, digests a research context."""

    def __init__(self, *, model: str, fast_model: str) -> None:
        self.model = model
        self.fast_model = fast_model
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
        return LLMReply(to_answer(value, context), usage, self.model, signals)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        value, usage = self._call(self.model, answer_prompt.SYSTEM, answer_prompt.messages(context, None),
                                  ["answer"], "answer", temperature=temperature)
        assert isinstance(value, AnswerTool)
        return LLMReply(to_answer(value, context).model_copy(update={"forced": True}), usage, self.model,
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
        answer = to_answer(AnswerTool(content=value.content, confidence=value.confidence, sources=value.sources,
                                       suggested_follow_ups=value.suggested_follow_ups), context)
        # A conflict the model left unnamed is named here: the synthesis never hides disagreeing evidence.
        named = {c.strip().upper() for c in value.conflicts_named}
        unnamed = [line for n, line in enumerate(research_prompt.conflict_lines(conflicts), 1) if f"C{n}" not in named]
        if unnamed:
            answer = answer.model_copy(update={"content": answer.content + "\n\nConflicting evidence not addressed "
                                               "above:\n" + "\n".join(unnamed)})
        return LLMReply(answer, usage, self.model)

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        value, usage = self._call(self.fast_model, digest_prompt.SYSTEM, digest_prompt.messages(context, keep_lines),
                                  ["digest_context"], "digest_context", temperature=0.0)
        assert isinstance(value, ContextDigest)
        return LLMReply(value, usage, self.fast_model)


    def _call(self, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
              forced: str | None, *, temperature: float) -> tuple[BaseModel, Usage]:
        """One forced-tool request, validated; on invalid output one corrective retry that shows the model
        its own reply and what was wrong with it, then ExtractionRejected."""
        usage = Usage()
        problem = ""
        conversation = list(messages)
        for _attempt in range(2):
            attempt = self._send(model=model, system=system, messages=conversation, tools=tools, forced=forced,
                                 temperature=temperature)
            usage = usage + attempt.usage
            if attempt.tool is None or attempt.tool not in tools:
                problem = attempt.problem or f"no tool call among {tools}"
                conversation = self._corrected(messages, attempt, f"Reply by calling one of these tools: "
                                                                  f"{', '.join(tools)}.")
                continue
            try:
                return TOOLS[attempt.tool][0].model_validate(attempt.payload), usage
            except ValidationError as exc:
                problem = f"invalid {attempt.tool} input: {exc.error_count()} errors"
                errors = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                                   for e in exc.errors(include_url=False))
                conversation = self._corrected(messages, attempt, f"The {attempt.tool} input is invalid ({errors}). "
                                                                  "Call the tool again with input that follows its "
                                                                  "schema.")
        # The tokens spent on the rejected output ride on the error: the usage ledger counts them too.
        raise ExtractionRejected(f"the model's output was rejected twice: {problem}",
                                 details={"model": model, **asdict(usage)})

    def _send(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
              forced: str | None, temperature: float) -> Attempt:
        """One request offering `tools` (`forced`: that one only; None: any of them), its SDK errors translated."""
        raise NotImplementedError

    def _corrected(self, messages: list[dict[str, Any]], attempt: Attempt, correction: str) -> list[dict[str, Any]]:
        """The retry's conversation: `messages`, the model's rejected reply, and `correction`."""
        raise NotImplementedError


# The tools of every answer round: the system prompt says what their fields are, so their schemas carry no
# descriptions and no defaults (each round resends them; validation still applies the defaults).
_BARE = frozenset({"answer", "request_info"})


def tool_schema(name: str) -> dict[str, Any]:
    """A tool's input schema: its pydantic model's JSON schema, lean (and bare for the answer round's tools). The
    question's signals are asked for on `answer` only, the call that ends every question (request_info still
    accepts them)."""
    schema = lean(TOOLS[name][0].model_json_schema())
    if name == "request_info":  # the capabilities' names are the description's lines: no enum restating them
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "question_signals"}
        schema["$defs"] = {k: v for k, v in schema["$defs"].items() if k != "QuestionSignal"}
        schema["$defs"]["InfoRequest"]["properties"]["capability"] = {"type": "string"}
    if name == "answer":  # a source is asked for as {id, contribution}; a bare id is still accepted
        schema["properties"]["sources"]["items"] = {"$ref": "#/$defs/CitedItem"}
    return bare(schema) if name in _BARE else schema


def without(schema: Any, keywords: frozenset[str]) -> Any:
    """A JSON schema without the given keywords (properties of those names, under `properties`, stay)."""
    if isinstance(schema, list):
        return [without(s, keywords) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: ({n: without(v, keywords) for n, v in value.items()} if k in ("properties", "$defs")
                else without(value, keywords))
            for k, value in schema.items() if k not in keywords}


_UNREAD = frozenset({"description", "default"})


def bare(schema: Any) -> Any:
    """A JSON schema without `description`s and `default`s (properties of those names, under `properties`, stay)."""
    return without(schema, _UNREAD)


def lean(schema: Any) -> Any:
    """A JSON schema without `title`s: pydantic's restatements of the property names, sent with every request and
    read by no model (a property named `title`, under `properties`, stays)."""
    if isinstance(schema, list):
        return [lean(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: ({n: lean(v) for n, v in value.items()} if k in ("properties", "$defs") else lean(value))
            for k, value in schema.items() if k != "title"}


def to_answer(tool: AnswerTool, context: QueryContext) -> Answer:
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

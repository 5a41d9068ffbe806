"""The usage ledger in memory, and a model that records what it was asked and spends what it is told to."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date

from engram.adapters.offline.llm import OfflineLLM
from engram.config import Stage
from engram.errors import ExtractionRejected
from engram.model.context import QueryContext
from engram.model.queries import Answer, NeedsMoreInfo
from engram.model.usage import StageUsage
from engram.ports import ContextDigest, LLMReply, Usage, WrittenSummary
from engram.ports.llm import KnownFact

PER_CALL = Usage(100, 20, 1)


class InMemoryUsageLedger:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, date, Stage], Usage] = defaultdict(Usage)

    def record_usage(self, world_id: str, day: date, stage: Stage, usage: Usage) -> None:
        self.rows[world_id, day, stage] = self.rows[world_id, day, stage] + usage

    def tokens_used(self, world_id: str, day: date) -> int:
        return sum(u.sent_tokens + u.output_tokens for (w, d, _), u in self.rows.items() if w == world_id and d == day)

    def usage_since(self, world_id: str, first_day: date) -> list[StageUsage]:
        return [StageUsage(day=d, stage=s, input_tokens=u.sent_tokens, output_tokens=u.output_tokens, calls=u.calls)
                for (w, d, s), u in sorted(self.rows.items()) if w == world_id and d >= first_day]


class SpendingLLM(OfflineLLM):
    """The offline engine's replies, each costing `per_call` (100 in, 20 out); `reject` makes a call fail twice."""

    name = "spending"

    def __init__(self, per_call: Usage = PER_CALL, *, reject: bool = False) -> None:
        super().__init__()
        self.per_call, self.reject = per_call, reject
        self.asked: list[str] = []

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        self.asked.append("answer")
        reply = super().answer(context, can_request_more=can_request_more,
                               remaining_info_requests=remaining_info_requests, temperature=temperature)
        return LLMReply(reply.value, self.per_call, self.name)

    def summarize(self, scope: str, items: Sequence[str], facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        self.asked.append("summarize")
        if self.reject:
            spent = self.per_call + self.per_call
            raise ExtractionRejected("rejected twice", details={"model": self.name, "input_tokens": spent.input_tokens,
                                                                "output_tokens": spent.output_tokens,
                                                                "calls": spent.calls})
        return LLMReply(super().summarize(scope, items, facts).value, self.per_call, self.name)

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        self.asked.append("digest")
        return LLMReply(super().digest(context, keep_lines=keep_lines).value, self.per_call, self.name)

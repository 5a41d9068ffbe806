"""`engram bench qa`: question answering on LoCoMo, engram's answers next to the text of the best BM25 turn.

The conversations are ingested as `engram bench retrieval` ingests them (the same embedded stack, the same
cache). Each question is asked through the real query loop by the speaker it names (a world's users read only
their own memories: a question about Caroline is asked of Caroline's memory; one naming neither speaker, of the
first). Scoring follows the LoCoMo paper's code (snap-research/locomo, task_eval/evaluation.py): answers are
normalised (lowercase, commas, punctuation and the articles "a", "an", "the" and "and" removed) and
Porter-stemmed; categories 2 to 4 score the token F1 of the answer against the gold answer (category 3 against
the part before the first ";"); category 1 splits both at commas and averages, over the gold parts, the best F1
of any predicted part; category 5 (adversarial: never said) is right when the answer abstains, and is reported
as the share answered "I don't know". Tokens per question: the model's usage when one is configured; for the
offline model (which sends nothing) the characters of the requests the Anthropic adapter would send for its answer
calls (built by the adapter's own request builder), over four: no tokenizer of Anthropic's models is available
offline. The prefix (tools and system) is reported apart: the provider caches it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import string
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.bench.baselines import BM25Baseline
from engram.bench.locomo import CATEGORIES, Conversation, Question, load, world_of
from engram.bench.progress import ConsoleProgress, Progress
from engram.bench.retrieval import _data_dir, _fingerprint, _ingest_all, turn_text
from engram.model.context import QueryContext
from engram.model.queries import Answer, NeedsMoreInfo, QueryRequest
from engram.ports import LLM, LLMReply
from engram.ports.clients import Clients

SYSTEMS = ("engram", "bm25-turn")
CHARS_PER_TOKEN = 4.0
ABSTAINING = ("i don't know", "not mentioned", "no information available")
BUCKETS = (0.0, 0.2, 0.45, 0.75, 1.01)  # confidence buckets of the reliability table: low, medium, high split
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


# ---------------------------------------------------------------- scoring (the LoCoMo paper's)
def normalize(text: str) -> str:
    """Lowercase, without commas, punctuation and the words "a", "an", "the" and "and"."""
    text = "".join(ch for ch in text.replace(",", "").lower() if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _stems(text: str) -> list[str]:
    import snowballstemmer

    return list(snowballstemmer.stemmer("porter").stemWords(normalize(text).split()))


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of the normalised, Porter-stemmed words."""
    predicted, wanted = _stems(prediction), _stems(gold)
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Category 1: each comma-separated gold part scored by its best predicted part, averaged."""
    predicted = [p.strip() for p in prediction.split(",")]
    parts = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in predicted) for g in parts) / len(parts)


def abstains(answer: str) -> bool:
    return any(words in answer.lower() for words in ABSTAINING)


def score(prediction: str, question: Question) -> float:
    """The question's score as the paper computes it (category 5: 1 when the answer abstains)."""
    if question.category == "adversarial":
        return 1.0 if abstains(prediction) else 0.0
    if question.category == "multi-hop":
        return multi_answer_f1(prediction, question.answer)
    gold = question.answer.split(";")[0].strip() if question.category == "open-domain" else question.answer
    return token_f1(prediction, gold)


# ---------------------------------------------------------------- answering
@dataclass
class Reply:
    """One system's answer to one question."""

    sample_id: str
    category: str
    question: str
    gold: str
    answer: str
    score: float
    confidence: float | None = None
    tokens: float = 0.0  # all the tokens the answer calls sent, the cached prefix included
    cached_tokens: float = 0.0  # of which the prefix a provider caches (tools and system)
    calls: int = 0


@dataclass
class Sent:
    """What the answer calls of one question sent, in characters: the cacheable prefix (tools and system) and the
    rest (the messages)."""

    prefix: int = 0
    messages: int = 0
    calls: int = 0


class PromptMeter:
    """Wraps a model: for each answer call, builds the request the Anthropic adapter would send for it (its own
    request builder, the model's reply stubbed: nothing is sent) and counts its characters; every call, the
    wrapped model's answer included, passes through."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.name = inner.name
        self.sent = Sent()
        self.recorder: Any = _recorder()

    @property
    def chars(self) -> int:
        return self.sent.prefix + self.sent.messages

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        self.recorder.answer(context, can_request_more=can_request_more,
                             remaining_info_requests=remaining_info_requests, temperature=temperature)
        self._count()
        return self.inner.answer(context, can_request_more=can_request_more,
                                 remaining_info_requests=remaining_info_requests, temperature=temperature)

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        self.recorder.force_answer(context, temperature=temperature)
        self._count()
        return self.inner.force_answer(context, temperature=temperature)

    def _count(self) -> None:
        body = self.recorder.body
        self.sent.prefix += len(json.dumps(body["tools"])) + sum(len(b["text"]) for b in body["system"])
        self.sent.messages += sum(len(m["content"]) for m in body["messages"])
        self.sent.calls += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _recorder_class() -> type:
    from engram.adapters.anthropic import AnthropicLLM
    from engram.adapters.structured import Attempt
    from engram.ports import Usage

    class Recorder(AnthropicLLM):
        """The Anthropic adapter with its request kept instead of sent, and a valid answer as the stubbed reply."""

        body: dict[str, Any]

        def _send(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
                  forced: str | None, temperature: float) -> Attempt:
            self.body = self.request(model=model, system=system, messages=messages, tools=tools, forced=forced)
            return Attempt("answer", {"content": "-", "confidence": 0.0}, Usage(), None)

    return Recorder


def _recorder() -> Any:
    """A recorder (its class built on first use: the anthropic SDK loads only when a bench meters)."""
    return _recorder_class()(None, model="claude-sonnet-4-5", fast_model="claude-haiku-4-5")


def asker(conversation: Conversation, question: str) -> str:
    """The speaker the question names first (by first name or its start: "Mel" for Melanie), else the
    conversation's first speaker."""
    said = question.lower()
    named = [(m.start(), s) for s in conversation.speakers
             if (m := re.search(rf"\b{re.escape(s.split()[0].lower()[:3])}[a-z]*\b", said))
             and s.lower().startswith(m.group(0))]
    return min(named)[1] if named else conversation.speakers[0]


def engram_replies(clients: Clients, conversations: Sequence[Conversation], progress: Progress) -> list[Reply]:
    """Every question asked through the query loop (sync), as its speaker, by `clients.llm` (metered)."""
    meter = PromptMeter(clients.llm)
    metered = dataclasses.replace(clients, llm=meter)  # type: ignore[arg-type]
    offline = clients.llm.name == "offline-heuristic"
    # The inline workflows run the loop with the clients they were given: theirs answer through the meter too.
    workflows = clients.workflows
    held = getattr(workflows, "clients", None)
    if held is not None:
        workflows.clients = metered  # type: ignore[attr-defined]
    try:
        return _ask_all(metered, meter, offline, conversations, progress)
    finally:
        if held is not None:
            workflows.clients = held  # type: ignore[attr-defined]


def _ask_all(metered: Clients, meter: PromptMeter, offline: bool, conversations: Sequence[Conversation],
             progress: Progress) -> list[Reply]:
    from engram.query.submit import submit_query

    out = []
    with progress.bar("answering with engram", sum(len(c.questions) for c in conversations)) as advance:
        for conv in conversations:
            for q in conv.questions:
                meter.sent = Sent()
                query = submit_query(metered, world_of(conv), QueryRequest(user_id=asker(conv, q.question),
                                                                          question=q.question))
                answer = query.answer.content if query.answer else ""
                if offline:
                    tokens, cached = meter.chars / CHARS_PER_TOKEN, meter.sent.prefix / CHARS_PER_TOKEN
                    calls = meter.sent.calls
                else:  # the provider's count: the cached prefix is what it read from (or wrote to) its cache
                    tokens, calls = float(query.input_tokens), query.model_calls
                    cached = float(sum(t.detail.get("tokens", {}).get("cache_read", 0)
                                       + t.detail.get("tokens", {}).get("cache_write", 0) for t in query.trace))
                out.append(Reply(conv.sample_id, q.category, q.question, q.answer, answer, score(answer, q),
                                 query.answer.confidence if query.answer else None, tokens, cached, calls))
                advance(1)
    return out


def bm25_replies(conversations: Sequence[Conversation]) -> list[Reply]:
    """Each question answered with the text of the turn plain BM25 ranks first."""
    out = []
    for conv in conversations:
        bm25 = BM25Baseline([(t.dia_id, turn_text(t.speaker, t.content)) for t in conv.turns])
        text = {t.dia_id: t.content for t in conv.turns}
        for q in conv.questions:
            best = bm25.rank(q.question, 1)
            answer = text[best[0]] if best else ""
            out.append(Reply(conv.sample_id, q.category, q.question, q.answer, answer, score(answer, q)))
    return out


# ---------------------------------------------------------------- the run
@dataclass
class Outcome:
    document: dict[str, Any]
    replies: dict[str, list[Reply]] = field(default_factory=dict)


def run(dataset: Path, out_dir: Path, *, cache_dir: Path | None = None, limit_conversations: int | None = None,
        llm: LLM | None = None, embedder: str = "minilm", progress: Progress | None = None) -> Outcome:
    """Ingest (or reuse) the conversations, answer every question with engram and with the best BM25 turn, and
    write `out_dir/qa.json` (and every answer in `out_dir/qa-answers.json`). `llm` answers in place of the
    offline model (ingest stays offline, so the cached worlds are the retrieval bench's)."""
    from engram.bench.stack import embedded_clients

    progress = progress or ConsoleProgress()
    conversations = load(dataset, with_answers=True)[:limit_conversations]
    with _data_dir(cache_dir, _fingerprint(dataset, embedder)) as data_dir, \
            embedded_clients(data_dir, embedder=embedder) as clients:
        _ingest_all(clients, data_dir, conversations, progress)
        started = time.perf_counter()
        asking = dataclasses.replace(clients, llm=llm) if llm is not None else clients
        replies = {"engram": engram_replies(asking, conversations, progress)}
        seconds = time.perf_counter() - started
    replies["bm25-turn"] = bm25_replies(conversations)
    document = summarize(dataset.name, replies)
    document["engram_seconds_per_question"] = round(seconds / max(1, len(replies["engram"])), 3)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "qa.json").write_text(json.dumps(document, indent=2))
    (out_dir / "qa-answers.json").write_text(json.dumps(
        {system: [dataclasses.asdict(r) for r in rows] for system, rows in replies.items()}, indent=1))
    return Outcome(document, replies)


def summarize(dataset: str, replies: dict[str, list[Reply]]) -> dict[str, Any]:
    """The measures of each system: overall (F1 over categories 1-4, the share of category 5 abstained, tokens
    per question), by category, and for engram the reliability table (confidence bucket -> mean F1)."""
    document: dict[str, Any] = {"dataset": dataset, "questions": len(next(iter(replies.values()), [])),
                                "systems": {}}
    for system, rows in replies.items():
        answered = [r for r in rows if r.category != "adversarial"]
        adversarial = [r for r in rows if r.category == "adversarial"]
        by_category = {name: _mean([r.score for r in rows if r.category == name]) for name in CATEGORIES.values()}
        by_category["adversarial"] = _mean([r.score for r in adversarial])
        document["systems"][system] = {
            "overall": {"f1": _mean([r.score for r in answered]),
                        "abstain_rate_cat5": _mean([float(abstains(r.answer)) for r in adversarial]),
                        "tokens_per_question": _mean([r.tokens for r in rows]),
                        "abstain_rate_cat1_4": _mean([float(abstains(r.answer)) for r in answered])},
            "by_category": by_category,
            "questions": {"cat1_4": len(answered), "cat5": len(adversarial)},
            "tokens": {name: tokens(part) for name, part in
                       [("all", rows), *((c, [r for r in rows if r.category == c]) for c in [*CATEGORIES.values(),
                                                                                             "adversarial"])]},
        }
        if any(r.confidence is not None for r in rows):
            document["systems"][system]["reliability"] = reliability(answered)
    return document


def tokens(rows: Sequence[Reply]) -> dict[str, float]:
    """Tokens per question (mean and 95th percentile), the mean split into the cached prefix and the rest, and the
    model calls per question."""
    sent = sorted(r.tokens for r in rows)
    return {"mean": _mean(sent), "p95": round(sent[min(len(sent) - 1, int(0.95 * len(sent)))], 1) if sent else 0.0,
            "cached_mean": _mean([r.cached_tokens for r in rows]),
            "uncached_mean": _mean([r.tokens - r.cached_tokens for r in rows]),
            "calls_mean": _mean([float(r.calls) for r in rows])}


def reliability(rows: Sequence[Reply]) -> list[dict[str, Any]]:
    """Answers of categories 1-4 by confidence bucket: how many, and their mean F1."""
    table = []
    for low, high in itertools.pairwise(BUCKETS):
        part = [r.score for r in rows if r.confidence is not None and low <= r.confidence < high]
        table.append({"confidence": f"[{low:.2f}, {min(high, 1.0):.2f})", "answers": len(part),
                      "mean_f1": _mean(part)})
    return table


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def table(document: dict[str, Any]) -> str:
    """The systems side by side: F1 by category, category 5 abstentions, tokens per question; then engram's
    reliability table."""
    categories = [*CATEGORIES.values(), "adversarial"]
    lines = [f"LoCoMo QA ({document['dataset']}, {document['questions']} questions; token F1, category 5: "
             "share answered \"I don't know\")",
             f"{'system':<10} {'F1 1-4':>7} " + " ".join(f"{c:>12}" for c in categories) + f" {'tokens/q':>9}"]
    for system, result in document["systems"].items():
        lines.append(f"{system:<10} {result['overall']['f1']:>7.3f} "
                     + " ".join(f"{result['by_category'][c]:>12.3f}" for c in categories[:-1])
                     + f" {result['overall']['abstain_rate_cat5']:>12.3f} {result['overall']['tokens_per_question']:>9.1f}")
    spent = document["systems"].get("engram", {}).get("tokens", {})
    if spent:
        lines += ["", "engram tokens per question (the answer calls' requests; cached: the tools and system prefix)",
                  f"  {'category':<12} {'mean':>7} {'p95':>7} {'cached':>7} {'uncached':>8} {'calls':>6}"]
        lines += [f"  {c:<12} {t['mean']:>7.0f} {t['p95']:>7.0f} {t['cached_mean']:>7.0f} {t['uncached_mean']:>8.0f}"
                  f" {t['calls_mean']:>6.2f}" for c, t in spent.items()]
    rows = document["systems"].get("engram", {}).get("reliability", [])
    if rows:
        lines += ["", "engram confidence -> mean F1 (categories 1-4)"]
        lines += [f"  {r['confidence']:<13} {r['answers']:>5} answers   mean F1 {r['mean_f1']:.3f}" for r in rows]
    return "\n".join(lines)

"""The offline heuristic model: extraction by dependency parse (spaCy), extractive answers and summaries.

It exists so the whole system runs and is testable with no key and no network. It is named as
what it is (`offline-heuristic`) in every response and is never presented as an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engram.adapters.offline import answers, synthesis
from engram.adapters.offline.coreference import CoreferenceRules, link_reference
from engram.adapters.offline.research import clauses, coverage
from engram.adapters.offline.sentences import unlabelled
from engram.adapters.offline.statements import SELF
from engram.adapters.offline.understanding import understand
from engram.adapters.spacy_engine import shared_engine
from engram.model.context import QueryContext
from engram.model.entities import EntitySighting
from engram.model.heuristics import DEFAULT_HEURISTICS, Heuristics
from engram.model.insights import InflectionAssessment
from engram.model.memories import OntologyPredicate
from engram.model.queries import Answer, ContextItem, InfoRequest, NeedsMoreInfo, QuestionSignal
from engram.model.research import EvidenceConflict, PlannedSubQuestion, ResearchEvaluation, ResearchPlan, SubQuestion
from engram.model.signals import Signal
from engram.ports import (
    ConflictCheck,
    ConflictingFacts,
    ContextDigest,
    Coreference,
    ExtractedTriple,
    ExtractionResult,
    KnownFact,
    LLMReply,
    Reference,
    Usage,
    WindowEvent,
    WrittenSummary,
)
from engram.query.budget import rule_digest
from engram.rules.grounding import ground
from engram.rules.insights import assess_inflection
from engram.rules.ontology import PredicateMap
from engram.rules.patterns import restates
from engram.rules.signals import classify_signals
from engram.rules.text import content_terms

NAME = "offline-heuristic"
_ANSWER_MIN_OVERLAP = 0.34
# Opposite stances on one thing: "likes coffee" and "dislikes coffee", "always drives" and "never drives".
_FOR = frozenset({"likes", "loves", "prefers", "always", "enjoys"})
_AGAINST = frozenset({"dislikes", "hates", "never", "avoids"})  # share of the question's content terms an item must cover to be an answer
_NO_USAGE = Usage()
_QUESTION_WORDS = frozenset({"what", "where", "who", "whom", "whose", "when", "why", "how", "which", "is", "are",
                             "was", "were", "do", "does", "did", "has", "have", "can", "could", "should", "tell"})


class OfflineLLM:
    name = NAME

    def __init__(self, heuristics: Heuristics = DEFAULT_HEURISTICS) -> None:
        h = self.heuristics = heuristics
        self.coreference_rules = CoreferenceRules(
            relation=h.offline.offline_coreference_relation, unique=h.offline.offline_coreference_unique,
            recent=h.offline.offline_coreference_recent, max_distance_events=h.offline.coreference_max_distance_events)

    def extract(self, events: Sequence[WindowEvent], known_entities: Sequence[str], *,
                references: Sequence[Reference] = (), candidates: Sequence[EntitySighting] = (),
                predicates: Sequence[OntologyPredicate] = ()) -> LLMReply[ExtractionResult]:
        as_ontology = PredicateMap(predicates)  # "I live in" is the rules' lives_in, the ontology's if it says so
        triples = []
        users = [e for e in events if e.role == "user"]
        for event, doc in zip(users, shared_engine().docs([unlabelled(e.content) for e in users]), strict=True):
            speaker = event.speaker or "user"
            for s in understand(doc):
                triples.append(ExtractedTriple(
                    subject=speaker if s.subject == SELF else s.subject,
                    predicate=as_ontology(s.predicate),
                    object=speaker if s.object == SELF else s.object,
                    object_is_entity=s.object_is_entity,
                    confidence=s.confidence,
                    event_id=event.event_id,
                    valid_from=ground(s.when, event.occurred_at) or event.occurred_at,
                    subject_type=s.subject_type,
                    object_type=s.object_type,
                    negated=s.negated,
                ))
        when = {e.event_id: e.occurred_at for e in events}
        coreferences = []
        for ref in references:  # the rules of engram.adapters.offline.coreference: no model call
            if ref.event_id not in when:
                continue
            link = link_reference(ref.text, ref.kind, ref.event_id, ref.start, when[ref.event_id],
                                  ref.speaker_entity_id, candidates, self.coreference_rules)
            if link is not None:
                coreferences.append(Coreference(reference_id=ref.reference_id, entity_id=link.entity_id,
                                                confidence=link.confidence))
        return LLMReply(ExtractionResult(triples=triples, coreferences=coreferences), _NO_USAGE, NAME)

    def answer(self, context: QueryContext, *, can_request_more: bool, remaining_info_requests: int,
               temperature: float) -> LLMReply[Answer | NeedsMoreInfo]:
        """Answer with the value asked for (engram.adapters.offline.answers) when the context holds it; lacking one,
        and with no entity in view, ask for a search with its words. Otherwise it says it does not know: the first
        context is the fused search for the question already, and an entity's full record is not asked for because
        this answerer reads facts and turns, never a record's text (measured on LoCoMo: the same answers, 34% more
        tokens); each round resends the whole prompt."""
        signals = self._question_signals(context.question)
        reply = answers.answer(context)
        if reply.content != answers.UNKNOWN or not (can_request_more and remaining_info_requests > 0):
            return LLMReply(reply, _NO_USAGE, NAME, signals)
        if context.all_entity_ids():
            return LLMReply(reply, _NO_USAGE, NAME, signals)
        if context.memory_capabilities:
            request = InfoRequest(capability="search_memories", params={"query": context.question[:500], "limit": 10},
                                  reason="look for memories with the question's words")
        else:  # a world offering Resonance's six capabilities alone: its semantic entity search
            request = InfoRequest(capability="search_entities", params={"query": context.question[:500], "limit": 5},
                                  reason="look for entities with the question's words")
        return LLMReply(NeedsMoreInfo(info_requests=[request], reason="insufficient context"), _NO_USAGE, NAME, signals)

    def _question_signals(self, question: str) -> tuple[QuestionSignal, ...]:
        return tuple(QuestionSignal(signal_type=c.signal_type, content=c.content[:500], confidence=c.confidence)
                     for c in classify_signals(question, self.heuristics))

    def force_answer(self, context: QueryContext, *, temperature: float) -> LLMReply[Answer]:
        return LLMReply(answers.answer(context).model_copy(update={"forced": True}), _NO_USAGE, NAME)

    def summarize(self, scope: str, items: Sequence[str],
                  facts: Sequence[KnownFact] = ()) -> LLMReply[WrittenSummary]:
        """Extractive: the first sentence of each fact and item in order, up to about 600 characters; a fact is
        confirmed when the summary states its value outside the fact's own sentence (copying a fact into the
        summary does not confirm it)."""
        picked, length = [], 0
        for item in [*(f.statement() for f in facts), *items]:
            first = _first(item)
            if first and first not in picked and length + len(first) < 600:
                picked.append(first)
                length += len(first)
        text = ". ".join(picked) + ("." if picked else "")
        return LLMReply(WrittenSummary(summary=text or "(nothing to summarize)", confirmed_fact_ids=[
            f.memory_id for f in facts if restates(". ".join(p for p in picked if p != _first(f.statement())),
                                                   f.object)]), _NO_USAGE, NAME)

    def find_conflicts(self, new_facts: Sequence[KnownFact], known_facts: Sequence[KnownFact]) -> LLMReply[ConflictCheck]:
        """Only what rules can see: one subject for and against the same thing. "Prefers email" against
        "hates electronic communication" needs a model."""
        found = []
        for new in new_facts:
            stance = _stance(new.predicate)
            if stance is None:
                continue
            for other in [*known_facts, *new_facts]:
                if other.memory_id == new.memory_id or other.subject != new.subject:
                    continue
                if _stance(other.predicate) == (not stance) and _same_thing(new.object, other.object):
                    found.append(ConflictingFacts(memory_id=new.memory_id, conflicting_memory_id=other.memory_id,
                                                  reason=f"{new.statement()} / {other.statement()}"))
        return LLMReply(ConflictCheck(conflicts=found), _NO_USAGE, NAME)

    def detect_inflection(self, messages: Sequence[WindowEvent], signals: Sequence[Signal], *,
                          h: Heuristics) -> LLMReply[InflectionAssessment]:
        """The inflection rules over the window's turns and the conversation's signals."""
        turns = [m.event_id for m in messages if m.role in h.signals.signal_roles]
        return LLMReply(assess_inflection(turns, signals, h), _NO_USAGE, NAME)

    def plan_research(self, context: QueryContext, *, max_sub_questions: int) -> LLMReply[ResearchPlan]:
        """One sub-question per clause of the question (a search of its words, and the full record of each
        entity it names), then one per entity the question names that no clause covered yet."""
        planned, covered = [], set()
        for clause in clauses(context.question):
            named = _named_entities(context, clause)
            covered |= set(named)
            requests = [InfoRequest(capability="search_memories", params={"query": clause, "limit": 10},
                                    reason="memories with the clause's words")]
            requests += [InfoRequest(capability="expand_entity", params={"entity_id": e}, reason="named in the clause")
                         for e in list(named)[:2]]
            if not named:
                requests.append(InfoRequest(capability="search_entities", params={"query": clause, "limit": 5},
                                            reason="the entities the clause is about"))
            planned.append(PlannedSubQuestion(question=clause, requests=requests))
        for entity_id, name in _named_entities(context, context.question).items():
            if entity_id not in covered:
                planned.append(PlannedSubQuestion(question=f"What does memory hold about {name}?", requests=[
                    InfoRequest(capability="expand_entity", params={"entity_id": entity_id}),
                    InfoRequest(capability="get_entity_timeline", params={"entity_id": entity_id})]))
        return LLMReply(ResearchPlan(sub_questions=planned[:max_sub_questions],
                                     rationale="the question's clauses and the entities it names (rules)"),
                        _NO_USAGE, NAME)

    def evaluate_research(self, context: QueryContext, sub_questions: Sequence[SubQuestion], *,
                          can_continue: bool, max_follow_ups: int) -> LLMReply[ResearchEvaluation]:
        """A sub-question is answered when a context item covers enough of its words; an unanswered one is
        asked again through requests not tried yet (entities by name, the entities its evidence touches)."""
        answered = [s.sub_id for s in sub_questions if s.status != "pending" and _best(context, s.question)[0]
                    >= _ANSWER_MIN_OVERLAP]
        open_ = [s for s in sub_questions if s.status != "pending" and s.sub_id not in answered]
        tried = {(r.capability, repr(sorted(r.params.items()))) for s in sub_questions for r in s.requests}
        follow_ups = []
        for sub in open_ if can_continue else []:
            fresh = [r for r in _retry_requests(context, sub) if (r.capability, repr(sorted(r.params.items())))
                     not in tried]
            if fresh:
                follow_ups.append(PlannedSubQuestion(question=sub.question, requests=fresh[:4]))
        notes = (f"{len(answered)} of {len(answered) + len(open_)} sub-questions covered by the context"
                 + (f"; still open: {'; '.join(s.question for s in open_)}" if open_ else ""))
        return LLMReply(ResearchEvaluation(complete=not open_, answered=answered,
                                           follow_ups=follow_ups[:max_follow_ups], notes=notes[:1_000]),
                        _NO_USAGE, NAME)

    def synthesize(self, context: QueryContext, sub_questions: Sequence[SubQuestion],
                   conflicts: Sequence[EvidenceConflict], *, temperature: float) -> LLMReply[Answer]:
        """Each sub-question's short answer, each conflicting pair named with both sides, what memory does not
        hold said (engram.adapters.offline.synthesis)."""
        return LLMReply(synthesis.synthesize(context, sub_questions, conflicts), _NO_USAGE, NAME)

    def digest(self, context: QueryContext, *, keep_lines: int) -> LLMReply[ContextDigest]:
        """The compaction digest by rules: the conversation's last `keep_lines` lines, whitespace collapsed."""
        return LLMReply(rule_digest(context, keep_lines), _NO_USAGE, NAME)


def _best(context: QueryContext, question: str) -> tuple[float, ContextItem | None]:
    """The item covering most of the question's words (then the best scored), and how much it covers. It
    must cover a word that names no entity of the context: "Dana lives in Lisbon" does not answer "Who is
    Dana's dentist"."""
    names = {t for i in context.items if i.kind == "entity" and i.name for t in content_terms(i.name)}
    topical = (content_terms(question) - names) or content_terms(question)
    scored = [(coverage(question, i.text), i.score, n, i) for n, i in enumerate(context.items)
              if topical & content_terms(i.text)]
    if not scored:
        return 0.0, None
    overlap, _, _, item = max(scored, key=lambda s: (s[0], s[1], -s[2]))
    return overlap, item


def _first(text: str) -> str:
    return text.split(". ")[0].strip().rstrip(".")


def _named_entities(context: QueryContext, text: str) -> dict[str, str]:
    """Entity items of the context whose every name word the text says: id -> name."""
    said = content_terms(text)
    return {i.id: i.name for i in context.items
            if i.kind == "entity" and i.name and (terms := content_terms(i.name)) and terms <= said}


def _retry_requests(context: QueryContext, sub: SubQuestion) -> list[InfoRequest]:
    """Other ways to the same sub-question: its capitalised words as entity names, the entities its
    evidence touches (their full records), its words as an entity search."""
    names = [w for w in re.findall(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*", sub.question)
             if content_terms(w) and w.split()[0].lower() not in _QUESTION_WORDS]
    requests = [InfoRequest(capability="get_entity_by_name", params={"name": n, "limit": 3}) for n in names[:2]]
    evidence = set(sub.evidence)
    touched = list(dict.fromkeys(e for i in context.items if i.id in evidence for e in i.entity_ids))
    expandable = set(context.expandable_entity_ids())
    requests += [InfoRequest(capability="expand_entity", params={"entity_id": e})
                 for e in touched if e in expandable][:2]
    terms = " ".join(sorted(content_terms(sub.question)))
    if terms:
        requests.append(InfoRequest(capability="search_entities", params={"query": terms, "limit": 5}))
    return requests


def _stance(predicate: str) -> bool | None:
    return True if predicate in _FOR else False if predicate in _AGAINST else None


def _same_thing(a: str, b: str) -> bool:
    """The same object, or one naming the other with more words ("coffee", "black coffee")."""
    ta, tb = content_terms(a), content_terms(b)
    return bool(ta and tb) and (ta <= tb or tb <= ta)

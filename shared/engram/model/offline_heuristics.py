"""The offline model's section of the heuristics (its own module: the sections' module is near the size limit)."""

from __future__ import annotations

from engram.model.heuristic_sections import Section


class OfflineHeuristics(Section):
    """The offline model's own tunables (adapters/offline): its coreference rules and its inflection reading.
    A deployment with an LLM never reads them."""

    coreference_max_distance_events: int = 3  # the offline rules look this many events back, no further
    offline_coreference_relation: float = 0.9  # "my boss" and the speaker's boss relationship
    offline_coreference_unique: float = 0.8  # the only compatible entity within reach
    offline_coreference_recent: float = 0.6  # the most recent of several compatible entities
    # the inflection reading: base + step per piece of evidence + weight x share of the window's turns carrying it
    inflection_base_confidence: float = 0.45
    inflection_evidence_step: float = 0.1
    inflection_share_weight: float = 0.2
    inflection_max_confidence: float = 0.95
    inflection_research_min_questions: int = 2  # complex open questions in the window
    inflection_question_min_words: int = 4  # a shorter question is never complex
    inflection_complex_question_words: int = 12  # a question this long is complex by itself
    inflection_complex_question_phrases: tuple[str, ...] = (
        "why", "how does", "how do", "how would", "how should", "how can", "how might", "what if", "what would",
        "what happens", "whether", "trade-off", "trade-offs", "tradeoff", "tradeoffs", "impact", "implications",
        "consequences", "compare", "comparison", "risk", "risks", "long term", "long-term", "root cause",
    )
    inflection_critique_min_assumptions: int = 2  # untested assumptions in the window, beside a stated position
    inflection_synthesis_min_material: int = 3  # goals, constraints, evidence and confirmed assumptions so far

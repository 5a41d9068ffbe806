"""The heuristics live in one section per package, while a world still overrides them by flat name: every name
of the flat list belongs to exactly one section, and an override reads and lists as it always did."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from engram.model.heuristics import DEFAULT_HEURISTICS, SECTION_OF, Heuristics
from engram.model.overrides import heuristics_problems

# Every heuristic a world could override before the split, by the name its overrides use.
FLAT_NAMES = {
    "base_importance", "importance_keywords", "importance_keyword_boost", "importance_cap",
    "max_events_per_batch", "max_content_chars", "enrichment_sweep_grace_s", "enrichment_sweep_limit",
    "tag_keywords", "alias_accept", "fuzzy_min", "fuzzy_single_accept", "coreference_accept",
    "domain_create_confidence", "domain_search_limit", "domain_ask_between_rows", "coreference_min", "settled_alias_confidence", "stated_alias_confidence", "derived_alias_confidence", "disambiguation_candidates",
    "alias_ngram_max_words", "alias_lookup_max_phrases", "settle_max_mentions", "rank_weight_alias",
    "rank_weight_recency", "rank_weight_usage", "rank_weight_source", "rank_recency_half_life_days",
    "rank_usage_half_count", "rank_source_weights", "rank_margin", "coreference_max_sightings",
    "coreference_max_candidates", "coreference_max_distance_events", "offline_coreference_relation",
    "offline_coreference_unique", "offline_coreference_recent", "path_max_frontier",
    "entity_search_min_similarity", "entity_detail_max_facts", "extraction_window", "max_confidence",
    "reinforce_gain", "fact_source_weights", "single_valued_predicates", "conflict_confidence_gap",
    "conflict_recency_gap_days", "conflict_correction_first", "cross_conflict_max_facts", "decay_half_life_days", "signal_trigger_phrases",
    "signal_roles", "signal_min_turns", "signal_min_chars", "signal_force_after_turns",
    "signal_marker_confidence", "signal_claim_confidence", "signal_claim_min_words", "signal_max_chars",
    "signal_key_casefold",
    "inflection_interval_turns", "inflection_window_messages", "inflection_min_confidence",
    "inflection_base_confidence", "inflection_evidence_step", "inflection_share_weight",
    "inflection_max_confidence", "inflection_research_min_questions", "inflection_question_min_words",
    "inflection_complex_question_words", "inflection_complex_question_phrases",
    "inflection_critique_min_assumptions", "inflection_synthesis_min_material", "insight_max_signals",
    "intervention_cooldown_turns", "intervention_kinds", "intervention_min_open_questions",
    "intervention_min_untested_assumptions", "intervention_case_min_options",
    "intervention_case_option_phrases", "intervention_density_min_signals", "intervention_density_per_turn",
    "intervention_messages", "rrf_k", "weight_semantic", "weight_entity", "weight_recency", "weight_importance",
    "weight_reinforcement", "reinforcement_full_count", "reinforcement_default", "recency_half_life_days", "recency_half_life_long_days", "semantic_min_similarity",
    "search_limit", "context_recent_exchanges", "context_semantic", "context_important", "context_max_items",
    "max_info_requests", "max_initial_entities", "context_token_budget", "chars_per_token",
    "query_initial_hits", "query_relationship_entities", "context_keep_at_least", "context_summary_body_chars",
    "context_compact_conversation", "entity_record_max_facts", "capability_max_results",
    "query_referenced_entities", "query_forced_answer_low",
    "answer_high_confidence", "answer_medium_confidence", "answer_degraded_confidence", "fallback_answer_items",
    "research_max_sub_questions", "research_max_follow_ups", "research_max_conflicts", "research_drop_tokens",
    "research_mask_tokens", "research_compact_tokens", "summary_max_items", "summary_scope_facts",
    "summary_min_facts", "summary_default_confidence", "consolidation_boost", "archive_below_confidence",
    "consolidation_max_scopes", "consolidation_forget_batch", "procedure_min_support", "procedure_min_lift",
    "procedure_conversations", "procedure_max_per_user", "fusion_weights", "fusion_rank_weight",
    "fusion_match_weight", "fusion_signal_weight", "fusion_match_keyword_share", "fusion_speaker_weight",
    "fusion_time_weight", "search_time_slack_days", "search_time_half_life_days", "ranker", "search_min_relevance",
    "search_candidates",
    "search_semantic_candidates", "search_pool", "search_expand_top", "search_neighbour_weight",
    "search_session_weight", "search_context_weight", "event_context_embedding", "graph_depth",
    "graph_hop_decay", "graph_max_entities", "serendipity_limit", "query_embedding_cache",
    "web_search_keywords", "web_search_temporal_words", "web_search_max_results",
    # issue 23 (the Komputa rules): how keywords match, the web trigger's question patterns, singular units
    "importance_keyword_match", "tag_keyword_match", "web_search_question_patterns", "web_search_keyword_match",
    "relative_time_singular",
    # issue 23 (the L-gent rules): the classifier and the semantic brain's threshold
    "semantic_brain_min_similarity", "query_classifier",
    # issue 19 (time and change): the words that say a single-valued fact changed
    "conflict_change_phrases", "ending_predicates",
    # issue 23 (seed 004 by default, engram's way per world): the fuzzy score and its weak single match, entities
    # of unknown names, conflicts of every predicate
    "fuzzy_by_alias_confidence", "fuzzy_weak_single_resolves", "create_unknown_names", "conflict_every_predicate",
    "query_memory_capabilities",
    # issue 20 (multi-hop retrieval): the expansion brain's list and its ranking
    "search_expansion_limit", "search_expansion_term_weight", "search_expansion_dated_weight",
    "search_expansion_when_weight",
    # issue 20 (calibrated scores): the question's evidence floor
    "search_min_evidence",
}


def _sections(h: Heuristics) -> dict[str, BaseModel]:
    return {name: getattr(h, name) for name in Heuristics.model_fields}


def test_every_flat_heuristic_belongs_to_exactly_one_section() -> None:
    owners = {name: [section for section, model in _sections(DEFAULT_HEURISTICS).items()
                     if name in type(model).model_fields] for name in FLAT_NAMES}
    assert {name: found for name, found in owners.items() if len(found) != 1} == {}
    assert {name: found[0] for name, found in owners.items()} == SECTION_OF
    assert set(DEFAULT_HEURISTICS.flat()) == FLAT_NAMES


def test_each_section_is_frozen_and_documented() -> None:
    for section, model in _sections(DEFAULT_HEURISTICS).items():
        assert type(model).__doc__, section
        with pytest.raises(ValidationError):
            setattr(model, next(iter(type(model).model_fields)), None)


def test_flat_overrides_land_in_their_sections_and_read_back_flat() -> None:
    overrides = {"rrf_k": 30, "extraction_window": 5, "signal_roles": ("user", "assistant"),
                 "offline_coreference_recent": 0.55, "web_search_max_results": 1, "summary_min_facts": 4}
    tuned = DEFAULT_HEURISTICS.with_overrides(overrides)
    assert (tuned.retrieval.rrf_k, tuned.extract.extraction_window, tuned.signals.signal_roles,
            tuned.offline.offline_coreference_recent, tuned.context.web_search_max_results,
            tuned.consolidation.summary_min_facts) == (30, 5, ("user", "assistant"), 0.55, 1, 4)
    flat = tuned.flat()
    assert {name: flat[name] for name in overrides} == overrides
    untouched = DEFAULT_HEURISTICS.flat()
    assert {k: v for k, v in flat.items() if k not in overrides} == {
        k: v for k, v in untouched.items() if k not in overrides}
    assert Heuristics().with_overrides(DEFAULT_HEURISTICS.flat()) == DEFAULT_HEURISTICS


def test_a_table_valued_override_merges_key_by_key() -> None:
    tuned = DEFAULT_HEURISTICS.with_overrides({"base_importance": {"userinput": 0.6},
                                               "rank_source_weights": {"fuzzy": 0.3}})
    assert tuned.ingest.base_importance == {**DEFAULT_HEURISTICS.ingest.base_importance, "userinput": 0.6}
    assert tuned.resolve.rank_source_weights["fuzzy"] == 0.3
    assert tuned.resolve.rank_source_weights["user"] == DEFAULT_HEURISTICS.resolve.rank_source_weights["user"]


def test_an_unknown_name_is_refused_by_its_flat_name() -> None:
    with pytest.raises(ValidationError) as caught:
        DEFAULT_HEURISTICS.with_overrides({"no_such_rule": 1, "rrf_k": 30})
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [(("no_such_rule",), "extra_forbidden")]
    # A section name is not a heuristic either: overrides are flat.
    with pytest.raises(ValidationError):
        DEFAULT_HEURISTICS.with_overrides({"retrieval": {"rrf_k": 30}})


def test_a_bad_value_is_named_by_its_flat_heuristic() -> None:
    assert heuristics_problems({"rrf_k": "many"}) == [
        "rrf_k: Input should be a valid integer, unable to parse string as an integer"]
    assert heuristics_problems({"base_importance": {"userinput": "high"}})[0].startswith(
        "base_importance.userinput: ")
    assert heuristics_problems({"no_such_rule": 1}) == ["no_such_rule: Extra inputs are not permitted"]
    assert heuristics_problems({"decay_half_life_days": 0}) == ["decay_half_life_days: must be above zero"]

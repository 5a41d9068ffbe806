"""The sections of the heuristics, one per package: each section's numbers with their defaults and why."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from engram.model.insights import InterventionKind

KeywordMatch = Literal["anywhere", "word_start", "whole_word"]
"""Where a keyword counts in a text: anywhere (a substring), only at the start of a word, or as whole words."""

UnknownNames = Literal["without_domain", "always", "never"]
"""Where a proper noun no stage of the resolution cascade resolves becomes a new entity (`create_unknown_names`)."""


class Section(BaseModel):
    """A section of the heuristics: frozen, and no name it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class IngestHeuristics(Section):
    """Ingest: an event's importance and tags, batch limits, and the sweep that restarts lost enrichments."""

    base_importance: dict[str, float] = {
        "userpreference": 0.9,
        "factuallearning": 0.8,
        "contextualfact": 0.7,
        "default": 0.5,
        "userinput": 0.4,
        "assistantresponse": 0.3,
    }
    importance_keywords: tuple[str, ...] = (
        "remember", "prefer", "always", "never", "my name is", "i am", "i live", "i work",
    )
    importance_keyword_match: KeywordMatch = "anywhere"  # Komputa: content "containing" a keyword
    importance_keyword_boost: float = 0.2
    importance_cap: float = 1.0
    max_events_per_batch: int = 100
    max_content_chars: int = 32_000
    enrichment_sweep_grace_s: int = 300  # a pending event older than this lost its enrichment start
    enrichment_sweep_limit: int = 1_000  # events restarted per sweep (per world when one is named)
    tag_keywords: dict[str, tuple[str, ...]] = {
        "weather": ("weather", "temperature", "rain", "sunny", "cloudy", "forecast"),
        "greeting": ("hello", "hi", "hey", "good morning", "good evening"),
        "question": ("what", "how", "why", "when", "where", "who", "?"),
        "preference": ("prefer", "like", "favorite", "always", "never", "usually"),
        "personal": ("my name", "i am", "i live", "i work", "my job"),
        "time": ("time", "clock", "hour", "minute", "schedule", "calendar"),
        "news": ("news", "today", "latest", "current", "recent", "breaking", "update", "happening"),
    }
    tag_keyword_match: KeywordMatch = "anywhere"  # Komputa: "keywords can appear anywhere in content"


class ResolveHeuristics(Section):
    """Resolve: when an alias, a trigram neighbour or a coreference is accepted, how several candidates are
    ranked, and how many are kept for a user's disambiguation."""

    alias_accept: float = 0.85
    fuzzy_min: float = 0.7
    fuzzy_single_accept: float = 0.85
    fuzzy_by_alias_confidence: bool = False  # seed 004 scores by trigram similarity; True: times the alias's confidence
    # seed 004: one trigram neighbour at or under fuzzy_single_accept resolves nothing, the cascade goes on (a
    # near miss of a known name is never created anew); True: it resolves at its score without being learned
    fuzzy_weak_single_resolves: bool = False
    # A proper noun nothing resolves: seed 004 answers not_found where its entities come from a domain database;
    # "without_domain" makes a new entity in a world with none (else nothing would ever be remembered of anyone),
    # "always" even where the domain database does not know it, "never" answers not_found everywhere.
    create_unknown_names: UnknownNames = "without_domain"
    coreference_accept: float = 0.7
    domain_create_confidence: float = 0.85
    coreference_min: float = 0.0  # a coreference below this leaves its mention unresolved (the document: none)
    settled_alias_confidence: float = 0.95  # the alias a user's disambiguation teaches
    stated_alias_confidence: float = 0.95  # a name the text states: "call me Dee", "X, known as Y"
    derived_alias_confidence: float = 0.9  # a first name alone, a company's other suffix: what resolves to a known name
    disambiguation_candidates: int = 5  # candidates kept for the user to choose from
    domain_search_limit: int = 3  # domain rows read for a name; the first becomes the entity
    domain_ask_between_rows: bool = False  # True: several domain rows of one name wait for the user's choice
    alias_ngram_max_words: int = 4  # longest lowercase word run looked up as a known alias of the world
    alias_lookup_max_phrases: int = 2_000  # word runs of one event looked up at most
    settle_max_mentions: int = 500  # a user's waiting mentions of the same words one choice settles
    # ranking of several candidates: weighted alias confidence, recency, usage count and alias source
    rank_weight_alias: float = 0.4
    rank_weight_recency: float = 0.2
    rank_weight_usage: float = 0.2
    rank_weight_source: float = 0.2
    rank_recency_half_life_days: float = 30.0
    rank_usage_half_count: float = 5.0  # mentions at which the usage signal reaches one half
    rank_source_weights: dict[str, float] = {"user": 1.0, "seed": 0.9, "domain_db": 0.9, "created": 0.8,
                                             "exact": 0.8, "alias": 0.7, "fuzzy": 0.6, "coreference": 0.5}
    rank_margin: float = 0.15  # an exact or alias tie resolves to the top candidate only with this lead
    # coreference: the conversation's recent entities are the only candidates
    coreference_max_sightings: int = 50  # recent resolved mentions of the conversation read as candidates
    coreference_max_candidates: int = 10  # distinct entities shown to the model


class GraphHeuristics(Section):
    """The knowledge graph's reads: path search between entities, name search and an entity's detail."""

    path_max_frontier: int = 5_000  # entities a path search expands per hop before it stops
    entity_search_min_similarity: float = 0.5  # a name search also finds aliases this close in spelling
    entity_detail_max_facts: int = 50


class ExtractHeuristics(Section):
    """Extract and the facts' lifecycle: the window read per model call, confidence and reinforcement,
    single-valued predicates and conflicts, decay."""

    extraction_window: int = 10  # extractable events of one conversation per model call
    event_context_embedding: bool = True  # every event also gets a vector read after the turn before it
    max_confidence: float = 0.95
    reinforce_gain: float = 0.3  # a restatement closes this share of the gap to max_confidence (diminishing)
    fact_source_weights: dict[str, float] = {"user": 1.0, "reported": 0.9, "domain": 1.0}
    # Predicates that hold one value at a time: a different object is a conflict, not a second fact.
    single_valued_predicates: tuple[str, ...] = ("name", "lives_in", "works_at", "works_as", "age", "birthday",
                                                 "married_to", "is_married_to", "spouse", "favorite_color",
                                                 "favorite_food")
    conflict_confidence_gap: float = 0.30
    conflict_recency_gap_days: int = 60
    conflict_correction_first: bool = False  # True: a correction wins before the confidence and recency gaps
    # True (seed 004): a different value of any predicate conflicts; False: only the single-valued ones do, another
    # predicate's new value is a second fact ("likes pizza", "likes sushi"). False by default: on LoCoMo, True marks
    # 106 of 583 facts superseded though they still hold ("won a second tournament" ends the first) (docs/rules.md)
    conflict_every_predicate: bool = False
    # Words that say a single-valued fact changed: the new value then supersedes the old one from when it was said.
    conflict_change_phrases: tuple[str, ...] = (
        "moved", "moving", "relocated", "transferred", "now", "nowadays", "these days", "currently", "no longer",
        "anymore", "any more", "update", "changed", "switched", "started", "joined", "left", "quit", "hired",
        "got a job", "took a job", "new job", "new place", "new home", "new house", "new apartment", "new flat",
        "recently", "since", "as of", "got married", "remarried", "divorced", "became", "promoted", "turned")
    # Predicates that end a value ("quit Acme", "divorced Sam"): besides their own fact, they close the subject's
    # single-valued facts with that value (works_at Acme, married_to Sam), as a stated end does.
    ending_predicates: tuple[str, ...] = (
        "quit", "leave", "left", "resign", "resign_from", "retire_from", "fire_from", "lay_off_from", "divorce",
        "divorced", "separate_from", "break_up_with", "move_out_of", "move_away_from", "move_from",
        "stop_working_at", "stop_working_for")
    cross_conflict_max_facts: int = 30  # other active facts of a subject shown to the model per check
    decay_half_life_days: float = 180.0

    def single_valued(self, predicate: str) -> bool:
        """Whether a different value of `predicate` conflicts with the subject's known one (instead of joining it)."""
        return self.conflict_every_predicate or predicate in self.single_valued_predicates


class SignalHeuristics(Section):
    """Signals: when a conversation's new turns are read for signals, and how a sentence is classified."""

    # the Intelligence Engine's trigger phrases; a world widens them by overriding the list
    signal_trigger_phrases: tuple[str, ...] = ("i assume", "not sure if", "should we", "deadline")
    signal_roles: tuple[str, ...] = ("user",)  # whose messages count as turns and are read for signals
    signal_min_turns: int = 2
    signal_min_chars: int = 200
    signal_force_after_turns: int = 5
    signal_marker_confidence: float = 0.8  # a sentence with an explicit marker ("I assume", "deadline")
    signal_claim_confidence: float = 0.5  # a bare assertive statement read as a Claim
    signal_claim_min_words: int = 4
    signal_max_chars: int = 500  # a longer sentence is cut here before it is stored and keyed
    signal_key_casefold: bool = False  # the dedup key casefolds and collapses whitespace, not text.lower() alone


class InsightHeuristics(Section):
    """Insights: the inflection check every few turns, when an inflection counts, and the interventions
    offered from the conversation's signal patterns."""

    inflection_interval_turns: int = 3  # the check runs on every 3rd turn (turns: `signal_roles` messages)
    inflection_window_messages: int = 6  # over the last 6 messages up to that turn, every role
    inflection_min_confidence: float = 0.75  # the minimum at which an inflection counts (offline or LLM)
    insight_max_signals: int = 500  # the conversation's latest signals read by a check
    intervention_cooldown_turns: int = 3  # at most one intervention every 3 turns per conversation
    # the patterns looked for, the first that matches offered; a world leaves one out to turn it off
    intervention_kinds: tuple[InterventionKind, ...] = (
        "structure_case", "validate_assumptions", "organise_questions", "organise_signals",
    )
    intervention_min_open_questions: int = 3
    intervention_min_untested_assumptions: int = 2
    intervention_case_min_options: int = 1  # signals naming alternatives, beside a decision and a constraint
    intervention_case_option_phrases: tuple[str, ...] = (
        "or", "either", "option", "options", "alternative", "alternatives", "versus", "vs", "instead of",
        "rather than", "compared to", "compared with",
    )
    intervention_density_min_signals: int = 6  # signals in the last `inflection_window_messages` messages
    intervention_density_per_turn: float = 2.0  # and per turn among them
    intervention_messages: dict[str, str] = {  # {count}: the signals it rests on
        "organise_questions": "{count} questions are open in this conversation. Shall I organise them?",
        "validate_assumptions": "{count} assumptions have not been tested yet. Shall we validate them?",
        "structure_case": "There is a decision here with options and constraints ({count} signals). "
                          "Shall I lay it out as a case?",
        "organise_signals": "A lot was said in the last few turns ({count} signals). Shall I organise it?",
    }


class RetrievalHeuristics(Section):
    """Retrieval: the multi-signal relevance, the three brains (keyword, semantic, graph), their fusion, the
    candidate pools, graph propagation, serendipity and the query vector cache."""

    rrf_k: int = 60
    weight_semantic: float = 0.4
    weight_entity: float = 0.25
    weight_recency: float = 0.2
    weight_importance: float = 0.1
    weight_reinforcement: float = 0.05
    reinforcement_full_count: int = 5  # a fact's reinforcement signal: min(1, reinforcement_count / 5)
    reinforcement_default: float = 0.5  # the signal of a memory without a reinforcement count (not a fact)
    recency_half_life_days: float = 30.0
    recency_half_life_long_days: float = 90.0
    semantic_min_similarity: float = 0.2  # the conversation context's similar turns and find-similar
    semantic_brain_min_similarity: float = 0.5  # the semantic brain's threshold (L-gent's 0.5; 0.2 was engram's)
    search_limit: int = 10
    # how a query is read: L-gent's rules ("lgent": a bare name, a type signature, depends / compatible /
    # implements) or engram's reading of conversational questions ("conversational": names, relations, kinds, times)
    query_classifier: Literal["lgent", "conversational"] = "lgent"
    # the brains' fusion, by intent (weights: keyword, semantic, graph, expansion)
    fusion_weights: dict[str, dict[str, float]] = {
        "exact_name": {"keyword": 0.8, "semantic": 0.1, "graph": 0.1, "expansion": 0.4},
        "relationship": {"keyword": 0.1, "semantic": 0.2, "graph": 0.7, "expansion": 0.4},
        "type": {"keyword": 0.2, "semantic": 0.2, "graph": 0.6, "expansion": 0.4},
        "temporal": {"keyword": 0.4, "semantic": 0.4, "graph": 0.2, "expansion": 0.4},
        "semantic": {"keyword": 0.2, "semantic": 0.6, "graph": 0.2, "expansion": 0.4},
    }
    fusion_rank_weight: float = 0.3  # the brains' weighted RRF (k = rrf_k), scaled by the best fused document
    fusion_match_weight: float = 0.5  # how well the text matches: keyword and semantic scores, standardized
    fusion_signal_weight: float = 0.2  # the multi-signal relevance times effective confidence
    fusion_match_keyword_share: float = 0.5  # keyword's share of the match; semantic has the rest
    fusion_speaker_weight: float = 0.3  # an event said by a user the query names (their own words)
    fusion_time_weight: float = 0.6  # a document from a time window the query names ("in May 2022")
    search_time_slack_days: float = 14.0  # a window stretches this far past its end: things are told later
    search_time_half_life_days: float = 7.0  # outside it, the time signal halves every this many days
    # how fused candidates are ordered: the model trained on the brains' features (retrieval/ranker.json, its score
    # the probability that a hit is relevant) or the hand-tuned fusion above (its score comparable within a query only)
    ranker: Literal["learned", "fusion"] = "learned"
    # the learned ranker's floor: hits less likely relevant are dropped. Off by default: LoCoMo, its training data,
    # has no facts and few procedures among the candidates and no small worlds, where its probabilities fall under
    # 0.001 for hits that answer (on LoCoMo's held-out conversations no floor up to 0.002 changes Recall@10)
    search_min_relevance: float = 0.0
    # the question's floor: when no candidate's evidence (retrieval/evidence.py: the probability of relevance from its
    # cosine, words and entities alone, which mean the same in any world) reaches it, search finds nothing relevant
    # (a keyword query, with quotes, wildcards or operators, asks for its matches: it has no floor)
    search_min_evidence: float = 0.0003
    search_candidates: int = 150  # documents the keyword and graph brains hand to fusion
    # nearest rows per kind from the semantic brain (and the HNSW ef_search): 100 -> 40 kept LoCoMo's held-out
    # Recall@10 (all 0.812 -> 0.811) and took ~2 ms off the fused search at 100,000 events (docs/benchmarks.md)
    search_semantic_candidates: int = 40
    search_pool: int = 250  # candidates fusion scores, the best by weighted RRF (with the turns around them)
    search_expand_top: int = 100  # the best fused events whose neighbouring turns join the candidates
    search_neighbour_weight: float = 0.4  # a turn gains this share of its best neighbouring turn's score
    search_session_weight: float = 0.4  # and this share of the best score in its conversation
    search_context_weight: float = 0.5  # an event's similarity: the share of its in-context vector
    # context propagation through the graph
    graph_depth: int = 2  # hops from the question's entities
    graph_hop_decay: float = 0.5  # a connected entity counts this much less per hop
    graph_max_entities: int = 50
    # the expansion brain: turns reached through the question's entities' facts, relationships and co-mentions
    search_expansion_limit: int = 60  # turns it ranks; 0 turns it off (the document's three brains)
    search_expansion_term_weight: float = 0.3  # the share of the question's words (names aside) a turn contains
    search_expansion_dated_weight: float = 0.1  # a turn that says when something happened ("yesterday", "in May")
    search_expansion_when_weight: float = 0.2  # the same, for a question asking when (or how long ago)
    serendipity_limit: int = 3  # related entities the ranking left out, suggested with the results
    query_embedding_cache: int = 1024  # query vectors kept per process


class ContextHeuristics(Section):
    """The conversation context: what it gathers, and when a web search comes first (if one is enabled)."""

    context_recent_exchanges: int = 5
    context_semantic: int = 3
    context_important: int = 5
    context_max_items: int = 8
    web_search_keywords: tuple[str, ...] = (
        "news", "today", "latest", "current", "recent", "now", "this week", "this month", "today's",
        "recent events", "what's happening", "what happened", "breaking", "update",
    )
    web_search_question_patterns: tuple[str, ...] = (
        "what is", "what are", "what's", "tell me about", "update on", "latest on",
    )
    web_search_temporal_words: tuple[str, ...] = ("today", "now", "latest")  # with a question pattern
    web_search_keyword_match: KeywordMatch = "anywhere"  # Komputa: the input "contains" a keyword
    web_search_max_results: int = 3
    relative_time_singular: bool = False  # Komputa reads "{X} minutes ago" even for 1; True: "1 minute ago"


class QueryHeuristics(Section):
    """The query loop and research mode: their budgets, how a context is thinned, and the answer's
    confidence levels."""

    max_info_requests: int = 3
    max_initial_entities: int = 10
    # The context items and conversation lines sent with each answer call (6,000, then 900, before issue 21's
    # 2,000-token question); the call adds about 840 tokens of instructions and tool schemas (the cached prefix),
    # the items' ids and dates and this round's offer. Thinning compacts the conversation and strips long bodies
    # before it drops an item, so the search's evidence goes last (LoCoMo: the same F1 at 700 as at 900).
    context_token_budget: int = 700
    chars_per_token: float = 4.0
    query_initial_hits: int = 10  # fused search hits in the first context
    query_relationship_entities: int = 3  # entities whose direct relationships join the first context
    context_keep_at_least: int = 5  # thinning never drops below this many items
    context_summary_body_chars: int = 300  # thinning strips summaries (and any longer body) to this
    context_compact_conversation: int = 3  # conversation lines kept when the context is compacted
    entity_record_max_facts: int = 20  # facts in an expanded entity's full record
    capability_max_results: int = 10  # items one capability request may add
    # False (the Resonance rule): the entities a request may name are those held in full or as a summary, and
    # the expandable ones are the summaries; True: also the entities the context's other items only mention
    query_referenced_entities: bool = False
    # True (the Resonance rule): an answer forced by the info-request limit is capped at answer_degraded_confidence
    # (low); False: it keeps the model's confidence (an invalid request's forced answer is capped either way)
    query_forced_answer_low: bool = True
    # True: engram's four capabilities beyond Resonance's six (search_memories, get_conversation_history,
    # get_entity_timeline, find_path) are offered too; False: the six built-in capabilities alone
    query_memory_capabilities: bool = True
    answer_high_confidence: float = 0.75  # at or above: "high"
    answer_medium_confidence: float = 0.45  # at or above: "medium", else "low"
    answer_degraded_confidence: float = 0.3  # the cap of a forced answer (the limit, an invalid request), of the outage's
    fallback_answer_items: int = 3  # items an answer from retrieval alone (the model unavailable) quotes
    # research mode: plan, gather, evaluate (the completeness check), synthesize
    research_max_sub_questions: int = 5  # the plan's sub-questions (the offline plan: the question's clauses)
    research_max_follow_ups: int = 3  # sub-questions one evaluation may add for the next round
    research_max_conflicts: int = 6  # conflicting pairs of sources named in a synthesis
    # the Intelligence Engine's thinning budgets (estimated tokens): over 40k the lowest scores are dropped
    # (down to 40k); a context gathered over 60k first has its long bodies masked, over 80k it is compacted too
    research_drop_tokens: int = 40_000
    research_mask_tokens: int = 60_000
    research_compact_tokens: int = 80_000


class ConsolidationHeuristics(Section):
    """Consolidation: summaries of a scope's facts and events, forgetting by decay, and procedures learned
    from entities that come up together."""

    summary_max_items: int = 8  # facts and events each a summary is synthesized from, the highest-scoring
    summary_scope_facts: int = 50  # a scope's facts read (the most confident), ranked by effective confidence
    summary_min_facts: int = 2  # active facts a user holds about an entity before it gets a summary of its own
    summary_default_confidence: float = 0.6  # a summary that confirms no fact (made of events only)
    consolidation_boost: float = 0.1  # a fact the summary confirms, once per run, under max_confidence
    archive_below_confidence: float = 0.2  # effective confidence (decay applied) under which a fact is archived
    consolidation_max_scopes: int = 50  # scopes one run plans (per run, every world together)
    consolidation_forget_batch: int = 5_000  # a world's facts one run checks for decay, least validated first
    procedure_min_support: int = 3  # separate conversations two entities must come up together in
    procedure_min_lift: float = 1.2  # and more often together than their own frequencies explain
    procedure_conversations: int = 50  # a user's latest conversations patterns are read from
    procedure_max_per_user: int = 10


from __future__ import annotations

from collections.abc import Sequence

from engram.model.entities import EntitySighting
from engram.model.memories import OntologyPredicate
from engram.ports import Reference, WindowEvent

SYSTEM = """You extract durable facts from a conversation for a long-term memory.
Record each fact as a triple through the record_facts tool:
- subject: the entity the fact is about (use a known entity's exact name when it is the same thing;
  the speaker of a user message is the named speaker),
- predicate: snake_case (name, lives_in, works_at, works_as, likes, prefers, dislikes, has_<thing>,
  <relation>_of, favorite_<thing>, ...),
- object: a value or an entity name (set object_is_entity when it names a person, place or organisation),
- confidence in [0, 1]: lower for hedged or second-hand statements,
- event_id: the id of the message that states it,
- valid_from: when the fact became true, as an ISO timestamp. Resolve relative dates ("next Friday",
  "last year") against that message's timestamp, never against today.
Only record what the messages state; skip questions, greetings and chit-chat. Record nothing when
there is nothing durable.
When the messages come with references to link (pronouns like "she" or "it", descriptions like "my boss"),
link each one you can through `coreferences`: its reference_id, the entity_id of the candidate it refers to
(only the candidates listed, never the speaker of that message for "he", "she", "it" or "they") and your
confidence in [0, 1]. Leave out a reference that none of the candidates fits. In triples, write the linked
entity's name, not the pronoun."""


def ontology(predicates: Sequence[OntologyPredicate]) -> str:
    """The world's predicates, one a line with what each means and its other words: the same for every window
    of the world, so it rides in the cached system prefix."""
    lines = []
    for p in predicates:
        line = f"- {p.concept}" + (f": {p.description}" if p.description else "")
        if p.synonyms:
            line += f" (also said as: {', '.join(p.synonyms)})"
        lines.append(line)
    return ("This world's ontology names these predicates. When a fact fits one, record it under that exact "
            "predicate rather than a word of your own; only a fact none of them fits takes a free snake_case "
            "predicate.\n" + "\n".join(lines))


def messages(events: Sequence[WindowEvent], known_entities: Sequence[str], references: Sequence[Reference] = (),
             candidates: Sequence[EntitySighting] = ()) -> list[dict[str, str]]:
    lines = [f"[{e.event_id}] ({e.occurred_at.isoformat()}) {e.speaker or e.role} ({e.role}): {e.content}"
             for e in events]
    known = ", ".join(known_entities) if known_entities else "(none yet)"
    text = f"Known entities: {known}\n\nMessages:\n" + "\n".join(lines)
    if references:
        text += "\n\n" + render_references(references, candidates)
    return [{"role": "user", "content": text}]


def render_references(references: Sequence[Reference], candidates: Sequence[EntitySighting]) -> str:
    """The references to link and the candidates, one line each, the most recently mentioned first."""
    names = {c.entity_id: c.name for c in candidates}
    seen: dict[str, list[str]] = {}
    for c in candidates:
        notes = seen.setdefault(c.entity_id, [c.entity_type])
        if c.relation is not None and c.related_entity_id is not None:
            notes.append(f"the {c.relation} of {names.get(c.related_entity_id, c.related_entity_id)}")
        elif c.event_id is not None and f"mentioned in [{c.event_id}]" not in notes and len(notes) < 3:
            notes.append(f"mentioned in [{c.event_id}]")
    refs = [f'- {r.reference_id}: "{r.text}" ({r.kind}) in [{r.event_id}]' for r in references]
    cands = [f"- {entity_id}: {names[entity_id]} ({'; '.join(notes)})" for entity_id, notes in seen.items()]
    return ("References to link:\n" + "\n".join(refs) + "\n\nCandidate entities:\n" +
            ("\n".join(cands) if cands else "- (none)"))

from __future__ import annotations

from collections.abc import Sequence

from engram.ports import WindowEvent

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
there is nothing durable."""


def messages(events: Sequence[WindowEvent], known_entities: Sequence[str]) -> list[dict[str, str]]:
    lines = [f"[{e.event_id}] ({e.occurred_at.isoformat()}) {e.speaker or e.role} ({e.role}): {e.content}"
             for e in events]
    known = ", ".join(known_entities) if known_entities else "(none yet)"
    return [{"role": "user", "content": f"Known entities: {known}\n\nMessages:\n" + "\n".join(lines)}]

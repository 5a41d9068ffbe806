"""The aliases resolution teaches without a model: the names a text states for its speaker or someone
("call me Dee", "My name is Dana Whitfield", "Robert Lang, known as Bobby"), and the forms a new entity's
name is also said in (a person's first name, a company's name without its suffix)."""

from __future__ import annotations

from collections.abc import Sequence

from engram.model.entities import EntityAlias, Mention, Resolution
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.ports.language import LanguageEngine, NamedSpan
from engram.rules.names import StatedAlias, first_name, has_corporate_suffix, name_key


def named_spans(language: LanguageEngine | None, events: Sequence[StoredEvent]) -> dict[str, list[NamedSpan]] | None:
    """The parser's named entities of a batch's events, in one call; None without a parser (the rules alone)."""
    if language is None or not events:
        return None
    return dict(zip([e.event_id for e in events], language.entities([e.content for e in events]), strict=True))


def derived_aliases(world_id: str, entity_id: str, name: str, entity_type: str, h: Heuristics,
                    origin_event_id: str | None) -> list[EntityAlias]:
    """The other forms a new entity's name is said in, as global aliases: a person's first name ("Dana" of
    "Dana Whitfield": one known Dana resolves to her, several are ranked or asked), a company's name without
    its suffix ("acme" of "Acme Corp", which "Acme Corporation" and "ACME Inc." also come to)."""
    forms = []
    if entity_type == "person" and (first := first_name(name)) is not None:
        forms.append(first)
    if has_corporate_suffix(name):
        forms.append(name_key(name))
    return [EntityAlias(world_id=world_id, entity_id=entity_id, alias=form, confidence=h.resolve.derived_alias_confidence,
                        source="created", origin_event_id=origin_event_id) for form in forms]


def stated_resolution(event: StoredEvent, mention: Mention, stated: Sequence[StatedAlias], speaker_id: str,
                      resolved: dict[tuple[int, int], str | None], h: Heuristics, learned: list[EntityAlias]) -> Resolution | None:
    """A mention that is a name the text states for its speaker ("call me Dee") or for a name before it
    ("Robert Lang, known as Bobby") resolves to that entity, and the name becomes its global alias (with the
    first name of a full name stated). None: the mention states no name, or its subject did not resolve."""
    said = next((s for s in stated if s.start < mention.end and mention.start < s.end), None)
    if said is None or mention.kind != "name":
        return None
    entity_id = speaker_id if said.subject is None else next(
        (e for (start, end), e in resolved.items() if start <= said.subject_start < end), None)
    if entity_id is None:
        return None
    confidence = h.resolve.stated_alias_confidence
    learned.append(EntityAlias(world_id=event.world_id, entity_id=entity_id, alias=said.alias, confidence=confidence,
                               source="user", origin_event_id=event.event_id))
    learned.extend(derived_aliases(event.world_id, entity_id, said.alias, "person", h, event.event_id))
    return Resolution(mention=mention, method="alias", entity_id=entity_id, confidence=confidence)

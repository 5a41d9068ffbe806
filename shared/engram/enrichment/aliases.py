"""The aliases resolution teaches without a model: the names a text states for its speaker or someone
("call me Dee", "My name is Dana Whitfield", "Robert Lang, known as Bobby"), and the forms a new entity's
name is also said in (a person's first name, a company's name without its suffix)."""

from __future__ import annotations

from collections.abc import Sequence

from engram.model.entities import EntityAlias, Mention, NameMatch, Resolution
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.ports.entities import EntityStore
from engram.ports.language import LanguageEngine, NamedSpan
from engram.rules.names import StatedAlias, brand, first_name, has_corporate_suffix, is_short_form, name_key


def named_spans(language: LanguageEngine | None, events: Sequence[StoredEvent]) -> dict[str, list[NamedSpan]] | None:
    """The parser's named entities of a batch's events, in one call; None without a parser (the rules alone)."""
    if language is None or not events:
        return None
    return dict(zip([e.event_id for e in events], language.entities([e.content for e in events]), strict=True))


def derived_aliases(world_id: str, entity_id: str, name: str, entity_type: str, h: Heuristics,
                    origin_event_id: str | None) -> list[EntityAlias]:
    """The other forms a new entity's name is said in, as global aliases: a person's first name ("Dana" of
    "Dana Whitfield": one known Dana resolves to her, several are ranked or asked), a company's name without
    its suffix ("acme" of "Acme Corp", which "Acme Corporation" and "ACME Inc." also come to) or its kind
    ("northwind" of "Northwind Labs")."""
    forms = []
    if entity_type == "person" and (first := first_name(name)) is not None:
        forms.append(first)
    short = brand(name) if entity_type == "organization" else name_key(name) if has_corporate_suffix(name) else None
    if short is not None and short != " ".join(name.lower().split()):
        forms.append(short)
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


def suffix_free_matches(store: EntityStore, world_id: str, name: str, user_id: str | None,
                        h: Heuristics) -> list[NameMatch]:
    """The entities a company's name reaches by its key when its suffix made it miss ("Acme Corporation" ->
    "acme"): one named so ("Acme", "Acme Corp", "ACME Inc."), never one that only shortens to it ("Acme
    Labs" is another company); for a name of its kind ("Northwind Labs"), an entity named "Northwind"."""
    key, short, said = name_key(name), brand(name), " ".join(name.lower().split())
    if said in (key, short) and key == short:
        return []
    r = h.resolve
    found = [m for m in store.match_name(world_id, key, user_id, fuzzy_min=r.fuzzy_min, alias_accept=r.alias_accept,
                                         limit=r.disambiguation_candidates)
             if m.stage == "exact" or (m.stage == "alias" and m.score > r.alias_accept)] if key != said else []
    named = {e.entity_id for e in store.get_entities(world_id, list({m.entity_id for m in found}))
             if any(name_key(a) == key and a.lower() != key for a in [e.name, *e.aliases])}
    found = [m for m in found if m.stage == "exact" or m.entity_id in named]
    if not found and short not in (key, said):
        found = [m for m in store.match_name(world_id, short, user_id, fuzzy_min=1.0, alias_accept=1.0,
                                             limit=r.disambiguation_candidates) if m.stage == "exact"]
    return found


def first_named_person(store: EntityStore, world_id: str, name: str, entity_type: str) -> str | None:
    """The one person known by a full name's first name alone ("Maya", then "Maya Whitfield"): the full name is
    hers unless she already has another ("Maya Angelou" is someone else) or stands for a user. None: no such
    person, or several."""
    first = first_name(name) if entity_type == "person" else None
    if first is None:
        return None
    exact = [m for m in store.match_name(world_id, first, None, fuzzy_min=1.0, alias_accept=1.0, limit=2)
             if m.stage == "exact"]
    found = store.get_entity(world_id, exact[0].entity_id) if len(exact) == 1 else None
    if found is None or found.entity_type != "person" or found.external_ref is not None:
        return None
    named = [a for a in found.aliases if len(a.split()) > 1 and a.split()[0].lower() == first.lower()]
    return found.entity_id if all(is_short_form(a, name) or a.lower() == name.lower() for a in named) else None

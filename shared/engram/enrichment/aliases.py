"""Names resolved as people say them, without a model: the names a text states for its speaker or someone
("call me Dee", "My name is Dana Whitfield", "Robert Lang, known as Bobby"), a first name alone for the one
person known by it, a company whatever its suffix ("Acme Corporation" for "Acme Corp") or without its kind
("Northwind" for "Northwind Labs"), and a full name for the one person known by its first name alone. The
parts of a name are matched against the world's names when asked, never stored as aliases of their own."""

from __future__ import annotations

from collections.abc import Sequence

from engram.model.entities import CanonicalEntity, EntityAlias, Mention, Resolution
from engram.model.events import StoredEvent
from engram.model.heuristics import Heuristics
from engram.ports.entities import EntityStore
from engram.ports.language import LanguageEngine, NamedSpan
from engram.rules.names import StatedAlias, brand, first_name, is_short_form, name_key


def named_spans(language: LanguageEngine | None, events: Sequence[StoredEvent]) -> dict[str, list[NamedSpan]] | None:
    """The parser's named entities of a batch's events, in one call; None without a parser (the rules alone)."""
    if language is None or not events:
        return None
    return dict(zip([e.event_id for e in events], language.entities([e.content for e in events]), strict=True))


def stated_resolution(event: StoredEvent, mention: Mention, stated: Sequence[StatedAlias], speaker_id: str,
                      resolved: dict[tuple[int, int], str | None], h: Heuristics,
                      learned: list[EntityAlias]) -> Resolution | None:
    """A mention that is a name the text states for its speaker ("call me Dee") or for a name before it
    ("Robert Lang, known as Bobby") resolves to that entity, and the name becomes its alias: the world's for the
    speaker's own name (as a stated `name` fact's is), the speaker's own for someone else's nickname. None: the
    mention states no name, or its subject did not resolve."""
    said = next((s for s in stated if s.start < mention.end and mention.start < s.end), None)
    if said is None or mention.kind != "name":
        return None
    entity_id = speaker_id if said.subject is None else next(
        (e for (start, end), e in resolved.items() if start <= said.subject_start < end), None)
    if entity_id is None:
        return None
    confidence = h.resolve.stated_alias_confidence
    learned.append(EntityAlias(world_id=event.world_id, entity_id=entity_id, alias=said.alias, confidence=confidence,
                               user_id=None if said.subject is None else event.user_id, source="user",
                               origin_event_id=event.event_id))
    return Resolution(mention=mention, method="alias", entity_id=entity_id, confidence=confidence)


def name_part_matches(store: EntityStore, world_id: str, name: str, entity_type: str) -> list[str]:
    """The entities a name is a part or a variant of: a first name alone of a person's full name ("Robert" of
    "Robert Lang", or of a user's stated "Dana Whitfield"); a company's name said without its kind or with
    another suffix ("Northwind" of "Northwind Labs", "Acme Corporation" of "Acme Corp", never of "Acme Labs").
    Empty when the name is none of these or the world knows no such entity."""
    said, key, short = " ".join(name.lower().split()), name_key(name), brand(name)
    alone = len(said.split()) == 1 and name[:1].isupper()
    if not alone and said == key == short:
        return []
    found = store.entities_named_from(world_id, short if short != key else key, 20)
    # A name read as a place is no part of anyone's ("York" is not York University).
    # The small model often reads an unknown first name alone as an organization ("Oyelaran works at ..."): a
    # lone word read so may still be a known person's first name.
    kinds = {"person": {"person", "organization"} if alone else {"person"},
             "organization": {"organization", "person"} if alone else {"organization"},
             "thing": {"person", "organization"}}
    return [e.entity_id for e in found if e.entity_type in kinds.get(entity_type, set())
            and _part_of(e, said, key, short, alone)]


def _part_of(entity: CanonicalEntity, said: str, key: str, short: str, alone: bool) -> bool:
    names = [entity.name, *entity.aliases]
    if entity.entity_type == "person":
        return alone and any((first_name(n) or "").lower() == key for n in names)
    if key != said and any(name_key(n) == key for n in names):
        return True  # another spelling of one company ("Acme Corp" for "Acme Corporation")
    if short != key:
        return any(" ".join(n.lower().split()) == short for n in names)  # "Northwind" for "Northwind Labs"
    # A first name alone of a two-word name with no company word, read as an organization by the small model
    # ("Kalani" of "Kalani Castellanos"), or a company's first word ("Acme" of "Acme Robotics").
    return alone and entity.entity_type == "organization" and any(
        brand(n) == key or (len(n.split()) == 2 and n.split()[0].lower() == key) for n in names)


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

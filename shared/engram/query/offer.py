"""The capability registry, the one list of what the answering model may ask for, and each round's offer.

A `Capability` joins a parameter model (`query/capabilities.py`: its docstring and fields say what it
does and takes) to its executor and to the kind of id each id parameter names. From the registry come
the request validation (a discriminated union), the dispatch, the prompts' capability lines and, every
round, the `Offer`: every id a request names (an entity, a conversation, a definition) must be one the
context holds, so the model can only widen what it was shown, never reach an id it invented or
another world's data.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, TypeVar, Union, get_args

from annotated_types import Ge, Le
from pydantic import Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from engram.errors import CapabilityRejected
from engram.model.context import QueryContext
from engram.model.queries import ContextItem, InfoRequest
from engram.model.requests import Capability as CapabilityName
from engram.model.world import World
from engram.query import capabilities as c
from engram.query.capabilities import CapabilityParams, CapabilityPorts, RangeInPrompt

P = TypeVar("P", bound=CapabilityParams)


@dataclass(frozen=True)
class IdKind:
    """A kind of id that parameters name; a request may name only those the context holds."""

    plural: str  # how the offer lists them
    held: Callable[[QueryContext], Sequence[str]]
    refusal: str  # why a request naming another is refused, with {value} and {held} to fill in


# The Resonance refusal, `Invalid entity ID: ...`; expanding is constrained to the expandable entities (summaries).
ENTITIES = IdKind("entity ids", QueryContext.all_entity_ids, "Invalid entity ID: {value}")
EXPANDABLE = IdKind("entity ids held only as summaries, to expand", QueryContext.expandable_entity_ids,
                    "Invalid entity ID: {value}")
DEFINITIONS = IdKind("definitions", lambda context: context.definitions,
                     "definition {value!r} is not one the context holds ({held})")
CONVERSATIONS = IdKind("conversations", lambda context: context.conversation_ids,
                       "conversation {value!r} is not in this query's context")


@dataclass(frozen=True)
class Capability(Generic[P]):
    """One capability: its parameter model, its executor, and the kind of id each of its id parameters names."""

    params: type[P]
    run: Callable[[CapabilityPorts, World, QueryContext, str, P], list[ContextItem]]
    ids: Mapping[str, IdKind] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """What a request calls it: its parameter model's discriminator."""
        name: str = get_args(self.params.model_fields["capability"].annotation)[0]
        return name

    @property
    def summary(self) -> str:
        """What it does as the prompt says it: the first paragraph of the parameter model's docstring."""
        first = " ".join(inspect.cleandoc(self.params.__doc__ or "").split("\n\n")[0].split())
        return first[:1].lower() + first[1:].removesuffix(".")

    @property
    def signature(self) -> str:
        """Its parameters as the prompt lists them, `{entity_id, depth 1-3}`."""
        fields = self.params.model_fields
        return "{" + ", ".join(_parameter(n, f) for n, f in fields.items() if n != "capability") + "}"


def _parameter(name: str, info: FieldInfo) -> str:
    if not any(isinstance(m, RangeInPrompt) for m in info.metadata):
        return name
    low = next(m.ge for m in info.metadata if isinstance(m, Ge))
    high = next(m.le for m in info.metadata if isinstance(m, Le))
    return f"{name} {low}-{high}"


def _registry(*entries: Capability[Any]) -> dict[str, Capability[Any]]:
    """The entries by name, checked against the names InfoRequest accepts (the model layer's `Capability`,
    which the tool schemas carry) and against their parameter models."""
    registry = {e.name: e for e in entries}
    if len(registry) != len(entries) or set(registry) != set(get_args(CapabilityName)):
        raise TypeError(f"the capability registry {sorted(registry)} and InfoRequest's capabilities "
                        f"{sorted(get_args(CapabilityName))} must name the same capabilities, each once")
    for e in entries:
        if not set(e.ids) <= set(e.params.model_fields):
            raise TypeError(f"{e.name}: id parameters {sorted(set(e.ids) - set(e.params.model_fields))} are not fields")
    return registry


# The registry: its order is the prompt's.
CAPABILITIES = _registry(
    Capability(c.ExpandEntity, c.expand, {"entity_id": EXPANDABLE}),
    Capability(c.ExpandEntities, c.expand, {"entity_ids": EXPANDABLE}),
    Capability(c.SearchEntities, c.entities_matching),
    Capability(c.EntityByName, c.entities_named),
    Capability(c.Relationships, c.relationships_of, {"entity_id": ENTITIES}),
    Capability(c.ListDefinitions, c.list_definitions),
    Capability(c.EntitiesByDefinition, c.entities_of_definition, {"definition": DEFINITIONS}),
    Capability(c.SearchMemories, c.memories_matching),
    Capability(c.ConversationHistory, c.conversation_turns, {"conversation_id": CONVERSATIONS}),
    Capability(c.EntityTimeline, c.timeline, {"entity_id": ENTITIES}),
    Capability(c.FindPath, c.path_between, {"from_entity_id": ENTITIES, "to_entity_id": ENTITIES}),
)

# engram's own capabilities beyond Resonance's six built-in ones: a world withdraws them (`query_memory_capabilities`)
MEMORY_CAPABILITIES = ("search_memories", "get_conversation_history", "get_entity_timeline", "find_path")

# A request, validated: the union of the parameter models, told apart by `capability`.
Request: Any = Annotated[Union[tuple(e.params for e in CAPABILITIES.values())], Field(discriminator="capability")]  # noqa: UP007
_REQUEST: TypeAdapter[CapabilityParams] = TypeAdapter(Request)
# The kinds of id some parameter names, in the registry's order (the offer's).
_KINDS = tuple(dict.fromkeys(kind for e in CAPABILITIES.values() for kind in e.ids.values()))


def _named_by() -> dict[IdKind, tuple[str, ...]]:
    """Each kind's parameters as the offer names them: a name that takes several kinds is qualified."""
    kinds_of: dict[str, set[IdKind]] = {}
    for e in CAPABILITIES.values():
        for p, k in e.ids.items():
            kinds_of.setdefault(p, set()).add(k)
    return {kind: tuple(dict.fromkeys(p if len(kinds_of[p]) == 1 else f"{e.name}.{p}"
                                      for e in CAPABILITIES.values() for p, k in e.ids.items() if k is kind))
            for kind in _KINDS}


_NAMED_BY = _named_by()


@dataclass(frozen=True)
class Offer:
    """The capabilities of one round, with the ids each kind of id parameter may take (those the context holds)."""

    held: Mapping[IdKind, tuple[str, ...]]
    capabilities: tuple[str, ...] = tuple(CAPABILITIES)  # the capabilities offered, in the registry's order

    @property
    def entity_ids(self) -> tuple[str, ...]:
        """The entities a request may name."""
        return self.held[ENTITIES]

    @property
    def expandable_ids(self) -> tuple[str, ...]:
        """The entities an expand request may name: the summaries not loaded in full yet."""
        return self.held[EXPANDABLE]

    def describe(self, shown: Mapping[IdKind, frozenset[str]] | None = None) -> list[str]:
        """The values this round's id parameters may take, each list said once, with the parameters taking it
        (`capability.parameter` where a parameter's name takes different lists in different capabilities); when
        some capabilities are withdrawn, the ones offered come first. A kind whose ids are exactly `shown[kind]`
        (ids the prompt's own items carry, as its instructions say) is left out."""
        shown = shown or {}
        lines = [f"- {kind.plural} ({', '.join(_NAMED_BY[kind])}): [{', '.join(ids)}]" for kind, ids in self.held.items()
                 if kind not in shown or set(ids) != shown[kind]]
        if len(self.capabilities) == len(CAPABILITIES):
            return lines
        return [f"- capabilities offered (no other): [{', '.join(self.capabilities)}]", *lines]

    def validate(self, request: InfoRequest) -> CapabilityParams:
        """The typed request, or CapabilityRejected saying which parameters are out of bounds and why (every
        invalid id, as `validateInfoRequest` lists its errors)."""
        try:
            typed = _REQUEST.validate_python({"capability": request.capability, **request.params})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'request'}: {e['msg']}"
                                 for e in exc.errors(include_url=False))
            raise CapabilityRejected(f"{request.capability}: {problems}",
                                     details=exc.errors(include_url=False, include_context=False)) from exc
        capability = CAPABILITIES[typed.capability]
        if capability.name not in self.capabilities:
            raise CapabilityRejected(f"{capability.name}: not offered in this world (offered: "
                                     f"{', '.join(self.capabilities)})")
        errors = []
        for parameter, kind in capability.ids.items():
            value = getattr(typed, parameter)
            for named in value if isinstance(value, list) else [value]:
                if named not in self.held[kind]:
                    errors.append(kind.refusal.format(value=named, held=", ".join(self.held[kind]) or "none"))
        if errors:
            raise CapabilityRejected(f"{capability.name}: " + "; ".join(errors), details={"errors": errors})
        return typed


def offer(context: QueryContext) -> Offer:
    """This round's capabilities, constrained to what `context` holds (without engram's own four where the
    context's world withdrew them)."""
    offered = tuple(name for name in CAPABILITIES if context.memory_capabilities or name not in MEMORY_CAPABILITIES)
    kinds = dict.fromkeys(k for name in offered for k in CAPABILITIES[name].ids.values())
    return Offer(held={kind: tuple(kind.held(context)) for kind in _KINDS if kind in kinds}, capabilities=offered)


def execute(clients: CapabilityPorts, world: World, context: QueryContext, user_id: str,
            request: CapabilityParams) -> list[ContextItem]:
    """Run a validated request through its capability's executor; returns the context items it found (new
    definitions go into the context)."""
    return CAPABILITIES[request.capability].run(clients, world, context, user_id, request)

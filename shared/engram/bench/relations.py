"""DialogRE relations: what the offline model extracts from dialogues, mapped onto DialogRE's relation kinds and
scored against the human annotation, next to the regex extractor (`statements`) measured in the same run.

Each dialogue is read turn by turn ("Speaker 2: ..." is a user turn of speaker "Speaker 2") through the offline
model's `extract` (the model port the pipeline calls), not through the whole pipeline: the pipeline adds entity
resolution and storage, not relations, and would take most of the run on 358 dialogues. A triple maps onto a
DialogRE kind where one exists (lives_in -> per:place_of_residence, sister_of -> per:siblings, works_as and
works_as -> per:title, ...), with the inverse kinds DialogRE also annotates (per:parents for a mother_of).

Scoring: DialogRE annotates chosen argument pairs (with every relation between them, or "unanswerable"), not
every pair a dialogue relates, so precision is over the predictions on annotated pairs; predictions on pairs it
never annotated are counted (`unjudged`) and `precision_all_predictions` counts them as wrong. Recall is over the
gold pairs of the mapped kinds. A pronoun or "my sister" is no argument. Arguments match case-insensitively without articles, a name also by its words
("Joey" for "Joey Tribbiani"); for kinds other than per:alternate_names, a speaker and the names the gold
annotation gives them (per:alternate_names) are one person: both systems are scored the same way.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.adapters.engine_first import needs_model
from engram.adapters.offline.llm import OfflineLLM
from engram.adapters.offline.phrases import OCCUPATIONS
from engram.adapters.offline.statements import SELF, statements
from engram.ports import WindowEvent

SYMMETRIC = frozenset({"per:siblings", "per:spouse", "per:roommate", "per:friends", "per:girl/boyfriend",
                       "per:other_family", "per:neighbor", "per:alternate_names"})
_INVERSE = {"per:parents": "per:children", "per:children": "per:parents", "per:boss": "per:subordinate",
            "per:subordinate": "per:boss", "per:place_of_residence": "gpe:residents_of_place",
            "per:employee_or_member_of": "org:employees_or_members", "per:place_of_birth": "gpe:births_in_place"}
# A relation noun's DialogRE kind, read from its owner: "Ana sister_of Dana" is (Dana, Ana, per:siblings), Dana's
# sibling is Ana; "Ben son_of Dana" is (Dana, Ben, per:children). An agent's clients are the other way round.
_FAMILY = {"sister": "per:siblings", "brother": "per:siblings", "sibling": "per:siblings", "twin": "per:siblings",
           "wife": "per:spouse", "husband": "per:spouse", "spouse": "per:spouse",
           "mother": "per:parents", "father": "per:parents", "mom": "per:parents", "mum": "per:parents",
           "dad": "per:parents", "parent": "per:parents",
           "son": "per:children", "daughter": "per:children", "kid": "per:children", "child": "per:children",
           "baby": "per:children",
           "roommate": "per:roommate", "flatmate": "per:roommate", "housemate": "per:roommate",
           "friend": "per:friends", "girlfriend": "per:girl/boyfriend", "boyfriend": "per:girl/boyfriend",
           "neighbor": "per:neighbor", "neighbour": "per:neighbor",
           "boss": "per:boss", "manager": "per:boss", "assistant": "per:subordinate"}
_CLIENTS = frozenset({"agent", "lawyer", "therapist", "dentist", "doctor"})  # "Estelle agent_of Joey": Estelle's client
_OTHER_FAMILY = ("aunt", "uncle", "cousin", "niece", "nephew", "grand", "in_law", "step", "godmother", "godfather")
_PREDICATES = {"lives_in": "per:place_of_residence", "comes_from": "per:place_of_residence",
               "born_in": "per:place_of_birth", "works_at": "per:employee_or_member_of", "works_as": "per:title",
               "age": "per:age", "name": "per:alternate_names", "married_to": "per:spouse"}
_PETS = ("has_dog", "has_cat", "has_pet", "has_puppy", "has_kitten", "has_hamster", "has_parrot", "has_rabbit",
         "has_bird", "has_fish", "has_turtle", "has_monkey", "has_duck", "has_chick", "has_snake", "has_lizard")
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
_NOT_ARGUMENTS = frozenset({"he", "she", "they", "user"})


def kinds_of(subject: str, predicate: str, obj: str) -> list[tuple[str, str, str]]:
    """The DialogRE (x, y, kind) pairs a triple states, its inverse kind included; none when unmapped."""
    kind = _PREDICATES.get(predicate)
    if predicate == "is_a" and obj.split() and obj.split()[-1].lower() in OCCUPATIONS:
        kind = "per:title"  # "I'm a chef" as the regex extractor reads it
    if kind is None and predicate in _PETS:
        kind = "per:pet"
    if kind is None and predicate.endswith("_of"):
        relation = predicate[:-3].split("_")[-1]
        kind = _FAMILY.get(relation) or ("per:other_family" if any(w in predicate for w in _OTHER_FAMILY)
                                         else None)
        if kind is not None:
            subject, obj = obj, subject  # "Ana sister_of Dana": Dana's sibling is Ana
        elif relation in _CLIENTS:
            kind = "per:client"
    if kind is None:
        return []
    pairs = [(subject, obj, kind)]
    if kind in _INVERSE:
        pairs.append((obj, subject, _INVERSE[kind]))
    return pairs


def _norm(text: str) -> str:
    return " ".join(_ARTICLE.sub("", text.strip().lower()).split())


@dataclass
class Gold:
    """One dialogue's gold pairs of the mapped kinds and who is who (per:alternate_names)."""

    pairs: set[tuple[str, str, str]] = field(default_factory=set)
    annotated: set[tuple[str, str]] = field(default_factory=set)  # every argument pair annotated, of any kind
    same: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def names(self, text: str) -> set[str]:
        key = _norm(text)
        return {key, *self.same.get(key, set())}


def _matches(predicted: str, gold: str, gold_names: Gold, kind: str) -> bool:
    options = {_norm(predicted)} if kind == "per:alternate_names" else gold_names.names(predicted)
    target = _norm(gold)
    for p in options:
        if p == target:
            return True
        words, gold_words = set(p.split()), set(target.split())
        if p and words and (words <= gold_words or gold_words <= words) and not p.startswith("speaker"):
            return True
    return False


@dataclass
class Score:
    correct: int = 0
    predicted: int = 0  # predictions on argument pairs the annotation judges
    unjudged: int = 0  # predictions on pairs it never annotated: neither right nor wrong by it
    gold: int = 0
    found: int = 0  # gold pairs some prediction matched

    def as_dict(self) -> dict[str, float | int]:
        p = self.correct / self.predicted if self.predicted else 0.0
        r = self.found / self.gold if self.gold else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        every = self.predicted + self.unjudged
        return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4), "predicted": self.predicted,
                "correct": self.correct, "gold": self.gold, "found": self.found, "unjudged": self.unjudged,
                "precision_all_predictions": round(self.correct / every, 4) if every else 0.0}


def mapped_kinds() -> set[str]:
    kinds = {*_PREDICATES.values(), *_FAMILY.values(), "per:other_family", "per:pet", "per:client"}
    return kinds | {_INVERSE[k] for k in kinds if k in _INVERSE}


def load(path: Path) -> list[tuple[list[tuple[str, str]], Gold]]:
    """Each dialogue's turns as (speaker, text) and its gold."""
    kinds = mapped_kinds()
    out = []
    for turns, relations in json.loads(Path(path).read_text()):
        gold = Gold()
        for rel in relations:
            gold.annotated.add((rel["x"], rel["y"]))
            for kind in rel["r"]:
                if kind == "per:alternate_names":
                    a, b = _norm(rel["x"]), _norm(rel["y"])
                    gold.same[a].add(b)
                    gold.same[b].add(a)
                if kind in kinds:
                    gold.pairs.add((rel["x"], rel["y"], kind))
        parsed = []
        for line in turns:
            speaker, _, text = line.partition(":")
            parsed.append((speaker.strip(), text.strip()) if text else ("Speaker", line))
        out.append((parsed, gold))
    return out


Reader = Callable[[Sequence[tuple[str, str]]], Iterable[tuple[str, str, str]]]


def engram_reader(turns: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The offline model's triples for a dialogue, read as one window."""
    at = datetime(2026, 1, 5, tzinfo=UTC)
    events = [WindowEvent(event_id=f"t{i}", role="user", content=text, occurred_at=at, speaker=speaker)
              for i, (speaker, text) in enumerate(turns)]
    reply = OfflineLLM().extract(events, [])
    return [(t.subject, t.predicate, t.object) for t in reply.value.triples if not t.negated]


def regex_reader(turns: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The regex extractor's triples (the offline model before the language engine)."""
    return [(speaker if s.subject == SELF else s.subject, s.predicate, speaker if s.object == SELF else s.object)
            for speaker, text in turns for s in statements(text)]


def score(dialogues: Sequence[tuple[list[tuple[str, str]], Gold]], reader: Reader) -> dict[str, Any]:
    """Precision, recall and F1 over all mapped pairs and by kind."""
    total, by_kind = Score(), defaultdict[str, Score](Score)
    for turns, gold in dialogues:
        predicted = {pair for triple in reader(turns) for pair in kinds_of(*triple)
                     if _norm(pair[0]) not in _NOT_ARGUMENTS and _norm(pair[1]) not in _NOT_ARGUMENTS
                     and not pair[0].lower().startswith("my ") and not pair[1].lower().startswith("my ")}
        found: set[tuple[str, str, str]] = set()
        for x, y, kind in predicted:
            hits = {g for g in gold.pairs if g[2] == kind and (
                (_matches(x, g[0], gold, kind) and _matches(y, g[1], gold, kind)) or
                (kind in SYMMETRIC and _matches(x, g[1], gold, kind) and _matches(y, g[0], gold, kind)))}
            judged = bool(hits) or any((_matches(x, a, gold, kind) and _matches(y, b, gold, kind)) or
                                       (_matches(y, a, gold, kind) and _matches(x, b, gold, kind))
                                       for a, b in gold.annotated)
            for s in (total, by_kind[kind]):
                s.predicted += judged
                s.unjudged += not judged
                s.correct += bool(hits)
            found |= hits
        for g in gold.pairs:
            for s in (total, by_kind[g[2]]):
                s.gold += 1
                s.found += g in found
    return {**total.as_dict(), "by_relation": {k: v.as_dict() for k, v in sorted(by_kind.items())}}


def windows_sent(dialogues: Sequence[tuple[list[tuple[str, str]], Gold]], window: int = 10) -> dict[str, Any]:
    """Engine first: of the extraction windows (`window` turns of a dialogue, as the pipeline groups them), how
    many the engine reads and how many a configured model would be sent."""
    counts: Counter[str] = Counter()
    at = datetime(2026, 1, 5, tzinfo=UTC)
    for turns, _ in dialogues:
        for start in range(0, len(turns), window):
            events = [WindowEvent(event_id=f"t{i}", role="user", content=text, occurred_at=at, speaker=speaker)
                      for i, (speaker, text) in enumerate(turns[start:start + window])]
            counts["sent_to_model" if needs_model(events) else "read_by_engine"] += 1
    total = counts["sent_to_model"] + counts["read_by_engine"]
    return {"windows": total, "read_by_engine": counts["read_by_engine"], "sent_to_model": counts["sent_to_model"],
            "sent_share": round(counts["sent_to_model"] / total, 4) if total else 0.0, "window_turns": window}


def run(dataset: Path, out: Path | None = None, *, limit: int | None = None) -> dict[str, Any]:
    """Both systems on the dataset; writes `out/relations.json` when `out` is given."""
    dialogues = load(dataset)[:limit]
    document = {
        "dataset": str(dataset), "dialogues": len(dialogues), "turns": sum(len(t) for t, _ in dialogues),
        "mapped_kinds": sorted(mapped_kinds()),
        "systems": {"engram": score(dialogues, engram_reader), "regex": score(dialogues, regex_reader)},
        "engine_first": windows_sent(dialogues),
        "note": "read through the offline model's extract (the model port), not the whole pipeline: see "
                "engram.bench.relations",
    }
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "relations.json").write_text(json.dumps(document, indent=2))
    return document


def table(document: dict[str, Any]) -> str:
    """The systems side by side, overall and by kind."""
    systems = document["systems"]
    names = list(systems)
    lines = [f"{'relation':<30}" + "".join(f"{n + ' P/R/F1 (pred, gold)':>36}" for n in names)]

    def row(label: str, scores: list[dict[str, Any]]) -> str:
        return f"{label:<30}" + "".join(
            f"{s['precision']:>8.2f}{s['recall']:>6.2f}{s['f1']:>6.2f} ({s['predicted']:>4}, {s['gold']:>4})    "
            for s in scores)

    lines.append(row("all mapped", [systems[n] for n in names]))
    kinds = sorted({k for n in names for k in systems[n]["by_relation"]})
    empty = {"precision": 0.0, "recall": 0.0, "f1": 0.0, "predicted": 0, "gold": 0}
    lines += [row(k, [systems[n]["by_relation"].get(k, empty) for n in names]) for k in kinds]
    ef = document.get("engine_first")
    if ef:
        lines.append(f"engine first: {ef['read_by_engine']} of {ef['windows']} windows read by the engine, "
                     f"{ef['sent_to_model']} ({ef['sent_share']:.0%}) would go to a configured model")
    return "\n".join(lines)

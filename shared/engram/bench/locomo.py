"""LoCoMo (Maharana et al., ACL 2024) read as engram sees a conversation: one world per sample, every
turn an event, and the questions of categories 1 to 4 with their evidence turns."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engram.model.events import IngestRequest
from engram.ports.clients import Clients

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
QA_CATEGORIES = {**CATEGORIES, 5: "adversarial"}  # category 5 asks what was never said: its answer is none
_SESSION = re.compile(r"^session_(\d+)$")
BATCH = 100  # events per ingest request (the API's maximum)
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*0*(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    session: str
    occurred_at: datetime

    @property
    def content(self) -> str:
        """The event's content: the turn, with the shared image's caption appended."""
        return self.text + (f" [image: {self.caption}]" if self.caption else "")


@dataclass(frozen=True)
class Question:
    question: str
    category: str
    evidence: tuple[str, ...]
    answer: str = ""  # the gold answer (empty for an adversarial question)


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def session_time(text: str) -> datetime:
    """"1:56 pm on 8 May, 2023" as a UTC datetime."""
    return datetime.strptime(" ".join(text.replace(",", " ").split()), "%I:%M %p on %d %B %Y").replace(tzinfo=UTC)


def evidence_ids(raw: list[str], known: set[str]) -> tuple[str, ...]:
    """The evidence dia_ids that name a turn. Malformed entries ("D:11:26", "D30:05", several ids in one
    string) are read for what they plainly mean; ids that name no turn are dropped."""
    found: dict[str, None] = {}
    for entry in raw:
        for session, turn in _DIA_ID.findall(str(entry)):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id in known:
                found[dia_id] = None
    return tuple(found)


def load(path: Path, *, with_answers: bool = False) -> list[Conversation]:
    """Every sample of a LoCoMo file. Turns of a session share its date and time, one second apart in
    the order they were said, so the conversation's order survives in `occurred_at`. The questions are those
    of categories 1 to 4 with evidence; `with_answers`, every question of categories 1 to 5 with its answer."""
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv: dict[str, Any] = sample["conversation"]
        conversation = Conversation(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]))
        sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION.match(key))
                          and isinstance(conv[key], list))
        for _n, key in sessions:
            start = session_time(conv[f"{key}_date_time"])
            for i, turn in enumerate(conv[key]):
                conversation.turns.append(Turn(
                    dia_id=turn["dia_id"], speaker=turn["speaker"], text=turn["text"],
                    caption=turn.get("blip_caption") or None, session=key,
                    occurred_at=start + timedelta(seconds=i)))
        known = {t.dia_id for t in conversation.turns}
        for item in sample["qa"]:
            category = (QA_CATEGORIES if with_answers else CATEGORIES).get(int(item.get("category", 0)))
            evidence = evidence_ids(item.get("evidence") or [], known)
            if category is not None and (evidence or with_answers):
                conversation.questions.append(Question(item["question"], category, evidence,
                                                       str(item.get("answer", ""))))
        out.append(conversation)
    return out


def world_of(conversation: Conversation) -> str:
    return f"locomo-{conversation.sample_id}"


def ingest_conversation(clients: Clients, conv: Conversation, advance: Callable[[int], None] | None = None) -> None:
    """Every turn through the real pipeline, session by session (batches of at most 100), then one
    consolidation run as the schedule would start it. `advance(n)` hears of each batch's n turns."""
    from engram.enrichment.ingest import ingest_events

    world = world_of(conv)
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for turn in conv.turns:
        by_session[turn.session].append({
            "event_id": turn.dia_id, "user_id": turn.speaker, "conversation_id": turn.session, "role": "user",
            "content": turn.content, "occurred_at": turn.occurred_at.isoformat(),
            "metadata": {"speaker": turn.speaker},
        })
    for events in by_session.values():
        for start in range(0, len(events), BATCH):
            batch = events[start:start + BATCH]
            ingest_events(clients, clients.world(world), IngestRequest.model_validate({"events": batch}))
            if advance is not None:
                advance(len(batch))
    clients.workflows.start_consolidation(world)

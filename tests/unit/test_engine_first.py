"""Engine first: with a model configured, the engine reads the windows it can and the model only the others."""

from __future__ import annotations

from datetime import UTC, datetime

from engram.adapters.engine_first import EngineFirstLLM, engine_first
from engram.adapters.offline.llm import NAME as OFFLINE
from engram.adapters.offline.llm import OfflineLLM
from engram.model.context import QueryContext
from engram.model.queries import Answer
from engram.ports import WindowEvent
from tests.fakes.llm import NAME as SCRIPTED
from tests.fakes.llm import ScriptedLLM

T0 = datetime(2026, 10, 5, tzinfo=UTC)


def window(*texts: str) -> list[WindowEvent]:
    return [WindowEvent(event_id=f"e{i}", role="user", content=t, occurred_at=T0, speaker="dana")
            for i, t in enumerate(texts)]


def test_a_window_the_engine_reads_never_reaches_the_model() -> None:
    model = ScriptedLLM()
    llm = EngineFirstLLM(model)
    reply = llm.extract(window("I live in Lisbon.", "Thanks, that helps!", "Kalani works at Bluefin."), [])
    assert model.calls_to("extract") == []
    assert reply.model == OFFLINE
    assert {(t.subject, t.predicate, t.object) for t in reply.value.triples} == {
        ("dana", "lives_in", "Lisbon"), ("Kalani", "works_at", "Bluefin")}
    assert (llm.windows_engine, llm.windows_model, llm.sent_share) == (1, 0, 0.0)


def test_a_window_with_a_clause_the_engine_cannot_read_goes_to_the_model_whole() -> None:
    model = ScriptedLLM()
    llm = EngineFirstLLM(model)
    llm.extract(window("I live in Lisbon."), [])
    llm.extract(window("Hi!", "Kalani Brandt took the kids to Galway."), ["dana"])
    [call] = model.calls_to("extract")
    assert call.args["event_ids"] == ["e0", "e1"] and call.args["known_entities"] == ["dana"]
    assert (llm.windows_engine, llm.windows_model, llm.sent_share) == (1, 1, 0.5)


def test_every_other_call_goes_to_the_model() -> None:
    said = Answer(content="Lisbon.", confidence=0.8)
    model = ScriptedLLM([said])
    llm = EngineFirstLLM(model)
    reply = llm.answer(QueryContext(query_id="q1", world_id="w", question="Where do I live?"), can_request_more=False,
                       remaining_info_requests=0, temperature=0.0)
    llm.summarize("user:dana", ["Dana lives in Lisbon."])
    assert reply.value == said and llm.name == SCRIPTED
    assert [c.method for c in model.calls] == ["answer", "summarize"]


def test_the_offline_model_is_the_engine_itself() -> None:
    offline = OfflineLLM()
    assert engine_first(offline) is offline
    assert isinstance(engine_first(ScriptedLLM()), EngineFirstLLM)

"""The language engine is the installed spaCy pipeline, loaded once per process, reading entity types."""

from engram.adapters.spacy_engine import pipeline, shared_engine
from engram.app.factory import build_language
from engram.config import Settings


def test_the_engine_names_people_companies_places_and_dates() -> None:
    [spans] = shared_engine().entities(["Dana Whitfield works at Acme Corp in Bristol since last Friday."])
    assert [(s.text, s.label) for s in spans] == [
        ("Dana Whitfield", "PERSON"), ("Acme Corp", "ORG"), ("Bristol", "GPE"), ("last Friday", "DATE")]
    text = "Dana Whitfield works at Acme Corp in Bristol since last Friday."
    assert all(text[s.start:s.end] == s.text for s in spans)


def test_one_pipeline_per_process_and_parses_are_kept() -> None:
    engine = build_language(Settings())
    assert engine is shared_engine() and pipeline() is pipeline()
    first = shared_engine().doc("Kalani Brandt lives in Cork.")
    assert shared_engine().doc("Kalani Brandt lives in Cork.") is first
    assert engine.name.startswith("spacy-3.8") and "core_web_sm" in engine.name


def test_common_words_the_small_pipeline_misreads_as_someone_are_no_named_entity() -> None:
    tons, kalani = shared_engine().entities(["Tons of fun.", "Kalani works at Bluefin Analytics."])
    assert tons == []
    assert [(s.text, s.label) for s in kalani] == [("Kalani", "PERSON"), ("Bluefin Analytics", "ORG")]

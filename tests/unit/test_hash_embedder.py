"""The hash embedder the unit and domain tests embed with: deterministic, unit length, no I/O."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.adapters.embedders import HashEmbedder


def test_the_same_text_always_embeds_the_same() -> None:
    assert HashEmbedder().embed(["Dana lives in Lisbon"]) == HashEmbedder().embed(["Dana lives in Lisbon"])


def test_vectors_have_the_configured_dimension() -> None:
    assert [len(v) for v in HashEmbedder(64).embed(["a b c", "d"])] == [64, 64]
    assert HashEmbedder().dim == 384 and len(HashEmbedder().embed(["x"])[0]) == 384


@given(st.lists(st.text(max_size=80), max_size=5), st.sampled_from([8, 64, 384]))
def test_every_vector_is_unit_length_even_for_empty_text(texts: list[str], dim: int) -> None:
    for vector in HashEmbedder(dim).embed(texts):
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_texts_sharing_words_are_closer_than_texts_that_do_not() -> None:
    lisbon, lives, market = HashEmbedder().embed(["Dana lives in Lisbon", "Dana lives in Porto",
                                                  "stock market prices fell"])
    assert np.dot(lisbon, lives) > np.dot(lisbon, market)


def test_case_and_punctuation_do_not_change_the_vector() -> None:
    a, b = HashEmbedder().embed(["Dana lives in Lisbon!", "dana LIVES in lisbon"])
    assert a == b


def test_order_is_kept_and_nothing_embeds_to_nothing() -> None:
    embedder = HashEmbedder()
    texts = ["one", "two words", "three little words"]
    assert embedder.embed(texts) == [embedder.embed([t])[0] for t in texts]
    assert embedder.embed([]) == []

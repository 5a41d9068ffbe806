"""The real embedders: all-MiniLM-L6-v2 from its wheel on numpy (no torch, no network), and Titan
Text Embeddings v2 through a botocore-stubbed Bedrock Runtime client."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import socket
from collections.abc import Iterator
from typing import Any

import boto3
import numpy as np
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from engram.adapters.embedders import MiniLMEmbedder, TitanEmbedder, build_embedder
from engram.config import Settings
from engram.errors import ConfigurationError, LLMUnavailable

pytestmark = pytest.mark.integration


def _cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))  # the vectors are unit length


# ---------------------------------------------------------------- all-MiniLM-L6-v2
@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    """The model loaded afresh from the installed wheel with every socket refused: no hub, no network."""

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise OSError("network access during model load")

    MiniLMEmbedder._model = None  # the process-wide cache: load again, here, under the refusal
    embedder = MiniLMEmbedder()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket.socket, "connect_ex", refuse)
        embedder.embed(["warm up"])
    yield embedder


def test_torch_and_sentence_transformers_are_not_installed() -> None:
    assert importlib.util.find_spec("torch") is None
    assert importlib.util.find_spec("sentence_transformers") is None
    with pytest.raises(ImportError):
        import torch  # noqa: F401
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_minilm_makes_384_dimensional_unit_vectors(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed(["Dana lives in Lisbon.", "", "a" * 5_000])

    assert [len(v) for v in vectors] == [384, 384, 384]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.dim == 384


def test_minilm_reproduces_the_published_sentence_transformers_similarities(minilm: MiniLMEmbedder) -> None:
    # The matrix sbert.net shows for all-MiniLM-L6-v2 in its "Computing Embeddings" quickstart.
    weather, sunny, stadium = minilm.embed(["The weather is lovely today.", "It's so sunny outside!",
                                            "He drove to the stadium."])

    assert _cosine(weather, sunny) == pytest.approx(0.6660, abs=1e-3)
    assert _cosine(weather, stadium) == pytest.approx(0.1046, abs=1e-3)
    assert _cosine(sunny, stadium) == pytest.approx(0.1411, abs=1e-3)


def test_paraphrases_are_closer_than_unrelated_sentences(minilm: MiniLMEmbedder) -> None:
    moved, lives, market = minilm.embed(["I moved to Lisbon last year.", "My home is in Lisbon now.",
                                         "The stock market fell sharply on Tuesday."])

    assert _cosine(moved, lives) > _cosine(moved, market) + 0.2


def test_a_batch_keeps_the_order_of_its_texts(minilm: MiniLMEmbedder) -> None:
    # Longer than one batch, lengths out of order: the embedder sorts by length internally.
    texts = [f"note {i}: " + "hiking " * (i % 7) for i in range(MiniLMEmbedder.batch_size + 5)]
    texts.reverse()

    batch = minilm.embed(texts)

    for i in (0, len(texts) // 2, len(texts) - 1):
        (alone,) = minilm.embed([texts[i]])
        assert np.allclose(batch[i], alone, atol=1e-4), i


def test_an_empty_list_embeds_to_an_empty_list(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed([]) == []


def test_build_embedder_refuses_a_dimension_minilm_cannot_make() -> None:
    with pytest.raises(ConfigurationError, match="384"):
        build_embedder(Settings(embedder="minilm", embedding_dim=1024))


# ---------------------------------------------------------------- Titan Text Embeddings v2
TITAN = "amazon.titan-embed-text-v2:0"


class JsonBody:
    """Matches a JSON request body by its value, whatever the key order or spacing."""

    def __init__(self, expected: dict[str, Any]) -> None:
        self.expected = expected

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str | bytes) and json.loads(other) == self.expected

    def __repr__(self) -> str:
        return f"JsonBody({self.expected!r})"


def _titan_reply(vector: list[float], tokens: int) -> dict[str, Any]:
    raw = json.dumps({"embedding": vector, "inputTextTokenCount": tokens}).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def _request(text: str, dim: int = 256) -> dict[str, Any]:
    return {"modelId": TITAN, "body": JsonBody({"inputText": text, "dimensions": dim, "normalize": True}),
            "contentType": "application/json", "accept": "application/json"}


@pytest.fixture
def bedrock_runtime() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
                        aws_secret_access_key="secret", config=Config(retries={"total_max_attempts": 1}))


def test_titan_sends_one_normalized_request_per_text_and_keeps_their_order(bedrock_runtime: Any) -> None:
    first, second = [0.6, 0.8] + [0.0] * 254, [0.0] * 255 + [1.0]
    with Stubber(bedrock_runtime) as stub:
        stub.add_response("invoke_model", _titan_reply(first, 5), _request("Dana lives in Lisbon."))
        stub.add_response("invoke_model", _titan_reply(second, 3), _request("She hikes."))

        vectors = TitanEmbedder(bedrock_runtime, TITAN, 256).embed(["Dana lives in Lisbon.", "She hikes."])

        stub.assert_no_pending_responses()
    assert vectors == [first, second]


def test_titan_sends_a_blank_for_empty_text_and_the_configured_dimension(bedrock_runtime: Any) -> None:
    vector = [1.0] + [0.0] * 1023
    with Stubber(bedrock_runtime) as stub:
        stub.add_response("invoke_model", _titan_reply(vector, 1), _request(" ", dim=1024))

        assert TitanEmbedder(bedrock_runtime, TITAN, 1024).embed([""]) == [vector]


def test_titan_embeds_nothing_without_a_call(bedrock_runtime: Any) -> None:
    with Stubber(bedrock_runtime):
        assert TitanEmbedder(bedrock_runtime, TITAN, 512).embed([]) == []


@pytest.mark.parametrize("code", ["ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException",
                                  "InternalServerException"])
def test_titan_failures_worth_retrying_are_unavailable(bedrock_runtime: Any, code: str) -> None:
    with Stubber(bedrock_runtime) as stub:
        stub.add_client_error("invoke_model", service_error_code=code, http_status_code=429)

        with pytest.raises(LLMUnavailable, match=code):
            TitanEmbedder(bedrock_runtime, TITAN, 256).embed(["x"])


@pytest.mark.parametrize("code", ["AccessDeniedException", "ValidationException", "ResourceNotFoundException"])
def test_titan_refusals_are_configuration_errors(bedrock_runtime: Any, code: str) -> None:
    with Stubber(bedrock_runtime) as stub:
        stub.add_client_error("invoke_model", service_error_code=code, http_status_code=400)

        with pytest.raises(ConfigurationError, match=code):
            TitanEmbedder(bedrock_runtime, TITAN, 256).embed(["x"])


def test_an_unreachable_titan_endpoint_is_unavailable(bedrock_runtime: Any) -> None:
    def refuse(**_kwargs: Any) -> None:
        raise EndpointConnectionError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")

    bedrock_runtime.meta.events.register("before-send.bedrock-runtime.InvokeModel", refuse)

    with pytest.raises(LLMUnavailable, match="unreachable"):
        TitanEmbedder(bedrock_runtime, TITAN, 256).embed(["x"])


def test_titan_refuses_a_dimension_it_cannot_make(bedrock_runtime: Any) -> None:
    with pytest.raises(ConfigurationError, match="256, 512 or 1024"):
        TitanEmbedder(bedrock_runtime, TITAN, 384)

"""The LLM port over the `openai` SDK's Chat Completions: OpenAI, Azure OpenAI, OpenRouter, vLLM, Ollama, LM Studio
and llama.cpp's server, anything that speaks the protocol at `ENGRAM_OPENAI_BASE_URL`.

Every request carries its tool's JSON schema as `response_format: json_schema` (strict): the one structured-output
form all of those servers enforce (llama.cpp and vLLM by grammar). Where a task offers two tools (answer or ask for
more), the schema is an object naming the tool and holding its input. The reply is validated and retried once by
`engram.adapters.structured`; SDK errors become engram errors here, once.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal, Union

import openai
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, create_model

from engram.adapters.structured import TOOLS, Attempt, StructuredLLM, without
from engram.config import Settings
from engram.errors import ConfigurationError, InvalidInput, LLMUnavailable
from engram.ports import LLM, Usage


@cache
def response_schema(tools: tuple[str, ...]) -> dict[str, Any]:
    """The `json_schema` response format of a request offering `tools`: the tool's input schema, or for a choice of
    tools `{"tool": <name>, "input": <that tool's input>}`. Strict: every property required, none other allowed."""
    if len(tools) == 1:
        model: type[BaseModel] = TOOLS[tools[0]][0]
        name, description = tools[0], TOOLS[tools[0]][1]
    else:
        inputs: Any = Union[tuple(TOOLS[t][0] for t in tools)]  # noqa: UP007 (a union built from a tuple)
        fields: dict[str, Any] = {"tool": (Literal[tools], ...), "input": (inputs, ...)}
        model = create_model("reply", **fields)
        name, description = "reply", " Or: ".join(f"{t}: {TOOLS[t][1]}" for t in tools)
    return {"name": name, "description": description, "schema": without(to_strict_json_schema(model), _UNSUPPORTED),
            "strict": True}


# Keywords strict mode refuses (OpenAI answers 400); pydantic still checks them on the reply, and retries.
_UNSUPPORTED = frozenset({"default", "minLength", "maxLength", "title"})  # a title is read by no model


class OpenAICompatibleLLM(StructuredLLM):
    """The port over `/chat/completions`: the system prompt first (the stable prefix servers cache), then the task."""

    def __init__(self, client: openai.OpenAI, *, model: str, fast_model: str, max_tokens: int = 2048) -> None:
        super().__init__(model=model, fast_model=fast_model)
        self.client = client
        self.max_tokens = max_tokens

    def _send(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
              forced: str | None, temperature: float) -> Attempt:
        offered = (forced,) if forced else tuple(tools)
        system_text = system if isinstance(system, str) else "\n\n".join(system)
        response = self._create(model=model, messages=[{"role": "system", "content": system_text}, *messages],
                                response_format={"type": "json_schema", "json_schema": response_schema(offered)},
                                temperature=temperature)
        usage = _usage(response.usage)
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice else ""
        if choice is None or choice.message.refusal:
            return Attempt(None, None, usage, text, f"no reply ({choice.message.refusal if choice else 'no choice'})")
        try:
            payload = json.loads(text)
        except json.JSONDecodeError:
            return Attempt(None, None, usage, text, f"the reply is not JSON (finish_reason {choice.finish_reason})")
        if len(offered) == 1:
            return Attempt(offered[0], payload, usage, text)
        if not isinstance(payload, dict) or payload.get("tool") not in offered:
            return Attempt(None, None, usage, text, f"the reply names no tool among {list(offered)}")
        return Attempt(payload["tool"], payload.get("input"), usage, text)

    def _corrected(self, messages: list[dict[str, Any]], attempt: Attempt, correction: str) -> list[dict[str, Any]]:
        if attempt.tool is None:
            correction = f"Your reply does not follow the JSON schema ({attempt.problem}). {correction}"
        return [*messages, {"role": "assistant", "content": str(attempt.raw)},
                {"role": "user", "content": correction + " Reply with one JSON object following the schema."}]

    def _create(self, **request: Any) -> Any:
        try:
            return self.client.chat.completions.create(model=request.pop("model"), max_tokens=self.max_tokens,
                                                       **request)
        except openai.RateLimitError as exc:
            raise LLMUnavailable("the model provider is rate limiting", details=_error_details(exc)) from exc
        except openai.APITimeoutError as exc:
            raise LLMUnavailable("the model provider timed out") from exc
        except openai.APIConnectionError as exc:
            raise LLMUnavailable("the model provider is unreachable") from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as exc:
            raise ConfigurationError(f"the model provider refused the credentials or model: {exc.message}",
                                     details=_error_details(exc)) from exc
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            raise InvalidInput(f"the model provider rejected the request: {exc.message}",
                               details=_error_details(exc)) from exc
        except openai.APIStatusError as exc:  # 500, 503 and other server errors
            raise LLMUnavailable(f"the model provider failed ({exc.status_code})", details=_error_details(exc)) from exc


def _usage(usage: Any) -> Usage:
    """Tokens of one call as the server counts them: `input_tokens` are the ones outside its prompt cache."""
    if usage is None:
        return Usage(calls=1)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    return Usage(max(usage.prompt_tokens - cached, 0), usage.completion_tokens or 0, 1, cached)


def _error_details(exc: openai.APIStatusError) -> dict[str, Any]:
    return {"status": exc.status_code, "retry_after": exc.response.headers.get("retry-after")}


def build_llm(settings: Settings, model: str | None = None) -> LLM:
    """`ENGRAM_OPENAI_MODEL` (or `model`, a stage's own) at `ENGRAM_OPENAI_BASE_URL`."""
    # The SDK needs a key even for a local server that checks none.
    client = openai.OpenAI(base_url=settings.openai_base_url, api_key=settings.openai_api_key or "unused",
                           max_retries=settings.llm_max_retries, timeout=settings.llm_timeout_s)
    name = model or settings.openai_model
    return OpenAICompatibleLLM(client, model=name, fast_model=name, max_tokens=settings.openai_max_tokens)

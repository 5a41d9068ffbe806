"""The LLM port over the `anthropic` SDK: the Anthropic API or Anthropic on Bedrock.

Structured output is forced tool use: each task offers tools whose input schema is a pydantic
model's JSON schema (`engram.adapters.structured` validates the reply and retries invalid output once).
SDK errors become engram errors here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic

from engram.adapters.structured import (
    TOOLS,
    AnswerTool,
    Attempt,
    RequestInfoTool,
    StructuredLLM,
    SynthesisTool,
    tool_schema,
)
from engram.config import Settings
from engram.errors import ConfigurationError, InvalidInput, LLMUnavailable
from engram.ports import LLM, Usage

__all__ = ["AnswerTool", "AnthropicLLM", "RequestInfoTool", "SynthesisTool", "build_llm"]  # the tools, re-exported


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": TOOLS[name][1], "input_schema": tool_schema(name)}


class AnthropicLLM(StructuredLLM):
    """The port over the Messages API: each task a forced tool, the system prompt the cached prefix."""

    def __init__(self, client: anthropic.Anthropic | anthropic.AnthropicBedrock, *, model: str, fast_model: str,
                 max_tokens: int = 2048) -> None:
        super().__init__(model=model, fast_model=fast_model)
        self.client = client
        self.max_tokens = max_tokens

    def _send(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
              forced: str | None, temperature: float) -> Attempt:
        response = self._create(model=model, system=system, messages=messages, tools=tools, forced=forced,
                                temperature=temperature)
        usage = _usage(response.usage)
        block = next((b for b in response.content if b.type == "tool_use" and b.name in tools), None)
        if block is None:
            return Attempt(None, None, usage, response,
                           f"no tool call among {tools} (stop_reason {response.stop_reason})")
        return Attempt(block.name, block.input, usage, (response, block))

    def _corrected(self, messages: list[dict[str, Any]], attempt: Attempt, correction: str) -> list[dict[str, Any]]:
        if attempt.tool is None:
            return [*messages, {"role": "assistant", "content": _replayed(attempt.raw.content)},
                    {"role": "user", "content": correction}]
        response, block = attempt.raw
        return [*messages, {"role": "assistant", "content": _replayed(response.content)},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                                              "content": correction}]}]

    def request(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
                forced: str | None) -> dict[str, Any]:
        """The Messages API request body: tools, then system (the cached prefix, marked at its end), then messages."""
        choice = {"type": "tool", "name": forced} if forced else {"type": "any"}
        texts = [system] if isinstance(system, str) else system
        blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        blocks[-1]["cache_control"] = {"type": "ephemeral"}  # the prefix ends after the last system block
        return {"model": model, "max_tokens": self.max_tokens, "messages": messages, "tool_choice": choice,
                "system": blocks, "tools": [_tool(t) for t in tools]}

    def _create(self, *, model: str, system: str | list[str], messages: list[dict[str, Any]], tools: list[str],
                forced: str | None, temperature: float) -> Any:
        # `temperature` is accepted for the port's sake; this SDK's Messages API no longer takes it.
        try:
            return self.client.messages.create(**self.request(model=model, system=system, messages=messages,
                                                              tools=tools, forced=forced))
        except anthropic.RateLimitError as exc:
            raise LLMUnavailable("the model provider is rate limiting", details=_error_details(exc)) from exc
        except anthropic.APITimeoutError as exc:
            raise LLMUnavailable("the model provider timed out") from exc
        except anthropic.APIConnectionError as exc:
            raise LLMUnavailable("the model provider is unreachable") from exc
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError, anthropic.NotFoundError) as exc:
            raise ConfigurationError(f"the model provider refused the credentials or model: {exc.message}",
                                     details=_error_details(exc)) from exc
        except anthropic.BadRequestError as exc:
            raise InvalidInput(f"the model provider rejected the request: {exc.message}",
                               details=_error_details(exc)) from exc
        except anthropic.APIStatusError as exc:  # 500, 529 overloaded and other server errors
            raise LLMUnavailable(f"the model provider failed ({exc.status_code})", details=_error_details(exc)) from exc


def _usage(usage: Any) -> Usage:
    """Tokens of one call as the provider counts them: `input_tokens` are the uncached ones."""
    return Usage(usage.input_tokens, usage.output_tokens, 1, getattr(usage, "cache_read_input_tokens", None) or 0,
                 getattr(usage, "cache_creation_input_tokens", None) or 0)


def _replayed(content: Sequence[Any]) -> list[dict[str, Any]]:
    """The assistant's reply as the next request's history (text and tool_use blocks)."""
    return [b.model_dump(include={"type", "text"}) if b.type == "text"
            else b.model_dump(include={"type", "id", "name", "input"}) for b in content if b.type in ("text", "tool_use")]


def _error_details(exc: anthropic.APIStatusError) -> dict[str, Any]:
    return {"status": exc.status_code, "retry_after": exc.response.headers.get("retry-after")}


def build_llm(settings: Settings, model: str | None = None) -> LLM:
    """The model named by `ENGRAM_LLM` (default: anthropic with a key, else offline); `model`, a stage's own, replaces
    both the answering and the fast model."""
    kind = settings.resolved_llm()
    if kind == "offline":
        from engram.adapters.offline.llm import OfflineLLM

        return OfflineLLM()
    if kind == "anthropic":
        if not settings.anthropic_api_key:
            raise ConfigurationError("ENGRAM_LLM=anthropic needs ANTHROPIC_API_KEY")
        client: anthropic.Anthropic | anthropic.AnthropicBedrock = anthropic.Anthropic(
            api_key=settings.anthropic_api_key, base_url=settings.anthropic_base_url,
            max_retries=settings.llm_max_retries, timeout=settings.llm_timeout_s)
        return AnthropicLLM(client, model=model or settings.anthropic_model,
                            fast_model=model or settings.anthropic_fast_model)
    if kind != "bedrock":
        raise ConfigurationError(f"the anthropic adapter does not build ENGRAM_LLM={kind}")
    client = anthropic.AnthropicBedrock(aws_region=settings.bedrock_region, max_retries=settings.llm_max_retries,
                                        timeout=settings.llm_timeout_s)
    return AnthropicLLM(client, model=model or settings.bedrock_model, fast_model=model or settings.bedrock_fast_model)

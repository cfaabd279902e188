"""Fixtures for provider tests: a real local wire server and providers pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from wire_server import WireServer

from footprint_lab.providers import anthropic, ollama, openai
from footprint_lab.providers._base import HttpProvider
from footprint_lab.providers.types import LLMRequest

#: A key that must never show up in an error, a repr or a recording.
SECRET = "sk-test-SECRET-0123456789abcdef"
FACTORIES: dict[str, Callable[..., HttpProvider]] = {"openai": openai, "anthropic": anthropic, "ollama": ollama}
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5", "ollama": "llama3.2"}
#: Per wire: the fixture files of each scenario (written from the providers' API references).
FIXTURES = {
    "openai": {"reply": "openai_reply.json", "tools": "openai_tool_call.json",
               "stream_text": "openai_stream_text.sse", "stream_tools": "openai_stream_tools.sse"},
    "anthropic": {"reply": "anthropic_reply.json", "tools": "anthropic_tool_use.json",
                  "stream_text": "anthropic_stream_text.sse", "stream_tools": "anthropic_stream_tools.sse"},
    "ollama": {"reply": "ollama_reply.json", "tools": "ollama_tool_call.json",
               "stream_text": "ollama_stream_text.ndjson", "stream_tools": "ollama_stream_tools.ndjson"},
}
ADD_TOOL = {"name": "add", "description": "Add two integers.",
            "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]}}


def make_request(message: str = "What is the capital of France?", **overrides: Any) -> LLMRequest:
    fields: dict[str, Any] = {"model": "", "system": "Answer briefly.",
                              "messages": [{"role": "user", "content": message}], "tools": []}
    fields.update(overrides)
    return LLMRequest(**fields)


@pytest.fixture
def server() -> Iterator[WireServer]:
    wire = WireServer()
    yield wire
    wire.close()


@pytest.fixture
async def build(server: WireServer) -> AsyncIterator[Callable[..., HttpProvider]]:
    """``build("openai", stream=False, ...)``: a provider aimed at the local server, closed after the test."""
    made: list[HttpProvider] = []

    def factory(kind: str, **settings: Any) -> HttpProvider:
        settings.setdefault("base_url", server.url)
        settings.setdefault("retry_backoff", 0.01)
        settings.setdefault("timeout", 5.0)
        settings.setdefault("connect_timeout", 2.0)
        if kind != "ollama":
            settings.setdefault("api_key", SECRET)
        provider = FACTORIES[kind](MODELS[kind], **settings)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        await provider.aclose()

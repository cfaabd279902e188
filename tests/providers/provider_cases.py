"""What the provider tests share: the secret that must never leak, models, fixtures, a request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from footprint_lab.providers import HttpProvider, anthropic, ollama, openai
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

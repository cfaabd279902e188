"""Providers: the embedded ``mock`` and the real wires.

Only the provider line of an agent changes between them; everything recorded stays the same.
``openai``, ``anthropic``, ``ollama`` and ``provider_from_string`` (and the provider error
classes) load httpx on first use, so importing this package stays light; ``replay_provider``
(answers from a recording, no key, no network) loads pydantic on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from footprint_lab.providers.mock import MockProvider, MockScriptError, mock
from footprint_lab.providers.types import LLMRequest, LLMResponse, MessagesView, Provider, ToolCall, Usage

_LAZY = {
    "openai": "footprint_lab.providers._openai",
    "OpenAIProvider": "footprint_lab.providers._openai",
    "anthropic": "footprint_lab.providers._anthropic",
    "AnthropicProvider": "footprint_lab.providers._anthropic",
    "ollama": "footprint_lab.providers._ollama",
    "OllamaProvider": "footprint_lab.providers._ollama",
    "provider_from_string": "footprint_lab.providers._from_string",
    "HttpProvider": "footprint_lab.providers._base",
    "replay_provider": "footprint_lab.providers.replay",
    "ReplayProvider": "footprint_lab.providers.replay",
}

if TYPE_CHECKING:
    from footprint_lab.providers._anthropic import AnthropicProvider, anthropic
    from footprint_lab.providers._base import HttpProvider
    from footprint_lab.providers._from_string import provider_from_string
    from footprint_lab.providers._ollama import OllamaProvider, ollama
    from footprint_lab.providers._openai import OpenAIProvider, openai
    from footprint_lab.providers.replay import ReplayProvider, replay_provider


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'footprint_lab.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "AnthropicProvider", "HttpProvider", "LLMRequest", "LLMResponse", "MessagesView", "MockProvider",
    "MockScriptError", "OllamaProvider", "OpenAIProvider", "Provider", "ReplayProvider", "ToolCall", "Usage",
    "anthropic", "mock", "ollama", "openai", "provider_from_string", "replay_provider",
]

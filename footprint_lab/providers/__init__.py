"""Providers: the embedded ``mock`` and the real wires.

Only the provider line of an agent changes between them; everything recorded stays the same.
``openai``, ``anthropic``, ``ollama`` and ``provider_from_string`` (and the provider error
classes) load httpx on first use, so importing this package stays light; ``replay_provider``
(answers from a recording, no key, no network) loads pydantic on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.engine._exports import public

if TYPE_CHECKING:
    from footprint_lab.providers._anthropic import AnthropicProvider, anthropic
    from footprint_lab.providers._base import HttpProvider
    from footprint_lab.providers._from_string import provider_from_string
    from footprint_lab.providers._mock import MockProvider, MockScriptError, mock
    from footprint_lab.providers._ollama import OllamaProvider, ollama
    from footprint_lab.providers._openai import OpenAIProvider, openai
    from footprint_lab.providers._replay import ReplayProvider, replay_provider
    from footprint_lab.providers.types import LLMRequest, LLMResponse, MessagesView, Provider, ToolCall, Usage

__all__, __getattr__, __dir__ = public(__name__)


"""Providers: the embedded ``mock`` and the real wires.

Only the provider line of an agent changes between them; everything recorded stays the same.
``openai``, ``anthropic``, ``ollama`` and ``provider_from_string`` (and the provider error
classes) load httpx on first use, so importing this package stays light; ``replay_provider``
(answers from a recording, no key, no network) loads pydantic on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.providers._anthropic import AnthropicProvider as AnthropicProvider
    from footprint_lab.providers._anthropic import anthropic as anthropic
    from footprint_lab.providers._base import HttpProvider as HttpProvider
    from footprint_lab.providers._from_string import provider_from_string as provider_from_string
    from footprint_lab.providers._ollama import OllamaProvider as OllamaProvider
    from footprint_lab.providers._ollama import ollama as ollama
    from footprint_lab.providers._openai import OpenAIProvider as OpenAIProvider
    from footprint_lab.providers._openai import openai as openai
    from footprint_lab.providers.mock_provider import MockProvider as MockProvider
    from footprint_lab.providers.mock_provider import MockScriptError as MockScriptError
    from footprint_lab.providers.mock_provider import mock as mock
    from footprint_lab.providers.replay import ReplayProvider as ReplayProvider
    from footprint_lab.providers.replay import replay_provider as replay_provider
    from footprint_lab.providers.types import LLMRequest as LLMRequest
    from footprint_lab.providers.types import LLMResponse as LLMResponse
    from footprint_lab.providers.types import MessagesView as MessagesView
    from footprint_lab.providers.types import Provider as Provider
    from footprint_lab.providers.types import ToolCall as ToolCall
    from footprint_lab.providers.types import Usage as Usage

__all__ = [
    "AnthropicProvider", "HttpProvider", "LLMRequest", "LLMResponse", "MessagesView", "MockProvider",
    "MockScriptError", "OllamaProvider", "OpenAIProvider", "Provider", "ReplayProvider", "ToolCall", "Usage",
    "anthropic", "mock", "ollama", "openai", "provider_from_string", "replay_provider",
]
__getattr__, __dir__ = public(__name__)


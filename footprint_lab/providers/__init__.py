"""Providers: the embedded ``mock`` and the real wires.

Only the provider line of an agent changes between them; everything recorded stays the same.
"""

from footprint_lab.providers.mock import MockProvider, MockScriptError, mock
from footprint_lab.providers.types import LLMRequest, LLMResponse, Provider, ToolCall, Usage

__all__ = ["LLMRequest", "LLMResponse", "MockProvider", "MockScriptError", "Provider", "ToolCall", "Usage", "mock"]

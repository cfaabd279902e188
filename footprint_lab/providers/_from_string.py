"""``provider_from_string("openai:gpt-4o-mini")``: a provider named in one string.

The part before the first colon names the wire (``openai``, ``anthropic``, ``ollama``); the
rest is the model, colons included (``ollama:llama3.2:3b`` is model ``llama3.2:3b``).
Settings such as ``base_url`` are passed as keywords, exactly as to the provider itself.
"""

from __future__ import annotations

from typing import Unpack

from footprint_lab.base.refusal import describe_shape, did_you_mean
from footprint_lab.providers._anthropic import anthropic
from footprint_lab.providers._base import HttpProvider, Settings
from footprint_lab.providers._ollama import ollama
from footprint_lab.providers._openai import openai
from footprint_lab.providers.errors import ProviderConfigError

FACTORIES = {"openai": openai, "anthropic": anthropic, "ollama": ollama}
_FORM = "must look like 'provider:model', e.g. 'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5' or 'ollama:llama3.2'"


def provider_from_string(spec: str, **settings: Unpack[Settings]) -> HttpProvider:
    """Build the provider ``spec`` names; ``settings`` go to it unchanged."""
    if not isinstance(spec, str):
        raise ProviderConfigError("provider_from_string", "spec", describe_shape(spec), _FORM)
    name, colon, model = spec.partition(":")
    factory = FACTORIES.get(name.strip().lower())
    if factory is None:
        known = ", ".join(FACTORIES)
        near = did_you_mean([name.strip().lower()], FACTORIES) if colon else ""
        received = "no provider name" if not colon else "a provider name that is not one of: " + known
        raise ProviderConfigError("provider_from_string", "spec", received, f"{_FORM}{'; ' + near if near else ''}")
    if not model.strip():
        raise ProviderConfigError("provider_from_string", "spec", f"'{name}:' with no model", _FORM)
    return factory(model.strip(), **settings)

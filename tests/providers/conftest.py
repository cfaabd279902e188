"""Fixtures for provider tests: a real local wire server and providers pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from provider_cases import FACTORIES, MODELS, SECRET
from wire_server import WireServer

from footprint_lab.providers import HttpProvider


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

"""``seeded(provider, seed)``: the same provider, with a seed on every request that has none.

Reruns of an explanation are seeded (``0, 1, 2...``) so that each rerun without a suspect is
paired with a baseline rerun made with the same seed; a wire that supports seeds passes it
on, the mock ignores it. Everything else is the wrapped provider's own.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.providers.types import LLMRequest, LLMResponse, TokenCallback


class SeededProvider:
    """A provider that stamps ``seed`` on each request without one, then delegates."""

    __slots__ = ("provider", "seed")

    def __init__(self, provider: Any, seed: int) -> None:
        self.provider = provider
        self.seed = seed

    @property
    def name(self) -> str:
        return str(getattr(self.provider, "name", type(self.provider).__name__))

    async def complete(self, request: LLMRequest, on_token: TokenCallback | None = None) -> LLMResponse:
        if request.seed is None:
            request.seed = self.seed
        response: LLMResponse = await self.provider.complete(request, on_token)
        return response

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.provider, attribute)


def seeded(provider: Any, seed: int) -> SeededProvider:
    """``provider`` with ``seed`` on every request that carries none (a seeded provider is re-wrapped, not nested)."""
    inner = provider.provider if isinstance(provider, SeededProvider) else provider
    return SeededProvider(inner, seed)

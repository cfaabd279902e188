"""What a run cost in money: a price table by model name, which the user extends, and a run's cost from it.

Rule kept here: a cost is said only when every LLM call's model has a known price; a run with
one call to a model the table does not hold has no cost (``None``), never a guess from a
similar name. A model is looked up by the exact name the provider answered with (``gpt-4o-mini-
2024-07-18``), then by the name the agent asked for (``gpt-4o-mini``), never by a prefix: one
family's snapshots have had different prices.

Prices change, and differ by region, tier, batch and contract. The table below holds a handful
of public list prices (USD per million tokens, as OpenAI and Anthropic published them in 2025)
and the embedded mock's model at 0: check them against your provider's price page and your
invoice, and set your own with :func:`set_price` (a key of your gateway, a fine-tuned model, a
local model at 0).

A call's usage is as recorded: ``input_tokens`` counts every prompt token, cached ones included
(the providers here report it so); the cached tokens read or written are charged at the price's
``cache_read`` / ``cache_write`` when it has one, at its ``input`` price otherwise. A call whose
usage was estimated (no wire reported it) gives an estimated cost (:func:`estimated`).

Public names: :data:`PRICES` (a read-only view of the table), :class:`Price`, :func:`set_price`,
:func:`remove_price`, :func:`price_of`, :func:`cost`, :func:`unpriced_models`, :class:`PriceError`.

Role: providers layer; imports the engine's refusal helpers only (a recording is read as data).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import describe_shape, did_you_mean
from footprint_lab.providers.errors import ProviderConfigError
from footprint_lab.providers.types import Usage

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording

__all__ = ["PRICES", "Price", "PriceError", "cost", "cost_of", "estimated", "price_of", "priced",
           "remove_price", "set_price", "unpriced_models", "usage_by_model"]

#: the most a price may be, in USD per million tokens: a larger one is a unit mistake (per token, or in cents)
MOST = 10_000.0


class PriceError(ProviderConfigError, ValueError):
    """Raised when a price, or a model name to price, cannot be used: nothing in the table changed.

    Carries ``provider`` (the function called: ``set_price``, ``remove_price``, ``cost``...),
    ``setting`` (the argument at fault) and ``received`` (its shape, never its value); its code is
    ``ERR_PROVIDER_CONFIG``, and it is a ``ValueError`` too.
    """


@dataclass(frozen=True, slots=True)
class Price:
    """A model's price in USD per million tokens: prompt (``input``), reply (``output``), and optionally the
    cached prompt tokens read (``cache_read``) and written (``cache_write``); ``None`` charges them as input."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


def _list_prices() -> dict[str, Price]:
    openai = {"gpt-4o": (2.5, 10.0, 1.25), "gpt-4o-2024-08-06": (2.5, 10.0, 1.25),
              "gpt-4o-mini": (0.15, 0.6, 0.075), "gpt-4o-mini-2024-07-18": (0.15, 0.6, 0.075),
              "gpt-4.1": (2.0, 8.0, 0.5), "gpt-4.1-2025-04-14": (2.0, 8.0, 0.5),
              "gpt-4.1-mini": (0.4, 1.6, 0.1), "gpt-4.1-mini-2025-04-14": (0.4, 1.6, 0.1)}
    anthropic = {"claude-sonnet-4-5": (3.0, 15.0, 0.3, 3.75), "claude-sonnet-4-5-20250929": (3.0, 15.0, 0.3, 3.75),
                 "claude-haiku-4-5": (1.0, 5.0, 0.1, 1.25), "claude-haiku-4-5-20251001": (1.0, 5.0, 0.1, 1.25),
                 "claude-opus-4-1": (15.0, 75.0, 1.5, 18.75), "claude-opus-4-1-20250805": (15.0, 75.0, 1.5, 18.75)}
    table = {name: Price(*values) for name, values in {**openai, **anthropic}.items()}
    table["mock-model"] = Price(0.0, 0.0)  # the embedded mock's default model: no call leaves the process
    return table


_TABLE: dict[str, Price] = _list_prices()
#: the price table, by model name (read-only: change it with :func:`set_price` and :func:`remove_price`)
PRICES: Mapping[str, Price] = MappingProxyType(_TABLE)


def set_price(model: str, *, input: float, output: float, cache_read: float | None = None,
              cache_write: float | None = None) -> Price:
    """Price ``model`` (its exact name, as the provider answers or the agent asks for it) in USD per million
    tokens, replacing any price it had; returns the price. Every value is checked before the table changes."""
    name = _model_name("set_price", model)
    values = {"input": input, "output": output, "cache_read": cache_read, "cache_write": cache_write}
    for setting, value in values.items():
        if value is None and setting.startswith("cache_"):
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                or not 0 <= value <= MOST:
            raise PriceError("set_price", setting, describe_shape(value) if not isinstance(value, int | float)
                             or isinstance(value, bool) else "a number out of range",
                             f"must be USD per million tokens, a number from 0 to {MOST:,.0f} (e.g. input=2.5 "
                             "for $2.50 per million prompt tokens)")
    price = Price(float(input), float(output), None if cache_read is None else float(cache_read),
                  None if cache_write is None else float(cache_write))
    _TABLE[name] = price
    return price


def remove_price(model: str) -> Price:
    """Take ``model``'s price out of the table (its runs have no known cost again); returns the price removed."""
    name = _model_name("remove_price", model)
    if name not in _TABLE:
        near = did_you_mean([name], _TABLE)
        raise PriceError("remove_price", "model", "a name the table does not hold",
                         f"must be a model name in PRICES{f' ({near})' if near else ''}")
    return _TABLE.pop(name)


def price_of(model: str | None) -> Price | None:
    """``model``'s price, or ``None`` when the table holds no price under that exact name."""
    return _TABLE.get(model) if isinstance(model, str) else None


# -- a run's usage and its cost ---------------------------------------------------------------
#: a call's model: the name the provider answered with (``None`` when it said none), and the one asked for
ModelKey = tuple[str | None, str]


def usage_by_model(run: Any) -> dict[ModelKey, Usage]:
    """The tokens of every LLM call of a run (its member runs' included), summed by model."""
    recording = _recording("usage_by_model", run)
    found: dict[ModelKey, Usage] = {}
    stack = [recording]
    while stack:
        current = stack.pop()
        for exchange in current.exchanges:
            usage = exchange.response.usage
            summed = found.setdefault((exchange.response.model, exchange.model), Usage())
            summed.input_tokens += usage.input_tokens
            summed.output_tokens += usage.output_tokens
            summed.cache_read_tokens += usage.cache_read_tokens
            summed.cache_write_tokens += usage.cache_write_tokens
            summed.estimated = summed.estimated or usage.estimated
        stack.extend(current.children)
    return found


def cost_of(usage: Mapping[ModelKey, Usage]) -> float | None:
    """The cost in USD of ``usage`` (:func:`usage_by_model`) at today's table, or ``None`` when a model has no
    known price. No call costs 0."""
    total = 0.0
    for key, tokens in usage.items():
        price = _priced(key)
        if price is None:
            return None
        cached = tokens.cache_read_tokens + tokens.cache_write_tokens
        plain_input = max(tokens.input_tokens - cached, 0)
        read = price.input if price.cache_read is None else price.cache_read
        write = price.input if price.cache_write is None else price.cache_write
        total += (plain_input * price.input + tokens.cache_read_tokens * read + tokens.cache_write_tokens * write
                  + tokens.output_tokens * price.output) / 1_000_000
    return total


def cost(run: Any) -> float | None:
    """What ``run`` (a ``Run`` or its ``Recording``; a composition with its member runs) cost in USD at the
    prices in :data:`PRICES`, or ``None`` when any of its LLM calls used a model with no known price
    (:func:`unpriced_models` names them). A run that called no model cost 0."""
    return cost_of(usage_by_model(_recording("cost", run)))


def unpriced_models(run: Any) -> list[str]:
    """The models ``run``'s LLM calls used that have no price in the table (the names asked for), in order."""
    return unpriced(usage_by_model(_recording("unpriced_models", run)))


#: how a view says that a model has no price, and how to give it one
SET_PRICE = "add one with footprint_lab.providers.prices.set_price(model, input=..., output=...)"


def priced(usage: Mapping[ModelKey, Usage]) -> tuple[float | None, str]:
    """The cost in USD of ``usage`` and what a view says beside it: which models have no price (the cost is then
    ``None``), or that the tokens were estimated; ``""`` when the cost is exact."""
    missing = unpriced(usage)
    if missing:
        return None, f"no known price for {', '.join(missing)}: {SET_PRICE}"
    total = cost_of(usage)
    return total, "estimated: the provider reported no token counts" if estimated(usage) and total else ""


def unpriced(usage: Mapping[ModelKey, Usage]) -> list[str]:
    """The models of ``usage`` with no known price (the names asked for, each once)."""
    return list(dict.fromkeys(asked for (answered, asked) in usage if _priced((answered, asked)) is None))


def estimated(usage: Mapping[ModelKey, Usage]) -> bool:
    """Whether any call of ``usage`` had its tokens estimated, so a cost from it is an estimate too."""
    return any(tokens.estimated for tokens in usage.values())


def _priced(key: ModelKey) -> Price | None:
    answered, asked = key
    return price_of(answered) or price_of(asked)


def _model_name(function: str, model: Any) -> str:
    if not isinstance(model, str) or not model.strip():
        raise PriceError(function, "model", describe_shape(model) if not isinstance(model, str) else "blank text",
                         "must be a model's name as its provider spells it, e.g. 'gpt-4o-mini'")
    return model


def _recording(function: str, run: Any) -> Recording:
    from footprint_lab.record.recording import Recording

    found = getattr(run, "recording", run)
    if not isinstance(found, Recording):
        raise PriceError(function, "run", describe_shape(run),
                         "must be a run (what agent.run returns) or its Recording")
    return found

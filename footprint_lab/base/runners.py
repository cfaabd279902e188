"""The runner registry: how a layer below ``core`` builds a runner without importing ``core``.

Rule kept here: explanations that run a model of their own (an LLM judge, the evidence desk's
explainer) are handed a runner factory by the caller, or take the default that ``core``
registers here: ``agent`` and ``llm_call``, and ``tool`` (how such a runner's tools are
declared). The package root adds a loader that imports ``core``'s runners the first time a
default is asked for, so nothing below ``core`` names it: the same inversion the display
registry (:mod:`footprint_lab.base.display`) uses for views.

Role: base layer; imports nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_factories: dict[str, Callable[..., Any]] = {}
_loaders: list[Callable[[], None]] = []


def register(kind: str, factory: Callable[..., Any]) -> None:
    """Make ``factory(**settings)`` the default way to build a ``kind`` (``agent``, ``llm_call``, ``tool``)."""
    _factories[kind] = factory


def add_loader(loader: Callable[[], None]) -> None:
    """Call ``loader()`` once, the first time a kind nothing registered yet is asked for."""
    _loaders.append(loader)


def factory(kind: str) -> Callable[..., Any]:
    """The factory registered for ``kind``, running the pending loaders first when there is none."""
    while kind not in _factories and _loaders:
        _loaders.pop(0)()
    if kind not in _factories:
        raise LookupError(f"no runner of kind {kind!r} is registered; import footprint_lab first")
    return _factories[kind]

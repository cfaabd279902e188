"""Interrupts landing where a notebook's Stop lands: inside the work, or in a progress function as an item finishes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def interrupt_at(call: int, answer: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """A function the work calls (a claim reader, an embedder, a progress function) that raises KeyboardInterrupt on
    its ``call``-th call, and otherwise returns what ``answer`` does (``None`` without it)."""
    calls: list[int] = []

    def work(*given: Any) -> Any:
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return answer(*given) if answer is not None else None

    return work


def stop_at(done: int, heard: list[tuple[int, int]] | None = None) -> Callable[[int, int], None]:
    """A progress function that raises KeyboardInterrupt once ``done`` items are done (noting each count in
    ``heard``)."""

    def progress(count: int, total: int) -> None:
        if heard is not None:
            heard.append((count, total))
        if count == done:
            raise KeyboardInterrupt

    return progress

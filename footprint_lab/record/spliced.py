"""Sequences a long conversation's legs share instead of copying: :class:`Spliced`, :class:`Window`, :class:`Repeat`.

Defect closed: a chat's turn carries every earlier message, so each turn's capture held one entry
per carried message in a dozen columns, and its recording two lists more: ``n**2`` pointers over
``n`` turns. The carried messages and their forms are made once per conversation
(``record.captured.History``, append-only lists), and a finished turn's columns lay its own values
and views of those lists end to end, without copying them.

Rule kept: a :class:`Spliced` reads like the list it stands for (length, indexing, slicing,
iteration, ``==`` with any sequence, ``repr``, pickle as a list). Its first change makes it a list
of its own, so the shared lists are never written through it.

Role: record layer, for the recorder's columns, a recording's transcript and a conversation held
between turns (``core.conversation_legs``).
"""

from __future__ import annotations

import bisect
import itertools
from abc import abstractmethod
from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from typing import Any, overload


class _Stretch(Sequence[Any]):
    """``size`` items read by place (:meth:`_at`), sliced into a list (:meth:`_slice`)."""

    __slots__ = ("_size",)

    def __init__(self, size: int) -> None:
        self._size = size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._slice(index)
        return self._at(range(self._size)[index])  # a place out of range raises IndexError, as a list's does

    @abstractmethod
    def _at(self, index: int) -> Any:
        """The item at ``index`` (already checked to be in range)."""

    @abstractmethod
    def _slice(self, index: slice) -> list[Any]:
        """The items ``index`` takes, as a list."""


class Window(_Stretch):
    """Items ``start`` to ``stop`` of a list that only grows at its end: a leg's carried messages (a
    :func:`prefix`), or a stretch a turn's own copy matches."""

    __slots__ = ("_items", "_start")

    def __init__(self, items: list[Any], start: int, stop: int) -> None:
        assert 0 <= start <= stop <= len(items)
        super().__init__(stop - start)
        self._items = items
        self._start = start

    def _at(self, index: int) -> Any:
        return self._items[self._start + index]

    def _slice(self, index: slice) -> list[Any]:
        return self._items[self._start: self._start + self._size][index]

    def __iter__(self) -> Iterator[Any]:
        return itertools.islice(self._items, self._start, self._start + self._size)

    def window(self, start: int, stop: int) -> Window:
        """Items ``start`` to ``stop`` of this window, a window too."""
        return Window(self._items, self._start + start, self._start + stop)


def prefix(items: list[Any], size: int) -> Window:
    """The first ``size`` items of ``items`` (a list that only grows at its end)."""
    return Window(items, 0, size)


class Repeat(_Stretch):
    """One value, ``size`` times."""

    __slots__ = ("_value",)

    def __init__(self, value: Any, size: int) -> None:
        super().__init__(size)
        self._value = value

    def _at(self, index: int) -> Any:
        return self._value

    def _slice(self, index: slice) -> list[Any]:
        return [self._value] * len(range(self._size)[index])

    def __iter__(self) -> Iterator[Any]:
        return itertools.repeat(self._value, self._size)

    def window(self, start: int, stop: int) -> Repeat:
        return Repeat(self._value, stop - start)


class Spliced(MutableSequence[Any]):
    """Parts laid end to end, read as one list without copying them."""

    __slots__ = ("_ends", "_items", "_parts")

    def __init__(self, parts: Iterable[Sequence[Any]]) -> None:
        self._parts = tuple(part for part in parts if len(part))
        self._ends = list(itertools.accumulate(map(len, self._parts)))
        self._items: list[Any] | None = None

    def __len__(self) -> int:
        if self._items is not None:
            return len(self._items)
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if self._items is not None:
            return self._items[index]
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return list(itertools.islice(self, start, max(start, stop)))
            return list(self)[index]
        at = range(len(self))[index]
        part = bisect.bisect_right(self._ends, at)
        return self._parts[part][at - (self._ends[part - 1] if part else 0)]

    def __iter__(self) -> Iterator[Any]:
        if self._items is not None:
            return iter(self._items)
        return itertools.chain.from_iterable(self._parts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a is b or a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)

    def __copy__(self) -> Spliced:
        return Spliced([self._items] if self._items is not None else self._parts)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        import copy

        return copy.deepcopy(list(self), memo)

    def _own(self) -> list[Any]:
        if self._items is None:
            self._items = list(self)
            self._parts, self._ends = (), []
        return self._items

    def __setitem__(self, index: Any, value: Any) -> None:
        self._own()[index] = value

    def __delitem__(self, index: Any) -> None:
        del self._own()[index]

    def insert(self, index: int, value: Any) -> None:
        self._own().insert(index, value)


def matched(values: Sequence[Any], shared: Window | Repeat | range) -> list[Sequence[Any]]:
    """``values`` as runs: views of ``shared`` where they equal it place for place, their own items elsewhere.
    A turn's copy of shared values (a masked transcript, say) then keeps only what differs."""
    assert len(values) == len(shared)
    parts: list[Sequence[Any]] = []
    start = 0
    same = True
    for index, (value, held) in enumerate(zip(values, shared, strict=True)):
        equal = value is held or value == held
        if equal != same:
            if index > start:
                parts.append(_view(shared, start, index) if same else tuple(values[start:index]))
            start, same = index, equal
    if len(values) > start:
        parts.append(_view(shared, start, len(values)) if same else tuple(values[start:]))
    return parts


def _view(shared: Window | Repeat | range, start: int, stop: int) -> Sequence[Any]:
    return shared[start:stop] if isinstance(shared, range) else shared.window(start, stop)


def spliced(parts: Iterable[Sequence[Any]]) -> Sequence[Any]:
    """``parts`` end to end, read-only (a finished capture's column): the one part itself when there is one,
    ``()`` when none, else a :class:`Spliced`."""
    parts = [part for part in parts if len(part)]
    if len(parts) > 1:
        return Spliced(parts)
    return parts[0] if parts else ()

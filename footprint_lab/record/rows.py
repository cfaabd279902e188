"""``Rows``: a recording's list of models (steps, reads, events...), built from the capture on first use.

Defect closed: anything that touched ``run.recording`` made a long run's records into tens of
thousands of pydantic objects, each far larger than the JSON it stands for. A ``Rows`` keeps a
count, the field names, a function that works out every field's column from the capture, and the
constructor of one model. The first item asked for builds the whole list, which is then kept
(ordinary models one can hold, compare and change). The seal reads the columns
(:meth:`Rows.columns`) and a dump the records (:meth:`Rows.records`), without making models.

Rule kept: a ``Rows`` is a list in all but its class (indexing, slicing, iteration, ``len``,
``==`` with a list, mutation, ``repr``, copy, pickle). A ``Recording`` declares the field
``list[Model]``: validation wraps the plain list as built ``Rows``, and serialisation uses the
model's own serializer, so the JSON is byte for byte a plain list's (tests/record/test_engine.py).
Dumping an unbuilt ``Rows`` builds its items for that dump only.

Role: record layer, used by :mod:`footprint_lab.record.recording`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from typing import Any, TypeVar, overload

from pydantic import AfterValidator, PlainSerializer

Item = TypeVar("Item")
#: what makes one item from its record's values
_Model = Callable[[dict[str, Any]], Item]


class Rows(MutableSequence[Item]):
    """A list of ``count`` items made by ``model`` from ``columns()`` on first use, or of items built."""

    __slots__ = ("_columns", "_count", "_fields", "_items", "_model")

    def __init__(self, items: Iterable[Item] = (), *, count: int = 0,
                 columns: Callable[[], list[Any]] | None = None, fields: tuple[str, ...] = (),
                 model: Callable[[dict[str, Any]], Item] | None = None) -> None:
        self._items: list[Item] | None = None if columns is not None else list(items)
        self._count = count
        self._columns = columns
        self._fields = fields
        self._model = model

    @property
    def built(self) -> bool:
        """Whether the items have been made (the first read of any item makes them all)."""
        return self._items is not None

    def _state(self) -> tuple[list[Item] | None, Callable[[], list[Any]] | None, _Model[Item] | None]:
        """The items, or the columns and model they are made from. The columns and model are read first: a build in
        another thread sets the items before it lets go of them, so one of the two is always there."""
        columns, model = self._columns, self._model
        return self._items, columns, model

    def items(self) -> list[Item]:
        """The items as a list, made now when they were not yet (once, whichever thread asks first)."""
        items = self._items
        if items is None:
            made = self.transient()
            with _BUILDING:
                if self._items is None:
                    self._items = made
                    self._columns = self._model = None
                items = self._items
        return items

    def transient(self) -> list[Item]:
        """The items for one use (a dump), without keeping them when they were not built."""
        items, columns, model = self._state()
        if items is not None:
            return items
        assert columns is not None and model is not None
        return list(map(model, _records_of(self._fields, columns())))

    def columns(self) -> list[Any] | None:
        """What the seal reads of unbuilt items: one list per field, in the model's order (nested records as
        dicts), made for this use only. ``None`` once built: the items' own fields are then sealed."""
        items, columns, _ = self._state()
        if items is not None or columns is None:
            return None
        return columns() if self._count else transposed([], len(self._fields))

    def values(self, *names: str) -> list[list[Any]]:
        """The named fields' values, one list per name in record order: read from the columns when the items
        are not built (so none is made), else from the items."""
        items, columns, _ = self._state()
        if items is not None:
            return [[getattr(item, name) for item in items] for name in names]
        assert columns is not None
        made = columns() if self._count else transposed([], len(self._fields))
        return [list(made[self._fields.index(name)]) for name in names]

    def __len__(self) -> int:
        return self._count if self._items is None else len(self._items)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        return self.items()[index]

    @overload
    def __setitem__(self, index: int, value: Item) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[Item]) -> None: ...

    def __setitem__(self, index: Any, value: Any) -> None:
        self.items()[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self.items()[index]

    def insert(self, index: int, value: Item) -> None:
        self.items().insert(index, value)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rows):
            return self.items() == other.items()
        if isinstance(other, list):
            return self.items() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __add__(self, other: Iterable[Item]) -> list[Item]:
        return [*self.items(), *other]

    def __radd__(self, other: Iterable[Item]) -> list[Item]:
        return [*other, *self.items()]

    def sort(self, *, key: Callable[[Item], Any] | None = None, reverse: bool = False) -> None:
        """Sort in place, as ``list.sort``."""
        self.items().sort(key=key, reverse=reverse)

    def copy(self) -> list[Item]:
        """A shallow copy, as a list."""
        return list(self.items())

    def __repr__(self) -> str:
        return repr(self.items())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Rows, (self.items(),))


def _records_of(fields: tuple[str, ...], columns: list[Any]) -> list[dict[str, Any]]:
    """Columns of ``fields`` as one dict per record."""
    return [dict(zip(fields, values, strict=True)) for values in zip(*columns, strict=True)]


#: held while a build's items are set, so two threads that build at once keep the first one's
_BUILDING = threading.Lock()


def transposed(rows: Sequence[Sequence[Any]], width: int) -> list[Any]:
    """Records' values (one sequence per record, in field order) as ``width`` columns, one per field."""
    return list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]


def as_list(value: list[Item]) -> list[Item]:
    """A recording's list as a plain list (a ``Rows`` is built now if it was not), for loops that index it
    many times, where each ``Rows`` lookup would be a Python call."""
    return value.items() if isinstance(value, Rows) else value


def as_rows(value: list[Item]) -> Rows[Item]:
    """A recording's list as a ``Rows`` (one set by hand may be a plain list)."""
    return value if isinstance(value, Rows) else Rows(value)


def _dump(value: Any) -> list[Any]:
    return value.transient() if isinstance(value, Rows) else value


def rows_field(model: type) -> tuple[Any, Any]:
    """The validator and serializer that make a ``list[model]`` field hold ``Rows``."""
    return AfterValidator(as_rows), PlainSerializer(_dump, return_type=list[model])  # type: ignore[valid-type]

"""Hand edits of saved recording data, shared by the tests of the recording door and of loading."""

from __future__ import annotations

import copy
from typing import Any


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value`` (keys and indices from the top), ``value`` itself left out."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            found += paths(item, (*prefix, n))
    return found


def edited_copy(data: Any, where: tuple[Any, ...], value: Any, *, remove: bool) -> Any:
    """A deep copy of ``data`` with the place ``where`` set to ``value``, or removed."""
    data = copy.deepcopy(data)
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    if remove:
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    return data

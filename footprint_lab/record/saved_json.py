"""Saved JSON read back: parsed in one place, and never deeper than :data:`MAX_NESTING` levels.

Defect closed: a notebook or a saved recording nested a few thousand levels deep (``[[[[...]]]]``,
in an output's data, in metadata, in a recording's ``meta``) crashed every reader with
``RecursionError``. The standard library's parser recurses once per level and gives up near
Python's recursion limit, how near depending on how deep the caller already is; ``nbformat``
parses with it; orjson refuses only past 1,024 levels and reads an integer beyond 64 bits as a
float; and what reads the parsed value next (the scrubber, the views, ``json.dumps`` writing a
notebook back) recurses too, well before 1,024 levels.

Rule kept here: :func:`parse_json` is the one place footprint_lab parses JSON that comes back
from a file: a notebook, a saved recording or checkpoint, a tool catalog, and the JSON text a
notebook carries inside (a recording held by a widget trait, a tool result stored as its JSON).
It parses with the standard library (numbers and escapes read as they always did), but for a
number JSON cannot write, which it reads as ``null``: ``NaN``, ``Infinity`` and a number past the
float range (``1e400``), none of which footprint_lab or orjson writes (a value that is no finite
number is saved as ``null``), so a seal, hashing what orjson writes, reads the same value the
reader gets (a file holding ``Infinity`` where ``null`` was sealed reads back as sealed); it
then measures the nesting level by level, without recursion; past :data:`MAX_NESTING` levels
it raises :class:`NestingTooDeep`, which each door turns into its own refusal by name. A string
escape that decodes to a lone surrogate (``"\\ud800"``: no character, it could not be written
back as UTF-8) makes the text not JSON (a ``ValueError``), as orjson and pydantic read it. Nothing
footprint_lab or Jupyter writes comes near the bound: a saved notebook nests about 15 levels, and
each member run of a composition adds two.

Role: record layer, below every door that reads a file.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from footprint_lab.base.unicode import all_sound, is_sound

#: JSON nested deeper than this many levels (arrays and objects) is refused at the door
MAX_NESTING = 100
_CONTAINERS = (dict, list)


class NestingTooDeep(Exception):
    """Raised by :func:`parse_json` for JSON nested deeper than :data:`MAX_NESTING` levels.

    Not a ``Refusal`` itself and not a ``ValueError`` (so no ``except ValueError`` takes it for
    text that is not JSON): every door catches it and refuses with its own class, naming the bound.
    """

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_NESTING} levels")


def parse_json(raw: str | bytes | bytearray) -> Any:
    """``raw`` parsed as JSON; ``ValueError`` when it is not JSON, :class:`NestingTooDeep` when too deep."""
    try:
        value = json.loads(raw, parse_float=_finite, parse_constant=_no_number)
    except RecursionError:  # deeper than the parser's own reach: deeper than the bound anyway
        raise NestingTooDeep from None
    if _openings(raw) > MAX_NESTING and nesting(value) > MAX_NESTING:  # fewer openings cannot nest deeper
        raise NestingTooDeep
    # bytes hold no surrogate but through an escape, so the walk runs only when one is written
    if isinstance(raw, str):
        unsound = not is_sound(raw) or (_SURROGATE_ESCAPE.search(raw) is not None and not all_sound(value))
    else:
        unsound = _SURROGATE_ESCAPE_BYTES.search(raw) is not None and not all_sound(value)
    if unsound:
        raise ValueError("the text holds a lone surrogate, which is no character")
    return value


def _finite(text: str) -> float | None:
    """A JSON number with a point or an exponent, ``None`` past the float range."""
    value = float(text)
    return value if math.isfinite(value) else None


def _no_number(name: str) -> None:
    """``NaN``, ``Infinity`` or ``-Infinity``: no number JSON can write, read as ``null``."""
    return None


def _openings(raw: str | bytes | bytearray) -> int:
    """How many ``[`` and ``{`` the text holds, inside strings too: a bound on how deep it can nest."""
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{")
    return raw.count(b"[") + raw.count(b"{")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def nesting(value: Any, *, stop: int = MAX_NESTING) -> int:
    """How many levels of arrays and objects ``value`` nests (0 for a scalar), counted up to ``stop + 1``.

    Level by level over the containers only, so its cost is one look at each value and its
    stack is flat, however deep ``value`` goes.
    """
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level and depth <= stop:
        depth += 1
        below = []
        for container in level:
            for item in container.values() if isinstance(container, dict) else container:
                if isinstance(item, _CONTAINERS):  # a tuple: isinstance checks it twice as fast as a union
                    below.append(item)
        level = below
    return depth

"""Saved JSON read back: parsed in one place, and never nested deeper than :data:`MAX_NESTING` levels.

Defect closed: JSON nested a few thousand levels deep (``[[[[...]]]]`` in a notebook output, its
metadata or a recording's ``meta``) crashed every reader with ``RecursionError``. The standard
parser recurses once per level, and so does what reads the value next (the scrubber, the views,
``json.dumps`` writing a notebook back). orjson is no way out: it allows 1,024 levels and reads an
integer beyond 64 bits as a float.

Rule kept here: :func:`parse_json` is the one place footprint_lab parses JSON read back from a
file: a notebook, a saved recording or checkpoint, a tool catalog, or JSON text a notebook carries
inside. It parses with the standard library, with three differences:

- A number JSON cannot write (``NaN``, ``Infinity``, ``1e400``) reads as ``null``. footprint_lab
  and orjson save such a value as ``null``, so the reader gets the value the seal hashed.
- Nesting is measured level by level, without recursion; past :data:`MAX_NESTING` levels it raises
  :class:`NestingTooDeep`, which each door turns into its own refusal.
- An escape that decodes to a lone surrogate (``"\\ud800"``, no character) makes the text not JSON
  (``ValueError``), as orjson and pydantic read it.

Nothing footprint_lab or Jupyter writes comes near the bound: a saved notebook nests about 15
levels, and each member run of a composition adds two.

Role: base layer, below every door that reads a file (notebooks, recordings, providers, catalogs).
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
    # bytes can hold a surrogate only through an escape, so the walk runs only when one is written
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

    It goes level by level over the containers only: one look at each value, and a flat stack
    however deep ``value`` goes.
    """
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level and depth <= stop:
        depth += 1
        below = []
        for container in level:
            for item in container.values() if isinstance(container, dict) else container:
                if isinstance(item, _CONTAINERS):  # a tuple: isinstance checks it faster than a union
                    below.append(item)
        level = below
    return depth

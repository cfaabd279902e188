"""What the evidence a call was sent holds, read once: whether it vouches for a value, and its nearest one.

Rule kept here: a stated value is supported by evidence of its meaning, not of its spelling: a
number by any number or amount of its size, an amount by the same amount or the bare number,
a day without a year by that day of any year; a name by each of its words (a possessive
dropped), and a name in a script without capitals by each pair of its letters.

Cost: the evidence is read once, into sets of what it holds and lists of its values sorted, so a
stated value is one look-up. The near value shown with a finding is looked for
among the evidence values that sort next to it (by size, by day, by time; a name or identifier
by its spelling forwards and backwards, which keeps a typo's either side), not among all of them; a
name or identifier longer than 200 characters is reported without one.

Role: explain layer; read by the ``unsupported_value`` check
(:mod:`footprint_lab.explain.checks._unsupported`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from datetime import date
from decimal import Decimal
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.checks._text_values import (
    CURRENCIES,
    Value,
    as_seen,
    letter_patterns,
    numbers_anywhere,
    read_values,
)
from footprint_lab.explain.provenance.sources import describe_source
from footprint_lab.record.schema import KIND_ASSISTANT, KIND_BASE, KIND_TOOL_RESULT, KIND_USER

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece, Recording


def _holds(value: Value) -> list[tuple[str, Any]]:
    """What an evidence value vouches for: itself, an amount's bare size, a dated day without its year."""
    if value.kind == "amount":
        return [*(("amount", key) for key in value.keys), *(("size", key[1]) for key in value.keys)]
    if value.kind == "date":
        return [*(("date", key) for key in value.keys), *(("day", key[1:]) for key in value.keys)]
    return [(value.kind, key) for key in value.keys]


def _wants(value: Value) -> list[tuple[str, Any]]:
    """What would support a stated value: a number by any number or amount of its size; an amount by the same
    amount or the bare number; a day without a year by that day of any year; a dated day by itself or yearless."""
    if value.kind == "number":
        return [*(("number", key) for key in value.keys), *(("size", key) for key in value.keys)]
    if value.kind == "amount":
        return [*(("amount", key) for key in value.keys), *(("number", key[1]) for key in value.keys)]
    if value.kind == "date":
        return [*(("date", key) for key in value.keys), *(("date", (None, *key[1:])) for key in value.keys),
                *(("day", key[1:]) for key in value.keys if key[0] is None)]
    return [(value.kind, key) for key in value.keys]


_WORDS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")


class Evidence:
    """What the pieces a call was sent hold, read once: the keys of their values, the words they use, and their
    values sorted for finding a near one."""

    def __init__(self, recording: Recording, pieces: list[ContextPiece]) -> None:
        self.recording = recording
        self.keys: set[tuple[str, Any]] = set()
        self.words: set[str] = set()
        self.texts: list[str] = []
        places: dict[Any, dict[Any, tuple[int, tuple[Value, ContextPiece]]]] = {}
        seen = itertools.count()
        for piece in pieces:
            text = as_seen(piece.content)
            self.texts.append(text)
            words = _WORDS.findall(text.casefold())
            self.words.update(words, (_POSSESSIVE.sub("", word) for word in words))
            self.keys.update(("number", key) for key in numbers_anywhere(text))
            for value in read_values(text, True):
                self.keys.update(_holds(value))
                if value.kind == "identifier":  # a part of a longer one: "A-1001" in "orders/A-1001/items"
                    self.keys.update(("identifier", part) for part in _segments(value.keys[0]))
                for index, position in _places(value):
                    places.setdefault(index, {}).setdefault(position, (next(seen), (value, piece)))
        self.order = {index: sorted(entries.items()) for index, entries in places.items()}
        self.pairs: set[str] | None = None

    def holds(self, value: Value) -> bool:
        if any(key in self.keys for key in _wants(value)):
            return True
        if value.kind != "name":
            return False
        if not letter_patterns()["cased"].search(value.shown):  # a script without capitals: each pair of its letters
            return all(pair in self._pairs() for pair in _letter_pairs(value.shown))
        return all(word in self.words or _POSSESSIVE.sub("", word) in self.words
                   for word in _WORDS.findall(value.shown.casefold()))

    def _pairs(self) -> set[str]:
        if self.pairs is None:
            self.pairs = {pair for text in self.texts for run in letter_patterns()["caseless"].findall(text)
                          for pair in _letter_pairs(run)}
        return self.pairs

    def nearest(self, value: Value) -> tuple[Value | None, str | None, str | None]:
        """A near evidence value of a comparable kind, where it came from, and the step that landed it."""
        near: dict[int, tuple[Value, ContextPiece]] = {}
        for index, position in _places(value, looking=True):
            order = self.order.get(index, [])
            at = bisect.bisect_left(order, position, key=_position)
            near.update(entry for _, entry in order[max(0, at - _NEIGHBOURS):at + _NEIGHBOURS])
        best: tuple[float, int, Value, ContextPiece] | None = None
        spelling = SequenceMatcher(None, b=value.shown.casefold())  # read once, compared with each near one
        for seen, (other, piece) in near.items():
            distance = _distance(value, other, spelling)
            if distance is not None and (best is None or (distance, seen) < best[:2]):
                best = (distance, seen, other, piece)
        if best is None:
            return None, None, None
        return best[2], _said_by(best[3], self.recording), best[3].landed_by


#: how many evidence values on either side of where a stated value sorts are compared with it
_NEIGHBOURS = 2


def _position(entry: tuple[Any, Any]) -> Any:
    return entry[0]


def _places(value: Value, *, looking: bool = False) -> list[tuple[Any, Any]]:
    """Where ``value`` sorts, as ``(list, position)`` pairs: by size among numbers and amounts of its currency,
    by day, by minute, by spelling forwards and backwards; ``looking``, the lists a stated value is compared
    with (an amount is compared with every currency's amounts and with bare numbers)."""
    if value.kind in ("number", "amount"):
        sizes = [(key[0] if isinstance(key, tuple) else None, _size(key)) for key in value.keys]
        if not looking:
            return [(("size", currency), size) for currency, size in sizes]
        return [(("size", currency), size) for _, size in sizes for currency in _SIZE_LISTS]
    if value.kind == "date":
        days = [(("date", "day of year"), date(2000, month, day).toordinal()) for _, month, day in value.keys]
        return days + [(("date", "day"), date(year, month, day).toordinal()) for year, month, day in value.keys
                       if year is not None]
    if value.kind == "time":
        return [(("time",), hours * 60 + minutes) for hours, minutes in value.keys]
    spelled = value.shown.casefold()
    return [((value.kind, "forwards"), spelled), ((value.kind, "backwards"), spelled[::-1])]


#: the lists of sizes: bare numbers' (no currency), then each currency's amounts
_SIZE_LISTS = (None, *sorted(set(CURRENCIES.values())))


def _size(key: Any) -> Decimal:
    number = key[1] if isinstance(key, tuple) else key
    return number if isinstance(number, Decimal) else Decimal(number)


def _segments(identifier: str) -> list[str]:
    """The runs of one to four segments in an identifier: ``a-1001`` and ``1001/items`` in ``orders/a-1001/items``."""
    parts = re.split(r"([-_#/])", identifier)
    count = len(parts) // 2 + 1
    return ["".join(parts[2 * first:2 * last - 1]) for first in range(count)
            for last in range(first + 1, min(first + 5, count + 1))]


def _letter_pairs(run: str) -> set[str]:
    """Each pair of neighbouring letters in ``run`` (the letter itself when it is one)."""
    return {run[at:at + 2] for at in range(max(1, len(run) - 1))}


_COMPARABLE = {"number": ("number", "amount"), "amount": ("amount", "number"), "date": ("date",), "time": ("time",),
               "identifier": ("identifier",), "name": ("name",)}


def _distance(value: Value, other: Value, spelling: SequenceMatcher[str]) -> float | None:
    """How far apart two values are (smaller is nearer); ``None`` when they are not of comparable kinds.
    ``spelling`` holds ``value`` as written, casefolded, as its second sequence."""
    if other.kind not in _COMPARABLE[value.kind]:
        return None
    if value.kind in ("number", "amount"):
        gap = float(min(abs(a - b) / max(abs(a), abs(b), _TINY) for a in _sizes(value) for b in _sizes(other)))
        if value.kind == "amount":  # another amount in the same currency is the nearest kind of evidence
            gap += 0.25 if other.kind == "number" else 0.5 * (not set(_currencies(value)) & set(_currencies(other)))
        return gap
    if value.kind == "date":
        return min(_day_gap(a, b) for a in value.keys for b in other.keys)
    if value.kind == "time":
        (h, m), (oh, om) = value.keys[0], other.keys[0]
        return float(abs((h * 60 + m) - (oh * 60 + om)))
    if max(len(value.shown), len(other.shown)) > _SPELLING_LIMIT:  # comparing spellings is quadratic in them
        return None
    spelling.set_seq1(other.shown.casefold())
    if spelling.real_quick_ratio() < 0.6 or spelling.quick_ratio() < 0.6:  # bounds of the ratio, cheaper to get
        return None
    ratio = spelling.ratio()
    return None if ratio < 0.6 else 1.0 - ratio


_TINY = Decimal("1e-9")
#: the longest name or identifier whose spelling is compared with others (a longer one is named with no near value)
_SPELLING_LIMIT = 200


def _sizes(value: Value) -> list[Decimal]:
    return [_size(key) for key in value.keys]


def _currencies(value: Value) -> list[str]:
    return [k[0] for k in value.keys if isinstance(k, tuple)]


def _day_gap(a: Any, b: Any) -> float:
    """Days between two dates; with a year missing on either side, between the two days of one (leap) year."""
    (ay, am, ad), (by, bm, bd) = a, b
    if ay is None or by is None:
        ay = by = 2000
    return abs((date(ay, am, ad) - date(by, bm, bd)).days)


def _said_by(piece: ContextPiece, recording: Recording) -> str:
    """Where an evidence value came from, in a few words (a turn carried from an earlier run says so)."""
    kind = piece.source_kind
    earlier = " (an earlier turn)" if piece.detail.get("from_run") else ""
    if kind == KIND_TOOL_RESULT:
        tool = piece.detail.get("tool")
        if tool is None and piece.slot == "messages" and 0 <= piece.position < len(recording.messages):
            tool = recording.messages[piece.position].get("name")  # a carried result names its tool in the turn
        return f"the result of tool '{tool or '?'}'{earlier}"
    if kind == KIND_USER:
        return f"the user's message{earlier}"
    if kind == KIND_ASSISTANT:
        return "an earlier reply"
    if kind == KIND_BASE:
        return "the system prompt"
    return describe_source(piece)

"""How a scrubber writes masks into a text: each learned value found where it stands replaced by its mask.

Rule kept here: values that overlap where they stand are masked as one span; a number pair (``"pin": 42``) stands
only where its number ends; a mask already written is kept whole. A mask already written is one the scrubber writes
(``[redacted:password]``), never any text shaped like one: ``[redacted:<a value learned>]`` in a model's answer is
text, and the value in it is masked. The places come from one pass of the scrubber's index over the text
(``redact.hunt_index``), so many values in a long text cost their places, not a search each.

Role: redact layer, used by ``redact.scrubber.RunScrubber`` alone; the mask shape from ``redact._patterns``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from footprint_lab.redact._patterns import PLACEHOLDER


class WrittenMasks:
    """The masks a scrubber writes, as one pattern (a group around the whole): each name its policy covers and each
    name a mask of a value it was taught carries. Text shaped like a mask but naming none is text."""

    __slots__ = ("made", "names")

    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)
        self.made: re.Pattern[str] | None = None

    def add(self, mask: str) -> None:
        fresh = {found[len("[redacted:"):-1] for found in PLACEHOLDER.findall(mask)} - self.names
        if fresh:
            self.names |= fresh
            self.made = None

    def written(self, text: str) -> bool:
        """Whether ``text`` is a mask this scrubber writes (no value to learn: a text masked before, read again)."""
        return text.startswith("[redacted:") and self.pattern().fullmatch(text) is not None

    def pattern(self) -> re.Pattern[str]:
        if self.made is None:
            names = "|".join(map(re.escape, sorted(self.names, key=len, reverse=True))) or "(?!)"
            self.made = re.compile(f"(\\[redacted:(?:{names})\\])")
        return self.made


#: a place in a text: where it starts and ends, and what stands there (a learned form, or the mask written for it)
Place = tuple[int, int, str]


def standing(text: str, found: list[Place], masks: dict[str, str]) -> list[Place]:
    """Where each learned form ``found`` (start, end, form) stands in ``text``, with its mask (``masks``): a number
    pair only where its number ends."""
    return [(start, end, masks[form]) for start, end, form in found
            if not number_pair(form, masks[form]) or ends_there(text, end)]


def masked(text: str, places: list[Place]) -> str:
    """``text`` with each of ``places`` (start, end, mask) replaced by its mask. Places that overlap
    (``1234-5678-ABCD`` and ``ABCD-9999-ZZZZ`` in ``1234-5678-ABCD-9999-ZZZZ``) are masked as one span, with the mask
    of the one that starts first."""
    if not places:
        return text
    places = sorted(places, key=lambda place: (place[0], -place[1]))
    parts: list[str] = []
    done, (start, end, mask) = 0, places[0]
    for at, until, shown in places[1:]:
        if at < end:
            end = max(end, until)
            continue
        parts += (text[done:start], mask)
        done, start, end, mask = end, at, until, shown
    parts += (text[done:start], mask, text[end:])
    return "".join(parts)


def untouched(places: list[Place], text: str, masks: re.Pattern[str]) -> list[Place]:
    """Those of ``places`` that touch no mask already written in ``text`` (``masks``), in one walk over the masks."""
    written = [found.span() for found in masks.finditer(text)]
    starts = [start for start, _ in written]
    kept: list[Place] = []
    for place in places:
        last = bisect.bisect_left(starts, place[1]) - 1  # the last mask that starts before the place ends
        if last < 0 or written[last][1] <= place[0]:
            kept.append(place)
    return kept


def showing(places: list[Place], text: str, masks: re.Pattern[str]) -> list[Place]:
    """Those of ``places`` that do not lie wholly inside one mask already written in ``text`` (``masks``), in one
    walk over the masks."""
    written = [found.span() for found in masks.finditer(text)]
    starts = [start for start, _ in written]
    shown: list[Place] = []
    for place in places:
        last = bisect.bisect_right(starts, place[0]) - 1  # the last mask that starts at or before it
        if last < 0 or place[1] > written[last][1]:
            shown.append(place)
    return shown


def number_pair(value: str, mask: str) -> bool:
    """Whether ``value`` is a pair whose value is a number (``"pin": 42``, masked ``"pin": "[redacted:pin]"``)."""
    return value[-1:].isdigit() and mask[-1:] in ("'", '"')


def ends_there(text: str, end: int) -> bool:
    """Whether a number that ``text`` holds up to ``end`` ends there (``"pin": 42`` is no part of ``"pin": 420``)."""
    return text[end:end + 1] not in _NUMBER_GOES_ON


_NUMBER_GOES_ON = frozenset("0123456789.eE")

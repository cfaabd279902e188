"""How a scrubber writes masks into a text: each learned value found where it stands replaced by its mask.

Rule kept here: values that overlap where they stand are masked as one span; a number pair (``"pin": 42``) stands
only where its number ends; a mask already written is kept whole when a text is split around the masks. A mask
already written is one the scrubber writes (``masks``: ``[redacted:password]``), never any text shaped like one:
``[redacted:<a value learned>]`` in a model's answer is text, and the value in it is masked.

Role: redact layer, used by ``redact.scrubber.RunScrubber`` alone; the standard library only.
"""

from __future__ import annotations

import bisect
import re


def outside_masks(text: str, pairs: list[tuple[str, str]], masks: re.Pattern[str]) -> str:
    """``text`` with each value of ``pairs`` (value, mask; longest first) replaced by its mask between the masks
    already written (``masks``, one group around the whole), which are kept whole: a value never nests inside one."""
    return "".join(part if at % 2 else replaced(part, pairs) for at, part in enumerate(masks.split(text)))


def replaced(text: str, pairs: list[tuple[str, str]]) -> str:
    """``text`` with each value of ``pairs`` (value, mask) replaced by its mask. Values that overlap where they stand
    (``1234-5678-ABCD`` and ``ABCD-9999-ZZZZ`` in ``1234-5678-ABCD-9999-ZZZZ``) are masked as one span, with the
    mask of the one that starts first; a number pair stands only where its number ends (``ends_there``)."""
    spans: list[tuple[int, int, str]] = []
    for value, mask in pairs:
        number = number_pair(value, mask)
        at = text.find(value)
        while at != -1:
            end = at + len(value)
            if not number or ends_there(text, end):
                spans.append((at, end, mask))
            at = text.find(value, at + 1)
    if not spans:
        return text
    spans.sort(key=lambda span: (span[0], -span[1]))
    parts: list[str] = []
    done, (start, end, mask) = 0, spans[0]
    for at, until, shown in spans[1:]:
        if at < end:
            end = max(end, until)
            continue
        parts += (text[done:start], mask)
        done, start, end, mask = end, at, until, shown
    parts += (text[done:start], mask, text[end:])
    return "".join(parts)


def number_pair(value: str, mask: str) -> bool:
    """Whether ``value`` is a pair whose value is a number (``"pin": 42``, masked ``"pin": "[redacted:pin]"``)."""
    return value[-1:].isdigit() and mask[-1:] in ("'", '"')


def ends_there(text: str, end: int) -> bool:
    """Whether a number that ``text`` holds up to ``end`` ends there (``"pin": 42`` is no part of ``"pin": 420``)."""
    return text[end:end + 1] not in _NUMBER_GOES_ON


_NUMBER_GOES_ON = frozenset("0123456789.eE")


def sought(value: str, mask: str) -> str:
    """A pattern that finds ``value`` where it stands (a number pair only where its number ends)."""
    return re.escape(value) + ("(?![0-9.eE])" if number_pair(value, mask) else "")


def showing(secret: str, text: str, masks: re.Pattern[str]) -> bool:
    """Whether ``secret`` shows in ``text`` anywhere but wholly inside a mask already written (``masks``; in one walk:
    the masks and the places it stands in are both in order)."""
    at = text.find(secret)
    if at == -1:
        return False
    spans = [found.span() for found in masks.finditer(text)]
    starts = [start for start, _ in spans]
    while at != -1:
        inside = bisect.bisect_right(starts, at) - 1  # the last mask that starts at or before it
        if inside < 0 or at + len(secret) > spans[inside][1]:
            return True
        at = text.find(secret, at + 1)
    return False

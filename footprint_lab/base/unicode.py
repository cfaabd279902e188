"""Text that can be saved and shown: no lone surrogate in any evidence, no unseen control in any view.

Defect closed: a Python string can hold a lone surrogate (``"\\udcff"``, what bytes decoded
with ``errors="surrogateescape"`` leave behind). It is no character: it cannot be written as
UTF-8, so a run that let one in finished and then produced a ``Recording`` and a checkpoint
whose JSON raised: evidence that could not be saved.

The rule, at each boundary where text enters a run:

- what the caller hands in before anything runs (the run's message, a system prompt, a
  declared text) is refused by name at its door: the caller can fix it, and nothing ran;
- what arrives while running (a model's reply and its streamed tokens, a tool's result, a
  person's answer) cannot be refused without losing the work done, so it is made sound:
  each lone surrogate becomes U+FFFD (the replacement character), a surrogate *pair* becomes
  the character it encodes, and the model and the record get the same text, so the evidence
  stays true to what the model saw.

A second rule, for what a view draws: a Unicode direction control (an override such as
U+202E, an isolate, a mark such as U+200F) changes how the text after it is drawn without
being seen itself, so a piece could show its words reversed; a control character (NUL, ESC)
is not drawn at all. :func:`visible` shows each as a mark one can read (``⟨RLO⟩``, ``␀``); the
evidence itself keeps the text as it arrived.

A third, for what a reader of a shared notebook sees (``notebook``'s scan): :func:`invisible_class`
names the characters drawn as nothing (format characters, category Cf, and the variation selectors),
and :func:`display_order` puts a line's characters in the order they are drawn once the direction
controls apply, so a key typed backwards after U+202E is read the way it shows.

Role: base layer; pure functions over text and plain data.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any


def is_sound(text: str) -> bool:
    """``True`` when ``text`` can be written as UTF-8 (it holds no surrogate code point)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def all_sound(value: Any) -> bool:
    """``True`` when every string in ``value`` (text or plain data, keys included) is sound."""
    if isinstance(value, str):
        return is_sound(value)
    if isinstance(value, dict):
        return all(all_sound(key) and all_sound(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return all(all_sound(item) for item in value)
    return True


def sound_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD and each surrogate pair joined."""
    if is_sound(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def sound(value: Any) -> Any:
    """``value`` (text or plain data) with :func:`sound_text` applied to every string in it, keys included."""
    if isinstance(value, str):
        return sound_text(value)
    if isinstance(value, dict):
        return {sound(key): sound(item) for key, item in value.items()}
    if isinstance(value, list):
        return [sound(item) for item in value]
    if isinstance(value, tuple):
        return tuple(sound(item) for item in value)
    return value


#: The direction controls a view draws as a named mark: the embeddings and overrides
#: (U+202A-U+202E), the isolates (U+2066-U+2069) and the invisible marks (U+200E, U+200F, U+061C).
DIRECTION_CONTROLS = {
    "\u061c": "ALM", "\u200e": "LRM", "\u200f": "RLM", "\u202a": "LRE", "\u202b": "RLE", "\u202c": "PDF",
    "\u202d": "LRO", "\u202e": "RLO", "\u2066": "LRI", "\u2067": "RLI", "\u2068": "FSI", "\u2069": "PDI",
}
#: what each is drawn as: a direction control by its name in angle brackets, a control character
#: (C0 but tab, newline and carriage return, and DEL) by its Unicode control picture (U+2400...)
MARKS = {
    **{ord(char): f"\u27e8{name}\u27e9" for char, name in DIRECTION_CONTROLS.items()},
    **{code: chr(0x2400 + code) for code in range(32) if chr(code) not in "\t\n\r"}, 0x7F: "\u2421",
}
_UNSEEN = re.compile("[" + "".join(re.escape(chr(code)) for code in MARKS) + "]")


def visible(text: str, marks: Mapping[int, str] = MARKS) -> str:
    """``text`` as a view draws it: each direction control and control character replaced by its mark
    (``marks``: by code point, what to draw instead; :data:`MARKS` unless a view draws them its own way)."""
    return text.translate(marks) if _UNSEEN.search(text) else text


@functools.cache
def invisible_class() -> str:
    """The body of a regular-expression character class matching every character drawn as nothing: the
    format characters (Unicode category Cf: zero-width spaces and joiners, the soft hyphen, the direction
    controls, the byte order mark, tag characters), the combining grapheme joiner and the variation selectors.
    Built once, from the Unicode database Python carries."""
    codes = [code for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"]
    codes += [0x034F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
    ranges: list[list[int]] = []
    for code in sorted(set(codes)):
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(re.escape(chr(first)) + (f"-{re.escape(chr(last))}" if last > first else "")
                   for first, last in ranges)


#: per opening direction control: the direction it sets, whether it overrides its characters' own, and
#: whether it is an isolate (closed by U+2069, not U+202C); a first-strong isolate (U+2068) is read as LTR
_OPENING = {"\u202a": ("L", False, False), "\u202b": ("R", False, False), "\u202d": ("L", True, False),
            "\u202e": ("R", True, False), "\u2066": ("L", False, True), "\u2067": ("R", False, True),
            "\u2068": ("L", False, True)}
_DEPTH = 125  # the deepest embedding the Unicode bidirectional algorithm keeps


def display_order(text: str) -> list[int]:
    """The indices of ``text``'s characters in the order they are drawn, left to right, each line on its own
    (a line break ends every embedding), the direction controls themselves left out.

    A reading of the Unicode bidirectional algorithm that is close enough to find text: embeddings,
    overrides and isolates set each character's level; a character under an override takes its direction;
    any other takes its own (letters), or its neighbours' when they agree (spaces, punctuation, digits
    after right-to-left letters), else the embedding's; then every run at an odd level is drawn reversed.
    Paragraphs are left to right, as Jupyter draws them."""
    order: list[int] = []
    for line in re.finditer(r"[^\n]*\n?", text):
        if line.start() == line.end():
            continue
        body_end = line.end() - (text[line.end() - 1] == "\n")
        order += _drawn(text, line.start(), body_end)
        order += range(body_end, line.end())
    return order


def _drawn(text: str, begin: int, end: int) -> list[int]:
    """One line's characters (direction controls left out) in the order they are drawn."""
    stack: list[tuple[int, str | None, bool]] = [(0, None, False)]  # level, override direction, isolate
    kept: list[tuple[int, int, str | None]] = []  # index, embedding level, override direction
    for index in range(begin, end):
        char = text[index]
        if char in _OPENING:
            direction, overrides, isolate = _OPENING[char]
            level = stack[-1][0]
            level += 1 if (level % 2 == 0) == (direction == "R") else 2
            if level <= _DEPTH:
                stack.append((level, direction if overrides else None, isolate))
        elif char == "\u202c":  # PDF closes the latest embedding or override, never an isolate
            if len(stack) > 1 and not stack[-1][2]:
                stack.pop()
        elif char == "\u2069":  # PDI closes the latest isolate and whatever it holds
            if any(entry[2] for entry in stack[1:]):
                while not stack.pop()[2]:
                    pass
        elif char not in DIRECTION_CONTROLS:
            kept.append((index, stack[-1][0], stack[-1][1]))
    levels = _levels(text, kept)
    runs: list[tuple[int, int, int]] = []  # consecutive characters of one level: (level, first, end)
    for k, level in enumerate(levels):
        if runs and runs[-1][0] == level:
            runs[-1] = (level, runs[-1][1], k + 1)
        else:
            runs.append((level, k, k + 1))
    lowest_odd = min((level for level in levels if level % 2), default=None)
    if lowest_odd is not None:  # each run at or above a level, from the highest down, drawn reversed
        for floor in range(max(levels), lowest_odd - 1, -1):
            at = 0
            while at < len(runs):
                stop = at
                while stop < len(runs) and runs[stop][0] >= floor:
                    stop += 1
                runs[at:stop] = runs[at:stop][::-1]
                at = stop + 1
    # a run reversed an odd number of times (once per level from the lowest odd one to its own) reads backwards
    order = [k for level, first, end in runs
             for k in (range(end - 1, first - 1, -1) if lowest_odd is not None and level >= lowest_odd
                       and (level - lowest_odd) % 2 == 0 else range(first, end))]
    return [kept[k][0] for k in order]


def _levels(text: str, kept: list[tuple[int, int, str | None]]) -> list[int]:
    """Each kept character's level: its embedding's, raised by one where its direction differs from it."""
    kinds: list[str | None] = []
    for index, _, override in kept:
        if override is not None:
            kinds.append(override)
            continue
        own = unicodedata.bidirectional(text[index])
        kinds.append("L" if own == "L" else "R" if own in ("R", "AL") else "#" if own in ("EN", "AN") else None)
    strong = "L"  # digits read with the last strong letter before them (left to right at first)
    for k, found in enumerate(kinds):
        if found == "#":
            kinds[k] = strong
        elif found is not None:
            strong = found
    resolved: list[str] = []
    after: list[str | None] = [None] * len(kinds)
    upcoming: str | None = None
    for k in range(len(kinds) - 1, -1, -1):  # the next strong direction after each character
        after[k] = upcoming
        upcoming = kinds[k] or upcoming
    before: str | None = None
    for k, found in enumerate(kinds):
        if found is None:
            resolved.append(before if before is not None and before == after[k] else "R" if kept[k][1] % 2 else "L")
        else:
            before = found
            resolved.append(found)
    return [level + ((level % 2 == 0) == (kind == "R")) for (_, level, _), kind in zip(kept, resolved, strict=True)]

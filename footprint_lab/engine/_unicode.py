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

Role: engine layer; pure functions over text and plain data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: What a lone surrogate becomes.
REPLACEMENT = "\ufffd"


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

"""Text that can be saved: no lone surrogates in any evidence.

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

Role: engine layer; pure functions over text and plain data.
"""

from __future__ import annotations

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

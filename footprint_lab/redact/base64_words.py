"""Base64 read-through: a secret cannot hide in its base64 encoding.

Rule kept here: a value the policy covers is masked in its base64 form too (``Authorization: Basic ...``,
an image's text chunk, a ``data:`` URL). The run's scrubber and the notebook's ``scan`` and ``scrub``
(``notebook._walk``) all read through these functions.

Role: redact layer; pure functions over text and bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

#: possessive, so a long run that is not base64 after all ("aaa...!") fails in one pass, not a quadratic one
_WHOLE_B64 = re.compile(r"\s*+[A-Za-z0-9+/]{2}[A-Za-z0-9+/\s]*+={0,2}+\s*+")
#: the shortest base64 word read inside text (a shorter one is too often a plain word)
SHORTEST_WORD = 16


def whole_word(body: str) -> re.Pattern[str]:
    """``body`` (a regex) matched only as a whole base64 word: no base64 character before, nor one or ``=`` after."""
    return re.compile(rf"(?<![A-Za-z0-9+/])(?:{body})(?![A-Za-z0-9+/=])")


_B64_WORD = whole_word(rf"[A-Za-z0-9+/]{{{SHORTEST_WORD},}}={{0,2}}")
_SHORTEST = 8


def decoded(text: str) -> bytes | None:
    """The bytes ``text`` holds when all of it is base64 (line breaks allowed), or ``None``."""
    if len(text) < _SHORTEST or not _WHOLE_B64.fullmatch(text):
        return None
    packed = "".join(text.split())
    if len(packed) % 4:
        return None
    try:
        return base64.b64decode(packed, validate=True)
    except (binascii.Error, ValueError):
        return None


def encoded(raw: bytes, like: str) -> str:
    """``raw`` as base64, ending as ``like`` ended (nbformat often keeps a final line break)."""
    return base64.b64encode(raw).decode("ascii") + ("\n" if like.endswith("\n") else "")


def as_text(raw: bytes) -> str | None:
    """Decoded bytes that read as text (UTF-8, nearly all of it printable), or ``None`` for binary data."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.isprintable():  # the common case, in one C pass
        return text or None
    readable = sum(char.isprintable() or char in "\n\r\t" for char in text)
    return text if text and readable >= 0.9 * len(text) else None


def base64_words(text: str, fix: Callable[[bytes], bytes | None],
                 screen: Callable[[str], bool] | None = None) -> str:
    """``text`` with each base64 word replaced by the base64 of what ``fix`` returns for its bytes; where
    ``fix`` returns ``None`` the word stays. ``screen`` must be true wherever ``fix`` could change something:
    all words are decoded in one go and screened, so text that holds nothing costs no Python call per word."""
    if len(text) < SHORTEST_WORD:
        return text
    if screen is not None and not screen(decoded_words(text)):
        return text

    def one(found: re.Match[str]) -> str:
        raw = decoded(found.group())
        new = fix(raw) if raw is not None else None
        return found.group() if new is None else encoded(new, "")

    return _B64_WORD.sub(one, text)


def decoded_words(text: str) -> str:
    """What the base64 words in ``text`` decode to, joined as one text for a screen, in one C call.

    Only words of whole four-character groups are taken, so they decode joined as they would apart.
    A padding ``=`` is read as ``A``: that adds a stray byte or two, which can give a screen more to
    look at, never less. Bytes that are not text read as U+FFFD."""
    if len(text) < SHORTEST_WORD:
        return ""
    joined = "".join([word for word in _B64_WORD.findall(text) if len(word) % 4 == 0]).replace("=", "A")
    return binascii.a2b_base64(joined).decode("utf-8", "replace") if joined else ""


def base64_texts(text: str) -> list[str]:
    """What each base64 word in ``text`` decodes to, for those that read as text."""
    if len(text) < SHORTEST_WORD:
        return []
    found = (decoded(word.group()) for word in _B64_WORD.finditer(text))
    return [readable for raw in found if raw is not None and (readable := as_text(raw)) is not None]


__all__ = ["as_text", "base64_texts", "base64_words", "decoded", "decoded_words", "encoded"]

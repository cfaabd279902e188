"""Base64 read through: the text an encoded payload or word holds, so a secret cannot hide in its encoding.

Rule kept here: a value the redaction policy covers is masked in its base64 form too. A tool
result may carry an encoded credential (``Authorization: Basic ...``), a notebook an image's
text chunk or a ``data:`` URL. :func:`decoded` reads a string that is all base64,
:func:`base64_words` rewrites each base64 word inside a text through a fix of its bytes (the
word written again as the base64 of the fixed bytes), :func:`as_text` tells decoded bytes that
read as text from binary data. The live scrubber (``redact.scrubber``) and the notebook's
``scan`` and ``scrub`` (``notebook._walk``) read through the same functions.

Role: redact layer; pure functions over text and bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

#: possessive, so a long run that is not base64 after all ("aaa...!") fails in one pass, not in a quadratic one
_WHOLE_B64 = re.compile(r"\s*+[A-Za-z0-9+/]{2}[A-Za-z0-9+/\s]*+={0,2}+\s*+")
#: the shortest run of base64 characters read as a word inside text (a shorter one is too often a plain word)
SHORTEST_WORD = 16


def whole_word(body: str) -> re.Pattern[str]:
    """``body`` (a regular expression) matched only as a whole base64 word: no base64 character may
    touch it before, nor a base64 character or padding after."""
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
    if text.isprintable():  # nearly always, for text: one C pass
        return text or None
    readable = sum(char.isprintable() or char in "\n\r\t" for char in text)
    return text if text and readable >= 0.9 * len(text) else None


def base64_words(text: str, fix: Callable[[bytes], bytes | None],
                 screen: Callable[[str], bool] | None = None) -> str:
    """``text`` with each base64 word in it (a ``data:`` URL's payload, a token pasted in prose) replaced
    by the base64 of what ``fix`` gives back for its bytes; a word ``fix`` leaves (``None``) stays.

    With ``screen`` (a quick test that is true wherever ``fix`` could change something), every word is
    first decoded in one go and the decoded text screened: text whose words hold nothing is passed over
    without a Python call per word.
    """
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
    """What the base64 words in ``text`` decode to, run together as one text for a screen to read, in one C call.

    Each word of whole four-character groups decodes on its own, so the words can be decoded joined;
    a padding ``=`` is read as ``A`` (it then decodes to a stray byte or two between words, which a
    screen can only read as more to look at, never less). Bytes that are no text read as U+FFFD.
    """
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

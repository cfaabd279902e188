"""The text chunks of a PNG image (``tEXt``, ``zTXt``, ``iTXt``), read and written anew: a layer a string can
hide text in.

Rule kept here: each chunk's keyword and text (an ``iTXt`` chunk's translated keyword too) are
handed to the fixer as text, and a chunk that changed is written with its CRC anew; a compressed
chunk is inflated to at most a bound (a small image cannot hold more text than it), and an image
cut short, or a chunk that does not inflate, is left as it was.

Role: lab layer (``footprint_lab.notebook``); read through by ``scan`` and ``scrub``
(:mod:`footprint_lab.notebook._scrub`) for an image a notebook holds.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: the most a compressed text chunk is inflated to (a small image cannot hold more text than this)
_INFLATE_LIMIT = 8_000_000


def png_texts(raw: bytes, fix: Callable[[str, str], str]) -> bytes | None:
    """A PNG image with the text of each ``tEXt``, ``zTXt`` and ``iTXt`` chunk (keyword and text) replaced
    by ``fix(text, label)``, each chunk's CRC written anew; ``None`` when no text changed (or the
    image is cut short)."""
    if not raw.startswith(PNG_SIGNATURE):
        return None
    parts = [PNG_SIGNATURE]
    changed = False
    at = len(PNG_SIGNATURE)
    number = 0
    while at + 12 <= len(raw):
        size = int.from_bytes(raw[at:at + 4], "big")
        kind, body = raw[at + 4:at + 8], raw[at + 8:at + 8 + size]
        if len(body) != size:
            return None
        end = at + 12 + size
        if kind in (b"tEXt", b"zTXt", b"iTXt"):
            label = f"PNG {kind.decode('latin-1')} chunk {number}"
            new = _chunk_text(kind, body, lambda text, label=label: fix(text, label))  # type: ignore[misc]
            if new is not None:
                body, changed = new, True
        parts.append(len(body).to_bytes(4, "big") + kind + body
                     + zlib.crc32(kind + body).to_bytes(4, "big") if changed else raw[at:end])
        number += 1
        at = end
    parts.append(raw[at:])
    return b"".join(parts) if changed else None


def _chunk_text(kind: bytes, body: bytes, fix: Callable[[str], str]) -> bytes | None:
    keyword, _, rest = body.partition(b"\0")
    new_keyword = fix(keyword.decode("latin-1")).encode("latin-1", "replace")
    if kind == b"tEXt":
        text = rest.decode("latin-1")
        new = fix(text)
        if new == text and new_keyword == keyword:
            return None
        return new_keyword + b"\0" + new.encode("latin-1", "replace")
    if kind == b"zTXt":
        inflated = _inflate(rest[1:])
        if inflated is None:
            return None
        text = inflated.decode("latin-1")
        new = fix(text)
        if new == text and new_keyword == keyword:
            return None
        return new_keyword + b"\0\0" + zlib.compress(new.encode("latin-1", "replace"))
    compressed, language_end = rest[:1] == b"\1", rest.find(b"\0", 2)
    translated_end = rest.find(b"\0", language_end + 1) if language_end != -1 else -1
    if translated_end == -1:
        return None
    language, translated = rest[2:language_end], rest[language_end + 1:translated_end].decode("utf-8", "replace")
    payload = _inflate(rest[translated_end + 1:]) if compressed else rest[translated_end + 1:]
    if payload is None:
        return None
    text = payload.decode("utf-8", "replace")
    new, new_translated = fix(text), fix(translated)
    if new == text and new_translated == translated and new_keyword == keyword:
        return None
    data = zlib.compress(new.encode("utf-8")) if compressed else new.encode("utf-8")
    return (new_keyword + b"\0" + rest[:2] + language + b"\0" + new_translated.encode("utf-8") + b"\0" + data)


def _inflate(data: bytes) -> bytes | None:
    try:
        inflater = zlib.decompressobj()
        out = inflater.decompress(data, _INFLATE_LIMIT)
    except zlib.error:
        return None
    return out


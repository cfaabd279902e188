"""Every string of a notebook, with where it sits: the one walk ``scan`` and ``scrub`` share, and the
layers a string can hide text in.

Rule kept here: no corner of a notebook is left unread. :func:`walk` visits the notebook's
metadata (its saved widget state model by model), every cell's source, metadata and
attachments, and every output's text, error, metadata and data under every MIME type, custom
ones included, down to each string, number and key of the JSON they hold; each with a
:class:`Spot` (cell, output, the part, and the field path inside it). A value under a key the
visitor covers is handed over whole; a saved recording is handed over as one piece (it is
masked as a recording, so it still loads).

What the visitor reads inside a string is here too, each layer undone and done again (base64
is read through ``engine._base64``): :func:`png_texts` (the text chunks of a PNG image:
``tEXt``, ``zTXt``, ``iTXt``), and :func:`unhidden` (the text a reader sees once ANSI escape
codes and HTML comments are dropped and HTML entities read, each position mapped back to
the raw text, so a match found in the reading is masked in the raw text, markup kept).

Role: lab layer (``footprint_lab.notebook``); pure functions over notebook data.
"""

from __future__ import annotations

import bisect
import html
import re
import zlib
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from footprint_lab.engine.schema import RECORDING_MIME
from footprint_lab.notebook._read import WIDGET_STATE_MIME

#: where each part of a cell or an output is reported (a part not named here goes by its own key)
_CELL_PARTS = {"source": "source", "metadata": "cell metadata", "attachments": "attachments"}
_OUTPUT_PARTS = {"text": "text", "traceback": "error", "evalue": "error", "ename": "error",
                 "metadata": "output metadata"}
#: parts nbformat may store as a list of lines: read joined, so a match across two lines is found
_MULTILINE = frozenset({"source", "text"})


class Layer(str):
    """A step of a :class:`Spot`'s path that names a layer read through (``(base64)``), not a key."""

    __slots__ = ()


class Spot(NamedTuple):
    """Where a value sits: ``cell`` and ``output`` indices (``None`` for the notebook's metadata), the
    ``where`` part (``source``, ``data[image/png]``, ``widget <id>``...), and the ``path`` inside it
    (keys, list indices and the layers undone, such as ``(base64)``)."""

    cell: int | None
    output: int | None
    where: str
    path: tuple[Any, ...] = ()

    def deeper(self, step: Any) -> Spot:
        return self._replace(path=(*self.path, step))

    def through(self, layer: str) -> Spot:
        """Where the same value sits once ``layer`` (``base64``, ``JSON text``...) is read through."""
        return self.deeper(Layer(f"({layer})"))


class Visitor(Protocol):
    """What :func:`walk` hands each value to; each method gives the value back, masked or as it was."""

    def covers(self, key: str) -> bool: ...

    def keyed(self, key: str, value: Any, spot: Spot) -> Any: ...

    def text(self, value: str, spot: Spot) -> str: ...

    def number(self, value: int | float, spot: Spot) -> Any: ...

    def recording(self, value: Any, spot: Spot) -> Any: ...


def walk(notebook: dict[str, Any], visitor: Visitor) -> dict[str, Any]:
    """The notebook with each value replaced by what ``visitor`` gives back (parts it leaves as they
    are stay the very same objects); the notebook given is not changed."""
    out = dict(notebook)
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = _metadata(metadata, visitor)
    cells = notebook.get("cells")
    if isinstance(cells, list):
        out["cells"] = [_cell(cell, index, visitor) if isinstance(cell, dict)
                        else value(cell, Spot(index, None, "cell"), visitor) for index, cell in enumerate(cells)]
    for key in notebook:
        if key not in ("metadata", "cells"):
            out[key] = value(notebook[key], Spot(None, None, key), visitor)
    return out


def _metadata(metadata: dict[str, Any], visitor: Visitor) -> dict[str, Any]:
    """Notebook metadata; its saved widget state reported model by model (``widget <id>``)."""
    top = Spot(None, None, "metadata")
    widgets = metadata.get("widgets")
    block = widgets.get(WIDGET_STATE_MIME) if isinstance(widgets, dict) else None
    state = block.get("state") if isinstance(block, dict) else None
    if not isinstance(state, dict) or visitor.covers("widgets"):
        return value(metadata, top, visitor)
    assert isinstance(widgets, dict) and isinstance(block, dict)
    models = {_key(model_id, top, visitor): value(model, Spot(None, None, f"widget {model_id}"), visitor)
              for model_id, model in state.items()}
    rest_block = value({k: v for k, v in block.items() if k != "state"}, top.deeper("widgets").deeper(
        WIDGET_STATE_MIME), visitor)
    rest_widgets = value({k: v for k, v in widgets.items() if k != WIDGET_STATE_MIME}, top.deeper("widgets"), visitor)
    rest = value({k: v for k, v in metadata.items() if k != "widgets"}, top, visitor)
    return {**rest, "widgets": {**rest_widgets, WIDGET_STATE_MIME: {**rest_block, "state": models}}}


def _cell(cell: dict[str, Any], index: int, visitor: Visitor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in cell.items():
        if key == "outputs" and isinstance(item, list):
            out[key] = [_output(output, index, n, visitor) if isinstance(output, dict)
                        else value(output, Spot(index, n, "output"), visitor) for n, output in enumerate(item)]
            continue
        spot = Spot(index, None, _CELL_PARTS.get(key, str(key)))
        if key == "attachments" and isinstance(item, dict):  # each file's data, as an output's, may be lines
            item = {name: {mime: _joined(data) for mime, data in bundle.items()} if isinstance(bundle, dict)
                    else bundle for name, bundle in item.items()}
        out[key] = value(_joined(item) if key in _MULTILINE else item, spot, visitor)
    return out


def _output(output: dict[str, Any], cell: int, index: int, visitor: Visitor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in output.items():
        if key == "data" and isinstance(item, dict):
            data = {}
            for mime, carried in item.items():
                if mime == RECORDING_MIME:  # masked as a recording, so it still loads
                    data[mime] = visitor.recording(carried, Spot(cell, index, "recording"))
                else:
                    data[mime] = value(_joined(carried), Spot(cell, index, f"data[{mime}]"), visitor)
            out[key] = data
            continue
        spot = Spot(cell, index, _OUTPUT_PARTS.get(key, str(key)))
        out[key] = value(_joined(item) if key in _MULTILINE else item, spot, visitor)
    return out


def value(item: Any, spot: Spot, visitor: Visitor) -> Any:
    """``item`` (any JSON value) with each string, number and key visited, and each value under a covered
    key handed over whole; what nothing changed is given back as the same object."""
    if isinstance(item, str):
        return visitor.text(item, spot)
    if isinstance(item, bool) or item is None:
        return item
    if isinstance(item, int | float):
        return visitor.number(item, spot)
    if isinstance(item, dict):
        if holds_recording(item):
            return visitor.recording(item, spot)
        changed = False
        out: dict[Any, Any] = {}
        for key, inner in item.items():
            inner_spot = spot.deeper(key)
            if isinstance(key, str) and inner is not None and visitor.covers(key):
                new = visitor.keyed(key, inner, inner_spot)
            else:
                new = value(inner, inner_spot, visitor)
            shown = _key(key, spot, visitor)
            if shown in out:  # two keys masked alike stay two entries
                shown = next(f"{shown}#{n}" for n in range(2, len(item) + 2) if f"{shown}#{n}" not in out)
            out[shown] = new
            changed = changed or new is not inner or shown != key
        return out if changed else item
    if isinstance(item, list):
        items = [value(inner, spot.deeper(n), visitor) for n, inner in enumerate(item)]
        return items if any(new is not old for new, old in zip(items, item, strict=True)) else item
    return item


def _key(key: Any, spot: Spot, visitor: Visitor) -> Any:
    """A mapping key, read as text too (a secret can be a key)."""
    return visitor.text(key, spot.through("key")) if isinstance(key, str) else key


def _joined(item: Any) -> Any:
    """nbformat's multi-line strings (lists of lines) as one string."""
    return "".join(item) if isinstance(item, list) and item and all(isinstance(v, str) for v in item) else item


def holds_recording(item: Any) -> bool:
    """Data that is a saved recording (a widget trait may carry one)."""
    return isinstance(item, dict) and "run_id" in item and "schema_version" in item


def holds_recording_text(item: str) -> bool:
    """JSON text that is a saved recording."""
    return item[:1] == "{" and '"schema_version"' in item and '"run_id"' in item


# -- PNG text chunks -----------------------------------------------------------------------------
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


# -- what a reader sees: ANSI codes, HTML comments and entities ----------------------------------
_HIDING = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"           # an ANSI control sequence (colours, cursor moves)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # an ANSI operating-system command (a title, a link)
    r"|\x1b[@-Z\\-_]"                    # a two-character ANSI escape
    # an HTML comment as a browser reads one: "<!-->" and "<!--->" are whole (empty) ones, "--!>" ends one
    # too, and an unclosed one runs to the end; "<!...>" and "<?...>" are comments of their own to the next ">"
    r"|<!--(?:-?>|.*?(?:--!?>|\Z))"
    r"|<[!?][^>]*>"  # (unclosed, the rest is still read: text that is no HTML may hold "<!" or "<?")
    r"|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});?",  # an HTML entity (any count of digits)
    re.S,
)


_NUMERIC = re.compile(r"&#([xX]?)0*([0-9a-fA-F]*);?")


def _entity(token: str) -> str:
    """What a browser shows for an HTML entity: a numeric one read past its leading zeros, and one too
    large for any character (more digits than int() takes, too) as U+FFFD."""
    numeric = _NUMERIC.fullmatch(token)
    if numeric is None:
        return html.unescape(token)
    base, digits = numeric.groups()
    return html.unescape(f"&#{base}{digits or '0'};") if len(digits) <= 8 else "\ufffd"


def unhidden(text: str, hits: Callable[[str], list[tuple[int, int, str]]]) -> str:
    """``text`` with what ``hits`` finds in its reading (ANSI codes and HTML comments dropped, entities
    read) masked where it sits in the raw text: a match spread over ``&#115;k-...``, ``sk-<!-- -->...``
    or ``sk-\\x1b[0m...`` is replaced whole (the markup around it kept)."""
    if not _HIDING.search(text):
        return text
    reading: list[str] = []
    starts: list[int] = []  # per piece of the reading: where it starts there, and where it came from
    sources: list[tuple[int, int, bool]] = []
    at = length = 0
    for found in _HIDING.finditer(text):
        if found.start() > at:
            starts.append(length)
            sources.append((at, found.start(), True))
            reading.append(text[at:found.start()])
            length += found.start() - at
        token = found.group()
        shown = _entity(token) if token[0] == "&" else ""
        if shown:
            starts.append(length)
            sources.append((found.start(), found.end(), shown == token))
            reading.append(shown)
            length += len(shown)
        at = found.end()
    if at < len(text):
        starts.append(length)
        sources.append((at, len(text), True))
        reading.append(text[at:])
    spans = hits("".join(reading))
    if not spans:
        return text

    def raw(offset: int, end: bool) -> int:
        piece = bisect.bisect_right(starts, offset - 1 if end else offset) - 1
        begin, stop, literal = sources[piece]
        if literal:
            return begin + (offset - starts[piece])
        return stop if end else begin

    out: list[str] = []
    cursor = 0
    for start, stop, mask in spans:
        begin, finish = raw(start, False), raw(stop, True)
        if begin < cursor:  # overlaps the match before: it is masked already
            begin = cursor
            if finish <= cursor:
                continue
            out.append(text[cursor:begin])
        else:
            out.append(text[cursor:begin])
            out.append(mask)
        cursor = finish
    out.append(text[cursor:])
    return "".join(out)

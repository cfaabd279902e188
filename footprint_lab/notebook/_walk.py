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
is read through ``redact.base64_words``): :func:`png_texts` (the text chunks of a PNG image:
``tEXt``, ``zTXt``, ``iTXt``), and :func:`unhidden` (the text a reader sees once ANSI escape
codes, HTML comments and characters drawn as nothing are dropped, HTML entities read, tags dropped
where the text is drawn as HTML or markdown, and direction overrides applied; each position mapped
back to the raw text, so a match found in the reading is masked in the raw text, tags kept). The
reading runs in one pass over a text, whatever it holds. nbformat's own words (a cell's or an
output's kind, metadata field names) are never rewritten, and a cell id a policy matches is
replaced by a fresh one, so a scrubbed notebook still validates.

Role: lab layer (``footprint_lab.notebook``); pure functions over notebook data.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import secrets
import string
import uuid
import zlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Protocol

from footprint_lab.notebook.read import WIDGET_STATE_MIME
from footprint_lab.record.schema import RECORDING_MIME
from footprint_lab.record.unicode import DIRECTION_CONTROLS, display_order, invisible_class

#: where each part of a cell or an output is reported (a part not named here goes by its own key)
_CELL_PARTS = {"source": "source", "metadata": "cell metadata", "attachments": "attachments"}
_OUTPUT_PARTS = {"text": "text", "traceback": "error", "evalue": "error", "ename": "error",
                 "metadata": "output metadata"}
#: parts nbformat may store as a list of lines: read joined, so a match across two lines is found
_MULTILINE = frozenset({"source", "text"})
#: the notebook format's own words: a cell's and an output's kind are never read (no policy may rewrite
#: them), nor is the name of a field nbformat defines in metadata (``kernelspec``, ``tags``...), nor
#: ``scrolled: "auto"``
_FIXED = frozenset({"cell_type", "output_type"})
_SCHEMA_KEYS = frozenset({
    "authors", "codemirror_mode", "collapsed", "deletable", "display_name", "editable", "execution",
    "file_extension", "format", "iopub.execute_input", "iopub.status.busy", "iopub.status.idle", "isolated",
    "jupyter", "kernelspec", "language_info", "mimetype", "name", "orig_nbformat", "outputs_hidden",
    "pygments_lexer", "scrolled", "shell.execute_reply", "source_hidden", "tags", "title", "widgets"})


class Layer(str):
    """A step of a :class:`Spot`'s path that names a layer read through (``(base64)``), not a key."""

    __slots__ = ()


class Spot(NamedTuple):
    """Where a value sits: ``cell`` and ``output`` indices (``None`` for the notebook's metadata), the
    ``where`` part (``source``, ``data[image/png]``, ``widget <id>``...), and the ``path`` inside it
    (keys, list indices and the layers undone, such as ``(base64)``), and how a reader sees its text
    (``reading``: plain, ``html`` or ``markdown``, see :func:`unhidden`)."""

    cell: int | None
    output: int | None
    where: str
    path: tuple[Any, ...] = ()
    reading: str = ""

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

    def keeps(self, text: str) -> bool:
        """Whether ``text`` is left as it is (a fresh cell id must be)."""


def walk(notebook: dict[str, Any], visitor: Visitor) -> dict[str, Any]:
    """The notebook with each value replaced by what ``visitor`` gives back (parts it leaves as they
    are stay the very same objects); the notebook given is not changed."""
    out = dict(notebook)
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = _metadata(metadata, visitor)
    cells = notebook.get("cells")
    if isinstance(cells, list):
        ids = {cell.get("id") for cell in cells if isinstance(cell, dict)}
        out["cells"] = [_cell(cell, index, visitor, ids) if isinstance(cell, dict)
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
    models = {_key(model_id, top, visitor): value(model, Spot(None, None, f"widget {model_id}",
                                                             reading=HTML if _draws_html(model) else PLAIN), visitor)
              for model_id, model in state.items()}
    rest_block = value({k: v for k, v in block.items() if k != "state"}, top.deeper("widgets").deeper(
        WIDGET_STATE_MIME), visitor)
    rest_widgets = value({k: v for k, v in widgets.items() if k != WIDGET_STATE_MIME}, top.deeper("widgets"), visitor)
    rest = value({k: v for k, v in metadata.items() if k != "widgets"}, top, visitor)
    return {**rest, "widgets": {**rest_widgets, WIDGET_STATE_MIME: {**rest_block, "state": models}}}


def _draws_html(model: Any) -> bool:
    """Whether a saved widget draws its value as HTML (``HTMLModel``, ``HTMLMathModel``)."""
    state = model.get("state") if isinstance(model, dict) else None
    return isinstance(state, dict) and "HTML" in str(state.get("_model_name", ""))


def _markup(mime: str) -> str:
    """How a reader sees text of a MIME type: markdown, HTML (SVG and XML too), or plain."""
    kind = mime.lower().split(";")[0].strip()
    if kind == "text/markdown":
        return MARKDOWN
    return HTML if kind.endswith(("html", "xml", "svg")) else PLAIN


def _cell(cell: dict[str, Any], index: int, visitor: Visitor, ids: set[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in cell.items():
        if key == "outputs" and isinstance(item, list):
            out[key] = [_output(output, index, n, visitor) if isinstance(output, dict)
                        else value(output, Spot(index, n, "output"), visitor) for n, output in enumerate(item)]
            continue
        spot = Spot(index, None, _CELL_PARTS.get(key, str(key)),
                    reading=MARKDOWN if key == "source" and cell.get("cell_type") == "markdown" else PLAIN)
        if key in _FIXED:
            out[key] = item
        elif key == "id" and isinstance(item, str):
            out[key] = item if visitor.text(item, spot) == item else _fresh_id(visitor, ids)
        elif key == "attachments" and isinstance(item, dict):
            out[key] = _attachments(item, spot, visitor)
        else:
            out[key] = _structural(key, item, value(_joined(item) if key in _MULTILINE else item, spot, visitor))
    return out


def _fresh_id(visitor: Visitor, ids: set[Any]) -> str:
    """A new cell id (as nbformat makes them: eight hex digits, else eight letters), unique in the notebook
    and left as it is by the policy; the first tried when the policy leaves none."""
    tries = [uuid.uuid4().hex[:8] for _ in range(4)] + ["".join(secrets.choice(string.ascii_lowercase)
                                                                 for _ in range(8)) for _ in range(4)]
    fresh = next((t for t in tries if t not in ids and visitor.keeps(t)), tries[0])
    ids.add(fresh)
    return fresh


def _attachments(item: dict[str, Any], spot: Spot, visitor: Visitor) -> dict[str, Any]:
    """A cell's attachments: each file's name read as text, each file's data (lines joined) read as its
    MIME type is drawn; the MIME types themselves are never rewritten."""
    out: dict[Any, Any] = {}
    for name, bundle in item.items():
        shown = _distinct(_key(name, spot, visitor), out, len(item))
        if isinstance(bundle, dict):
            out[shown] = {mime: value(_joined(data), spot.deeper(name).deeper(mime)._replace(reading=_markup(mime)),
                                      visitor) for mime, data in bundle.items()}
        else:
            out[shown] = value(bundle, spot.deeper(name), visitor)
    return out


def _structural(key: str, given: Any, masked: Any) -> Any:
    """A cell's or an output's field as masked, kept valid for nbformat: a matched execution count becomes
    ``None`` (a count, not text), and masked tags that became alike are kept once."""
    if key == "execution_count":
        return given if masked is given else None
    if key == "metadata" and masked is not given and isinstance(masked, dict) and isinstance(masked.get("tags"), list):
        tags = masked["tags"]
        masked["tags"] = [tag for n, tag in enumerate(tags) if tag not in tags[:n]]
    return masked


def _output(output: dict[str, Any], cell: int, index: int, visitor: Visitor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in output.items():
        if key == "data" and isinstance(item, dict):
            data = {}
            for mime, carried in item.items():
                if mime == RECORDING_MIME:  # masked as a recording, so it still loads
                    data[mime] = visitor.recording(carried, Spot(cell, index, "recording"))
                else:
                    data[mime] = value(_joined(carried), Spot(cell, index, f"data[{mime}]", reading=_markup(mime)),
                                       visitor)
            out[key] = data
            continue
        spot = Spot(cell, index, _OUTPUT_PARTS.get(key, str(key)))
        out[key] = item if key in _FIXED else _structural(key, item, value(_joined(item) if key in _MULTILINE
                                                                           else item, spot, visitor))
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
            if key == "scrolled" and inner == "auto":  # one of nbformat's three words for it, never a secret
                new = inner
            elif isinstance(key, str) and inner is not None and visitor.covers(key):
                new = visitor.keyed(key, inner, inner_spot)
            else:
                new = value(inner, inner_spot, visitor)
            shown = _distinct(_key(key, spot, visitor), out, len(item))
            out[shown] = new
            changed = changed or new is not inner or shown != key
        return out if changed else item
    if isinstance(item, list):
        items = [value(inner, spot.deeper(n), visitor) for n, inner in enumerate(item)]
        return items if any(new is not old for new, old in zip(items, item, strict=True)) else item
    return item


def _key(key: Any, spot: Spot, visitor: Visitor) -> Any:
    """A mapping key, read as text too (a secret can be a key); a name nbformat defines is never rewritten."""
    return visitor.text(key, spot.through("key")) if isinstance(key, str) and key not in _SCHEMA_KEYS else key


def _distinct(shown: Any, taken: dict[Any, Any], size: int) -> Any:
    """``shown``, or ``shown#2``...: two keys masked alike stay two entries."""
    if shown not in taken:
        return shown
    return next(f"{shown}#{n}" for n in range(2, size + 2) if f"{shown}#{n}" not in taken)


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


# -- what a reader sees -------------------------------------------------------------------------
#: a text is read as plain text (``""``), as HTML (tags drawn as nothing) or as markdown (HTML, and
#: the backslash of an escape and the emphasis and code marks too)
PLAIN, HTML, MARKDOWN = "", "html", "markdown"
#: elements a browser draws on a line of their own: read as a line break, so text on two sides is never joined
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p",
    "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"})
#: what is dropped or read in every text: ANSI codes, HTML comments as a browser ends them ("<!-->" and
#: "<!--->" are whole, empty ones, "--!>" ends one too, and an unclosed one runs to the end), entities
#: (any count of digits), and a run of characters drawn as nothing
_EVERYWHERE = (
    r"(?P<ansi>\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_])"
    r"|(?P<comment><!--(?:-?>|.*?(?:--!?>|\Z)))"
    r"|(?P<entity>&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});?)"
    r"|(?P<invisible>[{invisible}]+)"
)
#: what needs a ">" to close it: "<!...>" and "<?...>" (comments of their own), and in markup a tag, whose
#: quoted attribute values may hold a ">" (``<span title="a>b">``); a tag whose quoted value holds the last ">"
#: runs to the end, as a browser reads it: possessive and never failing, so each tag is read once
_CLOSED = {PLAIN: r"|(?P<comment2><[!?][^>]*>)",
           HTML: r"|(?P<comment2><[!?][^>]*>)|(?P<tag></?([A-Za-z][A-Za-z0-9-]*)"
                 r"""(?:[^>"'=]++|=\s*+"[^"]*+"|=\s*+'[^']*+'|["'=])*+(?:>|\Z))"""}
_CLOSED[MARKDOWN] = _CLOSED[HTML]
#: markdown's marks a reader does not see: the backslash of an escape, emphasis, strike-through and code marks,
#: and a link's brackets and destination (``[sk-ab](https://x)cd`` reads ``sk-abcd``; each scan stops at a bracket,
#: a parenthesis or a space, so the reading stays one pass)
_MARKS = (r"|(?P<mark>\\(?=[!-/:-@\[-`{-~])|[*_~`]+|!?\[|\]\([^()\s]*\)|\]\[[^\[\]\s]*\])")


@functools.cache
def _reader(reading: str, closed: bool) -> re.Pattern[str]:
    """The tokens a text is read through in ``reading``; ``closed``: with those a ">" must close (read only
    where one still follows, so a text full of unclosed "<!" or "<a" is read in one pass, never in a quadratic one)."""
    body = _EVERYWHERE.replace("{invisible}", invisible_class()) + (_CLOSED[reading] if closed else "")
    return re.compile(body + (_MARKS if reading == MARKDOWN else ""), re.S)


def _entity(token: str) -> str:
    """What a browser shows for an HTML entity: a numeric one read past its leading zeros, and one too
    large for any character (more digits than int() takes, too) as U+FFFD."""
    numeric = _NUMERIC.fullmatch(token)
    if numeric is None:
        return html.unescape(token)
    base, digits = numeric.groups()
    return html.unescape(f"&#{base}{digits or '0'};") if len(digits) <= 8 else "\ufffd"


_NUMERIC = re.compile(r"&#([xX]?)0*([0-9a-fA-F]*);?")


def _tokens(text: str, reading: str) -> Iterator[re.Match[str]]:
    """The tokens of ``text``, in order: up to its last ">" with those a ">" closes, after it without them."""
    last = text.rfind(">") + 1
    if last and text.find("<", last) == -1:  # nothing could open after the last ">": one pass over all
        last = len(text)
    head = _reader(reading, closed=True).finditer(text, 0, last)
    for found in head:
        if found.lastgroup == "comment" and found.end() == last < len(text) and not _ended(found.group()):
            return  # an unclosed comment, cut at the last ">": it runs to the end, nothing after it is read
        yield found
    yield from _reader(reading, closed=False).finditer(text, last)


def _ended(comment: str) -> bool:
    return comment in ("<!-->", "<!--->") or comment.endswith(("-->", "--!>"))


class _Reading(NamedTuple):
    """What a reader sees of a text, and where each part of it came from there: per piece, its start in
    the reading and the span it stands for in the text (a literal piece maps character by character)."""

    text: str
    starts: list[int]
    sources: list[tuple[int, int, bool]]
    tags: list[tuple[int, int]]  # the tags of the text (kept when the text around them is masked)
    drawn: bool  # whether direction controls put the reading in another order than the text's

    def span(self, start: int, stop: int) -> tuple[int, int, bool]:
        """The span of the text that the reading's ``start:stop`` was drawn from (the smallest that holds it
        all), and whether it is drawn backwards there (its last character comes first in the text)."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, stop - 1) - 1
        begins, ends = [], []
        for piece in range(first, last + 1):
            at, (raw_begin, raw_end, literal) = self.starts[piece], self.sources[piece]
            if literal:
                begins.append(raw_begin + max(start, at) - at)
                ends.append(raw_begin + min(stop, at + raw_end - raw_begin) - at)
            else:
                begins.append(raw_begin)
                ends.append(raw_end)
        return min(begins), max(ends), begins[0] > begins[-1]


def _read(text: str, reading: str) -> _Reading | None:
    """``text`` as a reader sees it (``None`` when that is the text itself): ANSI codes, comments and
    characters drawn as nothing dropped, entities read, tags dropped in markup (a line break for an element
    drawn on a line of its own), markdown's marks dropped, and direction controls applied."""
    pieces: list[tuple[str, int, int, bool]] = []  # what is read, the span of the text it stands for, literal
    tags: list[tuple[int, int]] = []
    at = 0
    for found in _tokens(text, reading):
        begin, end = found.span()
        if begin > at:
            pieces.append((text[at:begin], at, begin, True))
        kind, token = found.lastgroup, found.group()
        if kind == "entity":
            shown = "".join(char for char in _entity(token)
                            if char in DIRECTION_CONTROLS or not _drawn_as_nothing(char))
            if shown:
                pieces.append((shown, begin, end, shown == token))
        elif kind == "invisible":  # each direction control kept to be applied; the rest is dropped
            pieces.extend((char, begin + k, begin + k + 1, True) for k, char in enumerate(token)
                          if char in DIRECTION_CONTROLS)
        elif kind == "tag":
            tags.append((begin, end))
            if found.group(found.re.groupindex["tag"] + 1).lower() in _BLOCKS:
                pieces.append(("\n", begin, end, False))
        at = end
    if at == 0 and not pieces and not tags:
        return None
    if at < len(text):
        pieces.append((text[at:], at, len(text), True))
    shown = "".join(piece[0] for piece in pieces)
    drawn = any(char in DIRECTION_CONTROLS for char in shown)
    if drawn:  # one piece per character, in the order they are drawn (the controls themselves left out)
        chars = [(char, b + k, b + k + 1, True) if literal else (char, b, e, False)
                 for piece, b, e, literal in pieces for k, char in enumerate(piece)]
        pieces = [chars[k] for k in display_order(shown)]
    starts, length = [], 0
    for piece in pieces:
        starts.append(length)
        length += len(piece[0])
    return _Reading("".join(piece[0] for piece in pieces), starts, [p[1:] for p in pieces], tags, drawn)


def _drawn_as_nothing(char: str) -> bool:
    return _invisible().fullmatch(char) is not None


@functools.cache
def _invisible() -> re.Pattern[str]:
    return re.compile(f"[{invisible_class()}]")


def unhidden(text: str, hits: Callable[[str], list[tuple[int, int, str]]], reading: str = PLAIN) -> str:
    """``text`` with what ``hits`` finds in what a reader sees of it (:func:`_read`) masked where it sits in
    the text: a match spread over ``&#115;k-...``, ``sk-<!-- -->...``, ``sk-<b>...</b>``, ``sk-\\u200b...``,
    ``sk-\\x1b[0m...`` or typed backwards after U+202E is replaced whole, from its first character to its
    last in the text. Tags inside stay (the markup around and between is kept); what is masked inside a
    right-to-left override is written inside an isolate, so the mask reads the right way round."""
    read = _read(text, reading)
    if read is None:
        return text
    spans = sorted((*read.span(start, stop), mask) for start, stop, mask in hits(read.text) if stop > start)
    if not spans:
        return text
    out: list[str] = []
    cursor = 0
    for begin, finish, backwards, mask in spans:
        if finish <= cursor:  # inside the match before: masked already
            continue
        kept = "".join(text[b:e] for b, e in read.tags if max(begin, cursor) <= b and e <= finish)
        if begin < cursor:
            out.append(kept)
        else:
            out.append(text[cursor:begin])
            out.append((f"\u2066{mask}\u2069" if backwards else mask) + kept)
        cursor = finish
    out.append(text[cursor:])
    return "".join(out)

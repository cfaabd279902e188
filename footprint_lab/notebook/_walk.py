"""Every string of a notebook, with where it sits: the one walk ``scan`` and ``scrub`` share.

Rule kept here: no corner of a notebook is left unread. :func:`walk` visits the notebook's
metadata (its saved widget state model by model), every cell's source, metadata and
attachments, and every output's text, error, metadata and data under every MIME type, custom
ones included, down to each string, number and key of the JSON they hold; each with a
:class:`Spot` (cell, output, the part, the field path inside it, and how a reader sees its text:
plain, HTML or markdown). A value under a key the visitor covers is handed over whole; a saved
recording is handed over as one piece (it is masked as a recording, so it still loads).
nbformat's own words (a cell's or an output's kind, metadata field names) are never rewritten,
and a cell id a policy matches is replaced by a fresh one, so a scrubbed notebook still validates.

The layers a string can hide text in, read inside it by the visitor (each undone and done again;
base64 is read through ``redact.base64_words``), are their own modules: the text chunks of a PNG
image (:mod:`footprint_lab.notebook._png_text`) and the text a reader sees once what is drawn as
nothing is dropped (:mod:`footprint_lab.notebook._unhidden`).

Role: lab layer (``footprint_lab.notebook``); pure functions over notebook data.
"""

from __future__ import annotations

import secrets
import string
import uuid
from typing import Any, NamedTuple, Protocol, cast

from footprint_lab.notebook._unhidden import HTML, MARKDOWN, PLAIN
from footprint_lab.notebook.read import WIDGET_STATE_MIME
from footprint_lab.record.schema import RECORDING_MIME

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
    (``reading``: plain, ``html`` or ``markdown``, see :func:`~footprint_lab.notebook._unhidden.unhidden`)."""

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
        return cast("dict[str, Any]", value(metadata, top, visitor))
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

"""What every lab view shares: escaping, per-output scoping, anchors, and the one style sheet.

Rule kept here: every string that came from a model, a tool, a user, a document or a
declaration is written through :func:`esc` (text) or :func:`attr` (an attribute's value), the
engine's one door for drawing values (:mod:`footprint_lab.engine.markup`: escaped, quotes
included, bounded, invisible controls shown), and no view carries JavaScript. Each output
gets its own id (``fl-`` and ten hex digits), its CSS is written under that id (pandas
``Styler`` does the same), and every in-page anchor is prefixed with it, so two outputs in
one notebook never restyle each other or share a link target.

Role: lab layer, used by the views in this package only.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import TypeVar

# the views take the drawing doors from here, with the rest of the page
from footprint_lab.engine.markup import attr as attr
from footprint_lab.engine.markup import esc as esc
from footprint_lab.explain._render import shorten as shorten

T = TypeVar("T")

#: one colour per source kind of a context piece (the answer view's rows, the tree's legend)
KIND_COLOURS = {
    "base": "#6e7781", "fact": "#0969da", "steering": "#8250df", "instruction": "#bf3989", "skill": "#1a7f37",
    "memory": "#9a6700", "rag": "#0a7ea4", "user": "#24292f", "assistant": "#57606a", "tool_result": "#bc4c00",
    "registry": "#6639ba",
}
STATUS_COLOURS = {"finished": "#1a7f37", "failed": "#cf222e", "paused": "#9a6700"}
CORRELATIONAL = ("Ranks are correlational: a high rank says the piece resembles the answer, not that it caused "
                 "it; localize() confirms a cause by rerunning without it.")

_CSS = """
§{font:13px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2328;background:#fff;max-width:64rem}
§ code,§ pre,§ .fl-piece li a{font-family:ui-monospace,Menlo,monospace;font-size:12px}
§ pre{white-space:pre-wrap;word-break:break-word;margin:.2rem 0;background:#f6f8fa;padding:.35rem .5rem;
border-radius:4px;max-height:22rem;overflow:auto}
§ .fl-head{display:flex;flex-wrap:wrap;gap:.25rem .6rem;align-items:baseline;margin-bottom:.3rem}
§ .fl-head b{font-size:14px}
§ .fl-muted,§ .fl-note{color:#59636e}
§ .fl-note{font-size:12px;margin:.2rem 0}
§ .fl-answer pre{background:none;padding:0;font:inherit}
§ .fl-tag,§ .fl-flag,§ mark{font-size:11px;white-space:nowrap}
§ h4{margin:.7rem 0 .2rem;font-size:13.5px}
§ h5{margin:.4rem 0 .1rem;font-size:11px;text-transform:uppercase;color:#59636e}
§ summary{cursor:pointer}
§ .fl-piece{background:#fafbfc;margin:2px 0}
§ .fl-piece[open]{background:#f6f8fa}
§ .fl-piece>summary{padding:2px 6px;display:flex;gap:.5rem;align-items:baseline}
§ .fl-piece>summary>i{font:600 11px sans-serif;min-width:5.5rem}
§ .fl-piece>summary>code{font-weight:600}
§ .fl-piece>summary>span{color:#59636e;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;flex:1}
§ .fl-piece>summary>small{color:#59636e;white-space:nowrap}
§ .fl-piece>pre,§ .fl-piece>ol,§ .fl-piece>ul{margin:.2rem .6rem .4rem 1.4rem}
§ .fl-piece ol,§ .fl-piece ul,§ .fl-hops{list-style:none;padding:0}
§ .fl-piece li b,§ .fl-hops b{display:inline-block;min-width:4.6rem;font:600 11px monospace}
§ .fl-box{border:1px solid #d0d7de;border-radius:6px;padding:.2rem .6rem;margin:.4rem 0}
§ .fl-box>summary{font-weight:600}
§ table{border-collapse:collapse;margin:.3rem 0;font-size:12px}
§ td,§ th{border:1px solid #d8dee4;padding:1px 6px;text-align:left;vertical-align:top}
§ .fl-tree,§ .fl-tree ul{list-style:none;margin:0;padding-left:1.1rem;border-left:1px dashed #d0d7de}
§ .fl-tree{padding-left:.2rem;border-left:none}
§ .fl-edge{font-size:11px;color:#8250df}
§ .fl-member-body{border:1px solid #d0d7de;border-radius:6px;padding:.3rem .6rem;margin:.2rem 0 .4rem}
"""


def new_scope() -> str:
    """A fresh id for one output (``fl`` and six hex digits): its CSS and its anchors live under it."""
    return "fl" + uuid.uuid4().hex[:6]


def style(scope: str) -> str:
    """The style sheet of the lab views, scoped to the output ``scope``."""
    return "<style>" + _CSS.replace("§", f"#{scope}").replace("\n", "") + "</style>"


def wrap(scope: str, body: str, *, css_class: str = "fl-view") -> str:
    """One self-contained output: its scoped style sheet and its body."""
    return f'<div id="{scope}" class="{css_class}">{style(scope)}{body}</div>'


_UNSAFE = re.compile(r"[^A-Za-z0-9-]")
_SHORT = {"#": "_", "/": "."}


def anchor(scope: str, kind: str, key: str) -> str:
    """An element id under ``scope`` for ``key`` (a step id, a mount path), made of safe characters only.

    A step id's ``#`` and ``/`` become ``_`` and ``.``; anything else outside letters, digits
    and ``-`` becomes ``_xx.`` (its code point in hex).
    """
    return f"{scope}-{kind}-" + _UNSAFE.sub(lambda m: _SHORT.get(m.group()) or f"_{ord(m.group()):x}.", key)


#: A long list in a view (a slot's pieces, a run's steps) draws its first FIRST_DRAWN items and its
#: latest ones, LONG_LIST in all; the views count what is left out and name the method that shows it.
LONG_LIST = 40
FIRST_DRAWN = 5


def not_drawn(items: Sequence[T]) -> Sequence[T]:
    """The middle of ``items`` a view leaves out (nothing for a list of at most LONG_LIST)."""
    return items[FIRST_DRAWN:FIRST_DRAWN - LONG_LIST] if len(items) > LONG_LIST else items[:0]


# -- looks that carry meaning ------------------------------------------------------------
# A colour that says something (a piece's source kind, a status, a finding, the answer itself)
# is written on its element, not in the style sheet: JupyterLab strips ``<style>`` blocks from
# the outputs of a notebook it does not trust yet (one someone else saved and shared) but keeps
# ``style`` attributes, so a shared view still says what it said. Layout stays in the sheet.

GREY = "#6e7781"
#: the answer box's background where the run did not finish (its edge is the status colour)
_ANSWER_FILLS = {"paused": "#fff8e5", "failed": "#fff5f5"}
UNPROVEN = ' <span class="fl-unproven" style="color:#cf222e">[not proven]</span>'


def kind_style(kind: str) -> str:
    """The inline style that colours a piece's row by its source kind."""
    return f"border-left:4px solid {KIND_COLOURS.get(kind, GREY)}"


def kind_label(kind: str) -> str:
    """A piece's source kind, in its kind's colour."""
    return f'<i style="color:{KIND_COLOURS.get(kind, GREY)}">{esc(kind)}</i>'


def tag(text: str, status: str | None = None, extra: str = "") -> str:
    """A badge: ``text`` (escaped here) in white on the status colour (grey with none), with ``extra`` attributes."""
    css_class = f"fl-tag fl-st-{attr(status)}" if status else "fl-tag"
    return (f'<span class="{css_class}" style="border-radius:10px;padding:0 7px;color:#fff;'
            f'background-color:{STATUS_COLOURS.get(status or "", GREY)}"{extra}>{esc(text)}</span>')


def flag(kind: str) -> str:
    """The badge of one kind of integrity finding."""
    return (f'<span class="fl-flag" style="display:inline-block;margin-left:4px;border-radius:8px;padding:0 6px;'
            f'color:#fff;background-color:#bc4c00">{esc(kind)}</span>')


def mark(text: str) -> str:
    """A highlighted note beside a row (a suspect rank), ``text`` escaped here."""
    return f'<mark style="background-color:#fff1e5;border-radius:8px;padding:0 6px;color:#953800">{esc(text)}</mark>'


def answer_box(status: str, inner: str, hooks: str = "") -> str:
    """The answer (or the pause, or the failure) in its box; ``inner`` is HTML already escaped, ``hooks`` attributes."""
    unfinished = status in _ANSWER_FILLS
    border = STATUS_COLOURS[status] if unfinished else "#0969da"
    background = _ANSWER_FILLS[status] if unfinished else "#f3f8ff"
    css_class = f"fl-answer fl-{status}" if unfinished else "fl-answer"
    return (f'<div class="{css_class}" style="border-left:4px solid {border};background-color:{background};'
            f'padding:.35rem .6rem;margin:.35rem 0"{hooks}>{inner}</div>')

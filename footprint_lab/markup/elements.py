"""Values drawn in a view: escaped for HTML, bounded in size, with nothing invisible left in them.

Rule kept here: every value a view writes that came from a model, a tool, a user, a document,
a declaration or a file goes through one of these doors, and nothing else writes one.

- :func:`esc` for text between tags: ``&``, ``<``, ``>`` and ``"`` escaped, so even written
  by mistake into a double-quoted attribute it cannot end it;
- :func:`attr` for an attribute's value: both quotes escaped too, inert in an attribute
  quoted either way;
- :func:`shown` for text a page writes as text itself (the widget's ``textContent``, a live
  step's row): bounded and made visible, not escaped.

On these doors sits the one small HTML-building layer every view uses: :func:`el` writes an
element whose attribute values go through :func:`attr` and whose children go through
:func:`esc`, except those already :class:`Html` (markup this library wrote, from :func:`el`,
:func:`raw` or :func:`join`), and :func:`css` writes an inline style from the one theme's
values (:mod:`footprint_lab.markup.theme`). A view built with them cannot leave a value
unescaped by forgetting to.

``&quot;`` arriving already encoded is shown as typed. All three draw a direction control or
a control character as a visible mark (:func:`footprint_lab.base.unicode.visible`; in an
attribute where the browser shows it, see :func:`attr`), and draw at most
:data:`TEXT_LIMIT` characters of one value: its beginning, under a note that says how much
there is and names where all of it is (``whole``: ``run.answer``,
``run.context("call-llm#2")``...). Bounding here, on the one path every value takes, keeps
every view, the widget's saved state and a display bundle small however large one answer or
tool result is; the evidence itself keeps the whole value.

Role: markup layer (the lab's views, its cards, the exported page and the explain layer's
plain bundles all write through it); imports nothing above the engine.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from footprint_lab.base.unicode import MARKS, visible
from footprint_lab.markup import theme

#: the most characters of one value a view draws
TEXT_LIMIT = 20_000
#: where the rest of a value is, when a view does not say
RECORDED = "the run's recording"
#: in HTML text, a mark is a small red badge, so it cannot pass for characters the value holds
_BADGES = {code: (f'<span class="fl-mark" style="font-size:.8em;color:{theme.RED};background-color:{theme.RED_TINT};'
                  f'border-radius:3px;padding:0 2px">{mark}</span>') for code, mark in MARKS.items()}


def clipped(text: str, limit: int = TEXT_LIMIT, whole: str = RECORDED) -> str:
    """``text`` cut to its first ``limit`` characters, under a note naming ``whole``, where all of it is.

    The note comes first: a view draws a long value in a box that scrolls, and the reader
    learns that the value goes on before reading any of it.
    """
    if len(text) <= limit:
        return text
    return f"[the first {limit:,} of {len(text):,} characters; {whole} holds all of them]\n{text[:limit]}…"


def shown(value: Any, *, limit: int = TEXT_LIMIT, whole: str = RECORDED) -> str:
    """``value`` as text a page writes as text (not markup): bounded, every invisible control made a mark."""
    return visible(clipped(value if isinstance(value, str) else str(value), limit, whole))


def esc(value: Any, *, limit: int = TEXT_LIMIT, whole: str = RECORDED, badges: bool = True) -> str:
    """``value`` as HTML text: bounded (see :func:`clipped`), every special character escaped, and each
    invisible control a small badge (``badges=False``: its plain mark, for text that holds no
    element: a ``<title>``, a plotly label, a markdown line)."""
    text = value if isinstance(value, str) else str(value)
    escaped = html.escape(clipped(text, limit, whole), quote=False).replace('"', "&quot;")
    return visible(escaped, _BADGES if badges else MARKS)


def attr(value: Any, *, drawn: bool = False, limit: int | None = TEXT_LIMIT) -> str:
    """``value`` as an attribute's text, inside double or single quotes alike (quotes escaped too).

    Most attributes are hooks (``data-fl-piece``, an anchor): never drawn, read back by the
    widget and sent to the kernel, so they keep the value as it is and a click names exactly
    the piece, call or member it was written for. One the browser shows (a ``title``'s
    tooltip) is ``drawn=True``: its controls become visible marks, as in text. An attribute
    has no room for a note: past ``limit`` characters it ends with ``…``; ``limit=None`` is
    for data that must arrive whole (an image's ``data:`` URI).
    """
    text = value if isinstance(value, str) else str(value)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return html.escape(visible(text) if drawn else text, quote=True)


# -- building elements ------------------------------------------------------------------


class Html(str):
    """Markup this library wrote: :func:`el` and :func:`join` insert it as it is, and escape any other text."""

    __slots__ = ()


def raw(markup: str) -> Html:
    """``markup`` (written by this library, never a value from outside) marked as HTML to insert as it is."""
    return Html(markup)


def _child(value: Any) -> str:
    if value is None or value is False:
        return ""
    return value if isinstance(value, Html) else esc(value)


def join(parts: Iterable[Any], sep: str = "") -> Html:
    """``parts`` one after the other (text escaped, :class:`Html` as it is), ``sep`` (markup) between them."""
    return Html(sep.join(_child(part) for part in parts))


def el(name: str, *children: Any, **attrs: Any) -> Html:
    """``<name attrs>children</name>``: children escaped unless :class:`Html`; an attribute is left out when
    ``None`` or ``False``, written bare when ``True``, as it is when :class:`Html` (already escaped by
    :func:`attr`); ``class_`` is ``class``, and ``_`` in a name is ``-``
    (``data_fl_piece`` is ``data-fl-piece``). A ``title`` is drawn (its controls made visible marks)."""
    return Html(f"{start(name, *children, **attrs)}</{name}>")


def start(name: str, *children: Any, **attrs: Any) -> Html:
    """``<name attrs>children`` with no end tag, as :func:`el` writes it otherwise: for an element whose end tag
    HTML lets a page leave out (a table's row or cell), where a long table is a third smaller without them."""
    written = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name_ = key.rstrip("_").replace("_", "-")
        if value is True:
            written.append(f" {name_}")
        elif isinstance(value, Html):  # a value this library escaped itself (an image's whole data: URI)
            written.append(f' {name_}="{value}"')
        else:
            written.append(f' {name_}="{attr(value, drawn=name_ == "title")}"')
    return Html(f"<{name}{''.join(written)}>{join(children)}")


def css(**properties: Any) -> str:
    """An inline style from keyword properties (``border_left="4px solid ..."``), ``None`` ones left out.

    A value that reads a palette variable (``var(--fl-blue, <light value>)``) is written twice, its plain colour
    first: a sanitizer that drops what it cannot read (JupyterLab's, on a notebook it does not trust) keeps
    the plain one, and a browser that reads both takes the variable, so the view follows the page's theme.
    """
    written = []
    for key, value in properties.items():
        if value is None:
            continue
        name = key.replace("_", "-")
        plain = _PALETTE_VARIABLE.sub(r"\1", str(value))
        if plain != str(value):
            written.append(f"{name}:{plain}")
        written.append(f"{name}:{value}")
    return ";".join(written)


_PALETTE_VARIABLE = re.compile(r"var\(--fl-[a-z-]+,(#[0-9a-fA-F]{6})\)")

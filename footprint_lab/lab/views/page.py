"""What every lab view shares: escaping, per-output scoping, anchors, the one style sheet and its badges.

Rule kept here: every string that came from a model, a tool, a user, a document or a
declaration is written through :func:`esc` (text), :func:`attr` (an attribute's value) or
:func:`el` (an element, its children and attributes escaped): the engine's one door for
drawing values (:mod:`footprint_lab.markup.elements`: escaped, quotes included, bounded,
invisible controls shown); and no view carries JavaScript. Each output gets its own id
(``fl`` and six hex digits), its CSS is written under that id (pandas ``Styler`` does the
same), and every in-page anchor is prefixed with it, so two outputs in one notebook never
restyle each other or share a link target. Every colour, font and length comes from the one
theme (:mod:`footprint_lab.markup.theme`).

Role: lab layer, used by the views in this package only.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence
from typing import Any, TypeVar

from footprint_lab.explain.render import shorten as shorten
from footprint_lab.markup import theme, words

# the views take the drawing doors from here, with the rest of the page
from footprint_lab.markup.elements import Html as Html
from footprint_lab.markup.elements import attr as attr
from footprint_lab.markup.elements import css as css
from footprint_lab.markup.elements import el as el
from footprint_lab.markup.elements import esc as esc
from footprint_lab.markup.elements import join as join
from footprint_lab.markup.elements import raw as raw
from footprint_lab.markup.elements import start as start

T = TypeVar("T")

CORRELATIONAL = ("Ranks are correlational: a high rank says the piece resembles the answer, not that it caused "
                 "it; localize() confirms a cause by rerunning without it.")

_CSS = f"""
§{{font:{theme.TEXT}/{theme.LEADING} {theme.FONT};color:{theme.INK};background:{theme.PAPER};max-width:{theme.WIDTH}}}
§ code,§ pre,§ .fl-piece li a{{font-family:{theme.MONO};font-size:{theme.SMALL}}}
§ a{{color:{theme.BLUE}}}
§ pre{{white-space:pre-wrap;word-break:break-word;margin:{theme.SPACE[0]} 0;background:{theme.FILL};
padding:.35rem .5rem;border-radius:4px;max-height:22rem;overflow:auto}}
§ .fl-head{{display:flex;flex-wrap:wrap;gap:.25rem {theme.SPACE[2]};align-items:baseline;margin-bottom:.3rem}}
§ .fl-head b{{font-size:14px}}
§ .fl-muted,§ .fl-note,§ .fl-sep{{color:{theme.GREY}}}
§ code.fl-muted,§ .fl-muted code,§ .fl-note code{{background:none}}
§ .fl-note{{font-size:{theme.SMALL};margin:{theme.SPACE[0]} 0}}
§ .fl-answer pre{{background:none;padding:0;font:inherit}}
§ .fl-tag,§ .fl-flag,§ mark{{font-size:{theme.TINY};white-space:nowrap}}
§ h4{{margin:.7rem 0 {theme.SPACE[0]};font-size:13.5px}}
§ h5{{margin:{theme.SPACE[1]} 0 .1rem;font-size:{theme.TINY};text-transform:uppercase;color:{theme.GREY}}}
§ summary{{cursor:pointer}}
§ .fl-piece{{background:{theme.PAPER};margin:2px 0}}
§ .fl-piece[open]{{background:{theme.FILL}}}
§ .fl-piece>summary{{padding:2px 6px;display:flex;gap:.5rem;align-items:baseline}}
§ .fl-piece>summary>i{{font:600 {theme.TINY} {theme.FONT};min-width:5.5rem}}
§ .fl-piece>summary>code{{font-weight:600}}
§ .fl-piece>summary>span{{color:{theme.GREY};overflow:hidden;text-overflow:ellipsis;white-space:nowrap;flex:1}}
§ .fl-piece>summary>small{{color:{theme.GREY};white-space:nowrap}}
§ .fl-piece>summary>.fl-sep{{display:none}}
§ .fl-piece>pre,§ .fl-piece>ol,§ .fl-piece>ul{{margin:{theme.SPACE[0]} {theme.SPACE[2]} {theme.SPACE[1]} 1.4rem}}
§ .fl-piece ol,§ .fl-piece ul,§ .fl-hops{{list-style:none;padding:0}}
§ .fl-piece li b,§ .fl-hops b{{display:inline-block;min-width:4.6rem;font:600 {theme.TINY} {theme.MONO}}}
§ .fl-box{{border:1px solid {theme.LINE};border-radius:{theme.RADIUS};padding:{theme.SPACE[0]} {theme.SPACE[2]};
margin:{theme.SPACE[1]} 0}}
§ .fl-box>summary{{font-weight:600}}
§ table{{border-collapse:collapse;margin:.3rem 0;font-size:{theme.SMALL};color:inherit}}
§ td,§ th{{border:1px solid {theme.LINE};padding:1px 6px;text-align:left;vertical-align:top}}
"""

#: what a view of members adds (a composition's answer view, a tree)
TREE_CSS = f"""
§ .fl-tree,§ .fl-tree ul{{list-style:none;margin:0;padding-left:1.1rem;border-left:1px dashed {theme.LINE}}}
§ .fl-tree{{padding-left:{theme.SPACE[0]};border-left:none}}
§ .fl-edge{{font-size:{theme.TINY};color:{theme.PURPLE}}}
§ .fl-member-body{{border:1px solid {theme.LINE};border-radius:{theme.RADIUS};padding:.3rem {theme.SPACE[2]};
margin:{theme.SPACE[0]} 0 {theme.SPACE[1]}}}
§ .fl-svg{{display:block;max-width:100%;height:auto}}
"""

#: what an explanation's view adds
ASK_CSS = f"""
§ .fl-ask-q{{color:{theme.GREY}}}
§ .fl-ask-cited,§ .fl-ask-unsupported{{font-family:{theme.MONO};font-size:{theme.SMALL}}}
§ .fl-ask-unsupported{{color:{theme.RED}}}
"""


def new_scope() -> str:
    """A fresh id for one output (``fl`` and six hex digits): its CSS and its anchors live under it."""
    return "fl" + uuid.uuid4().hex[:6]


def style(scope: str, extra: str = "") -> Html:
    """The style sheet of the lab views (and ``extra``: :data:`TREE_CSS`, :data:`ASK_CSS`), scoped to ``scope``.

    Each output carries its own sheet (a notebook keeps outputs apart), so a view writes only the
    rules it can use: a plain run's view leaves out the members' and the explanation's.
    """
    return el("style", raw(theme.dark_rules() + (_CSS + extra).replace("§", f"#{scope}").replace("\n", "")))


def wrap(scope: str, body: str, *, css_class: str = "fl-view", extra: str = "") -> Html:
    """One self-contained output: its scoped style sheet (with ``extra`` rules) and its ``body`` (markup a view
    wrote)."""
    return el("div", style(scope, extra), raw(body), id=scope, class_=css_class)


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
# And no colour says anything alone: each badge is a word (a status with its symbol too), and
# the items of a row are apart by real text (spaces, a " · " or a ": "), so a sanitizer that
# strips every style still leaves a page that reads.

#: the palette's meanings under the names the views and their tests use
KIND_COLOURS = theme.KIND_COLOURS
STATUS_COLOURS = {status: colour for status, (colour, _) in theme.STATUS.items()}
GREY = theme.GREY
#: between two fields of one row, where the style sheet's layout also keeps them apart
SEP = join([" ", el("span", "·", class_="fl-sep"), " "])


def kind_style(kind: str) -> str:
    """The inline style that colours a piece's row by its source kind."""
    return css(border_left=f"4px solid {theme.kind_colour(kind)}")


def tag(text: str, status: str | None = None, **attrs: Any) -> Html:
    """A badge: ``text`` (escaped here) in white on the status colour (grey with none), with ``attrs`` (see ``el``).

    A badge for a status writes its symbol before the word (``✓ finished``) when ``text`` is the status.
    """
    css_class = f"fl-tag fl-st-{status}" if status else "fl-tag"
    word = theme.status_mark(text) if status and text == status else text
    look = css(border_radius="10px", padding="0 7px", color=theme.PAPER, background_color=theme.status_colour(status))
    return el("span", word, class_=css_class, style=look, **attrs)


def kind_tag(kind: str) -> Html:
    """The badge of a run's kind (``agent``, ``sequence`` ...), its meaning on hover."""
    meaning = words.meaning(kind)
    return tag(kind, title=meaning or None)


def flag(kind: str) -> Html:
    """The badge of one kind of integrity finding (its name in brackets, so it reads as a flag unstyled too)."""
    look = css(margin_left="4px", border_radius="8px", padding="0 6px", color=theme.PAPER,
               background_color=theme.ORANGE)
    return join([" ", el("span", f"[{kind}]", class_="fl-flag", style=look)])


def mark(text: str) -> Html:
    """A highlighted note beside a row (a suspect rank), ``text`` escaped here."""
    return el("mark", text, style=css(background_color=theme.ORANGE_TINT, border_radius="8px", padding="0 6px",
                                      color=theme.ORANGE))


#: the answer box's edge and fill, by how the run ended
_ANSWER_LOOKS = {"paused": (theme.AMBER, theme.AMBER_TINT), "failed": (theme.RED, theme.RED_TINT)}


def answer_box(status: str, *inner: Any, **hooks: Any) -> Html:
    """The answer (or the pause, or the failure) in its box, made of ``inner`` (see ``el``), with ``hooks``
    attributes."""
    unfinished = status in _ANSWER_LOOKS
    edge, fill = _ANSWER_LOOKS.get(status, (theme.BLUE, theme.FILL))
    css_class = f"fl-answer fl-{status}" if unfinished else "fl-answer"
    look = css(border_left=f"4px solid {edge}", background_color=fill, padding=".35rem .6rem", margin=".35rem 0")
    return el("div", *inner, class_=css_class, style=look, **hooks)


def table(header: Sequence[str], rows: Sequence[Sequence[object]], *, absent: str = "-") -> Html:
    """A table of values, each escaped; an absent value (``None``, ``NaN``, ``""``) reads as ``absent``."""
    head = el("tr", *(el("th", name) for name in header))
    body = (el("tr", *(el("td", shown_cell(cell, absent)) for cell in row)) for row in rows)
    return el("table", head, *body)


def shown_cell(value: object, absent: str = "-") -> object:
    """A cell's value as a table draws it: ``absent`` where nothing is (``None``, ``NaN``, ``NA``, empty text)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return absent
    if isinstance(value, float) and math.isnan(value):
        return absent
    if type(value).__name__ in ("NAType", "NaTType"):
        return absent
    return value

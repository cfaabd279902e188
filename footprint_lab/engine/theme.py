"""How every view looks: one palette, one type scale, one spacing scale, and what each colour means in words.

Rule kept here: a colour, a font or a length that a view, a card, a widget panel, the tree's
figure or the exported page writes comes from this module, and nothing else names one (a
test reads every style sheet of the package, ``lab.css`` included, against :data:`PALETTE`).
There is one grey for secondary text (:data:`GREY`), one for lines, one for fills.

A colour never says a thing alone: every status has a word and a symbol
(:func:`status_mark`), every source kind is written as its name, so a view read with its style
sheets stripped, or by someone who cannot tell red from green, says the same.

Role: engine layer (the drawing door :mod:`footprint_lab.engine.markup` builds on it); imports nothing.
"""

from __future__ import annotations

# -- the palette --------------------------------------------------------------------------
INK = "#1f2328"      #: text
GREY = "#59636e"     #: secondary text, and a badge that says nothing by its colour
LINE = "#d0d7de"     #: borders and rules
FILL = "#f6f8fa"     #: code, boxes, a neutral background
PAPER = "#ffffff"    #: the page

BLUE = "#0969da"
GREEN = "#1a7f37"
RED = "#cf222e"
AMBER = "#9a6700"
ORANGE = "#bc4c00"
PURPLE = "#8250df"
PINK = "#bf3989"
TEAL = "#0a7ea4"
VIOLET = "#6639ba"
BROWN = "#7d4e00"
#: pale backgrounds under the colours above
BLUE_TINT = "#ddf4ff"
GREEN_TINT = "#dafbe1"
RED_TINT = "#ffebe9"
AMBER_TINT = "#fff8c5"
ORANGE_TINT = "#fff1e5"
PURPLE_TINT = "#fbefff"

#: every colour any style sheet of the package may write
PALETTE = frozenset({INK, GREY, LINE, FILL, PAPER, BLUE, GREEN, RED, AMBER, ORANGE, PURPLE, PINK, TEAL, VIOLET,
                     BROWN, BLUE_TINT, GREEN_TINT, RED_TINT, AMBER_TINT, ORANGE_TINT, PURPLE_TINT})

# -- type and spacing ---------------------------------------------------------------------
FONT = "system-ui,-apple-system,'Segoe UI',sans-serif"
MONO = "ui-monospace,Menlo,monospace"
TEXT = "13px"
SMALL = "12px"
TINY = "11px"
LEADING = "1.45"
#: the spacing scale: a hair, a gap, a margin
SPACE = (".2rem", ".4rem", ".6rem")
RADIUS = "6px"
WIDTH = "64rem"

# -- what colours mean --------------------------------------------------------------------
#: one colour per source kind of a context piece (the answer view's rows, the backtrack)
KIND_COLOURS = {
    "base": GREY, "fact": BLUE, "steering": PURPLE, "instruction": PINK, "skill": GREEN, "memory": AMBER,
    "rag": TEAL, "user": INK, "assistant": BROWN, "tool_result": ORANGE, "registry": VIOLET,
}
#: one colour per kind of run in a tree
RUN_KIND_COLOURS = {
    "agent": BLUE, "llm_call": PURPLE, "sequence": GREEN, "parallel": ORANGE, "conditional": PINK, "loop": AMBER,
    "workflow": TEAL, "graph": VIOLET, "call-llm": PURPLE, "tool": GREY,
}
#: a status's colour and the symbol written beside its word
STATUS = {
    "finished": (GREEN, "✓"), "ok": (GREEN, "✓"), "failed": (RED, "✗"), "error": (RED, "✗"),
    "tool_error": (RED, "✗"), "refused": (RED, "✗"), "paused": (AMBER, "‖"), "running": (BLUE, "…"),
    "cancelled": (GREY, "⊘"), "abandoned": (GREY, "⊘"),
}


def kind_colour(kind: str) -> str:
    """The colour of a source kind (grey for a kind with none)."""
    return KIND_COLOURS.get(kind, GREY)


def status_colour(status: str | None) -> str:
    """The colour of a status (grey for none, or one without a colour)."""
    return STATUS.get(status or "", (GREY, ""))[0]


def status_mark(status: str) -> str:
    """A status as a reader gets it without colour: its symbol and its word (``✓ finished``)."""
    symbol = STATUS.get(status, (GREY, "•"))[1]
    return f"{symbol} {status}"

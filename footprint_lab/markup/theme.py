"""How every view looks: one palette, one type scale, one spacing scale, and what each colour means in words.

Rule kept here: a colour, a font or a length that a view, a card, a widget panel, the tree's
figure or the exported page writes comes from this module, and nothing else names one (a
test reads every style sheet of the package, ``lab.css`` included, against :data:`PALETTE`).
There is one grey for secondary text (:data:`GREY`), one for lines, one for fills.

Two palettes, one set of names: a colour is written as a CSS variable with the light value as
its fallback (``var(--fl-ink,#1f2328)``), and :func:`dark_rules`, written into every output's
sheet, sets the variables to the dark palette wherever the page says it is dark (JupyterLab's
dark themes, VS Code's). So a view follows the notebook's theme, stays readable when carried
somewhere with no sheet at all, and says the same with its styles stripped.

A colour never says a thing alone: every status has a word and a symbol
(:func:`status_mark`), every source kind is written as its name, so a view read with its style
sheets stripped, or by someone who cannot tell red from green, says the same.

Role: markup layer (the drawing door :mod:`footprint_lab.markup.elements` builds on it); imports nothing.
"""

from __future__ import annotations

# -- the palette --------------------------------------------------------------------------
#: the light palette: what a view shows where nothing says the page is dark
LIGHT = {
    "ink": "#1f2328",     # text
    "grey": "#59636e",    # secondary text, and a badge that says nothing by its colour
    "line": "#d0d7de",    # borders and rules
    "fill": "#f6f8fa",    # code, boxes, a neutral background
    "paper": "#ffffff",   # the page
    "blue": "#0969da", "green": "#1a7f37", "red": "#cf222e", "amber": "#9a6700", "orange": "#bc4c00",
    "purple": "#8250df", "pink": "#bf3989", "teal": "#08718f", "violet": "#6639ba", "brown": "#7d4e00",
    # pale backgrounds under the colours above
    "blue_tint": "#ddf4ff", "green_tint": "#dafbe1", "red_tint": "#ffebe9", "amber_tint": "#fff8c5",
    "orange_tint": "#fff1e5", "purple_tint": "#fbefff",
}
#: the dark palette, name for name: every text colour at least 4.5:1 (WCAG AA) on the paper, the fill and its
#: own tint, as in the light one (tests/lab/test_theme.py measures both)
DARK = {
    "ink": "#e6edf3", "grey": "#9198a1", "line": "#3d444d", "fill": "#151b23", "paper": "#0d1117",
    "blue": "#4493f8", "green": "#3fb950", "red": "#f85149", "amber": "#d29922", "orange": "#db6d28",
    "purple": "#ab7df8", "pink": "#db61a2", "teal": "#39c5cf", "violet": "#a371f7", "brown": "#c69026",
    "blue_tint": "#0b2550", "green_tint": "#0f2d1a", "red_tint": "#3c1618", "amber_tint": "#2e2410",
    "orange_tint": "#33200f", "purple_tint": "#271a45",
}


def _colour(name: str) -> str:
    """A colour as every style writes it: the page's palette variable, the light value where none is set."""
    return f"var(--fl-{name.replace('_', '-')},{LIGHT[name]})"


INK, GREY, LINE, FILL, PAPER = map(_colour, ("ink", "grey", "line", "fill", "paper"))
BLUE, GREEN, RED, AMBER, ORANGE = map(_colour, ("blue", "green", "red", "amber", "orange"))
PURPLE, PINK, TEAL, VIOLET, BROWN = map(_colour, ("purple", "pink", "teal", "violet", "brown"))
BLUE_TINT, GREEN_TINT, RED_TINT = map(_colour, ("blue_tint", "green_tint", "red_tint"))
AMBER_TINT, ORANGE_TINT, PURPLE_TINT = map(_colour, ("amber_tint", "orange_tint", "purple_tint"))

def plain(colour: str) -> str:
    """A palette colour as a plain ``#rrggbb`` (its light value), for a renderer that reads no CSS variable
    (a plotly figure draws on its own light paper)."""
    return colour.rsplit(",", 1)[-1].rstrip(")") if colour.startswith("var(") else colour


#: every colour value any style sheet of the package may write, light or dark
PALETTE = frozenset(LIGHT.values()) | frozenset(DARK.values())

#: where a page says it is dark: JupyterLab's dark themes (and pages exported with one), VS Code's dark themes
DARK_PAGES = ('[data-jp-theme-light="false"]', "body.vscode-dark", 'body[data-vscode-theme-kind="vscode-dark"]')


def _declared(palette: dict[str, str]) -> str:
    return ";".join(f"--fl-{name.replace('_', '-')}:{value}" for name, value in palette.items())


def dark_rules(*, follow_system: bool = False) -> str:
    """The style rules that switch every view to the dark palette where the page is dark (:data:`DARK_PAGES`),
    and, with ``follow_system``, where the reader's system asks for dark (a page of our own, opened on its own).

    The palette's variables inherit, so one rule on the page's own element reaches every view in it;
    a view carried somewhere with no such rule shows the light palette (each colour's fallback).
    """
    rules = f"{','.join(DARK_PAGES)}{{{_declared(DARK)}}}"
    if follow_system:
        rules += f"@media (prefers-color-scheme: dark){{:root{{{_declared(DARK)}}}}}"
    return rules


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

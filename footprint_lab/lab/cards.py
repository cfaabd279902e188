"""Error cards: any ``Refusal`` or ``RunFailure`` drawn from its own fields, with no code per class.

A card shows the error's class and ``code``, its teaching message, the typed evidence it
carries (``fields``), and one line that tells the truth about what happened: a refusal says
nothing ran; a run failure says the run had started (steps ran, calls may have been
charged) and where what was done is kept. Every value is drawn through the engine's one
door for values (``markup.elements.el``: escaped, bounded, invisible controls shown), and a
field that is not a plain value (a checkpoint, the error that caused this one) is shown by its shape,
never its contents: an error never quotes the caller's data, so the card cannot either.
A new error class gets its card for free.
"""

from __future__ import annotations

from footprint_lab.base.refusal import CodedError, Refusal, RunFailure, describe_shape
from footprint_lab.markup import theme
from footprint_lab.markup.elements import css, el, raw

_STYLE = el("style", raw(
    f"{theme.dark_rules()}"
    f".fl-card{{font-family:{theme.FONT};font-size:{theme.TEXT};line-height:{theme.LEADING};max-width:56rem;"
    f"margin:.3rem 0;color:{theme.INK}}}"
    f".fl-card .fl-code{{font-family:{theme.MONO}}}"
    ".fl-card h4{margin:0 0 .35rem 0;font-size:14px}"
    ".fl-card p{margin:.2rem 0 .45rem 0}"
    ".fl-card table{border-collapse:collapse;margin:0;color:inherit}"
    ".fl-card td{padding:1px 8px 1px 0;vertical-align:top;text-align:left;border:none;background:none}"
    f".fl-card td:first-child{{color:{theme.GREY}}}"
))


def _box(edge: str, fill: str) -> str:
    """The card's colours, on its element (a notebook opened untrusted drops the sheet: see lab.views.page)."""
    return css(border=f"1px solid {theme.LINE}", border_left=f"4px solid {edge}", border_radius=theme.RADIUS,
               padding=".6rem .9rem", background_color=fill)


_CODE = css(background_color=theme.RED_TINT, border_radius="4px", padding="1px 6px")


_REFUSED = "Nothing ran: the refusal fired at the door, before any step, call or charge."
_FAILED = ("The run had started when this happened: steps before it ran and calls may have been charged. "
           "What was done is kept where the message says; the fields say whether trying again can help.")


def error_card_html(error: CodedError) -> str:
    """The card for one refusal or run failure, as a self-contained HTML fragment (no JavaScript)."""
    rows = [el("tr", el("td", name), el("td", el("code", _shown(value)))) for name, value in error.evidence().items()]
    refused = isinstance(error, Refusal) or not isinstance(error, RunFailure)
    # red for a refusal, orange for a failure during a run; the heading says which in words
    box = _box(theme.RED, theme.RED_TINT) if refused else _box(theme.ORANGE, theme.ORANGE_TINT)
    card = el("div",
              el("h4", "Refused" if refused else "Failed while running", ": ", type(error).__name__, " ",
                 el("span", error.code, class_="fl-code", style=_CODE)),
              el("p", str(error)), el("table", *rows) if rows else None,
              el("p", el("small", _REFUSED if refused else _FAILED)),
              class_="fl-card" if refused else "fl-card fl-failed", role="alert", style=box)
    return _STYLE + card


def _shown(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, CodedError):
        return f"{type(value).__name__} ({value.code})"
    if isinstance(value, BaseException):
        return type(value).__name__
    return describe_shape(value)

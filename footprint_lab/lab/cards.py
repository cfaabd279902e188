"""Refusal cards: any ``Refusal`` drawn from its own fields, with no code per refusal.

A card shows the refusal's class and ``code``, its teaching message, and the typed evidence
it carries (``fields``). Every value is HTML-escaped; a refusal never quotes the caller's
data, so the card cannot either. A new refusal gets its card for free.

A ``RunCheckpointError`` (a failure during a run, not a refusal) gets the same card with its
own heading and footer: the run did work, and its checkpoint keeps it. Evidence that is an
object (a checkpoint, the original error) is named by its kind, never printed whole, so a
conversation held in a checkpoint never lands on the card.
"""

from __future__ import annotations

from html import escape
from typing import Any

from footprint_lab.engine.refusal import Refusal

_STYLE = (
    "<style>"
    ".fl-card{font-family:system-ui,sans-serif;font-size:13px;line-height:1.45;max-width:56rem;"
    "border:1px solid #d0d7de;border-left:4px solid #cf222e;border-radius:6px;padding:.6rem .9rem;"
    "margin:.3rem 0;background:#fff8f8;color:#1f2328}"
    ".fl-card .fl-code{font-family:ui-monospace,monospace;background:#ffebe9;border-radius:4px;padding:1px 6px}"
    ".fl-card h4{margin:0 0 .35rem 0;font-size:14px}"
    ".fl-card p{margin:.2rem 0 .45rem 0}"
    ".fl-card table{border-collapse:collapse;margin:0}"
    ".fl-card td{padding:1px 8px 1px 0;vertical-align:top;text-align:left;border:none;background:none}"
    ".fl-card td:first-child{color:#59636e}"
    "</style>"
)


def refusal_card_html(refusal: Any) -> str:
    """The card for one refusal (or a ``RunCheckpointError``), as a self-contained HTML fragment (no JavaScript)."""
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td><code>{escape(_shown(value))}</code></td></tr>"
        for name, value in refusal.evidence().items()
    )
    evidence = f"<table>{rows}</table>" if rows else ""
    refused = isinstance(refusal, Refusal)
    heading = "Refused" if refused else "Failed during the run"
    footer = ("Nothing ran: the refusal fired at the door, before any step, call or charge." if refused else
              "Work was done before the failure, and err.checkpoint keeps it.")
    return (
        f'{_STYLE}<div class="fl-card" role="alert">'
        f"<h4>{heading}: {escape(type(refusal).__name__)} "
        f'<span class="fl-code">{escape(refusal.code)}</span></h4>'
        f"<p>{escape(str(refusal))}</p>{evidence}"
        f"<p><small>{footer}</small></p>"
        "</div>"
    )


def _shown(value: object) -> str:
    if value is None or isinstance(value, str | int | float | bool):
        return value if isinstance(value, str) else repr(value)
    if isinstance(value, list | tuple) and all(isinstance(v, str | int | float) for v in value):
        return repr(value)
    if isinstance(value, BaseException):
        code = getattr(value, "code", None)
        return type(value).__name__ + (f" ({code})" if isinstance(code, str) else "")
    return f"a {type(value).__name__} (on the error object)"

"""What every lab view shares: escaping, per-output scoping, anchors, and the one style sheet.

Rule kept here: every string that came from a model, a tool, a user, a document or a
declaration goes through :func:`esc` before it is written, in text and in attributes alike,
and no view carries JavaScript. Each output gets its own id (``fl-`` and ten hex digits), its
CSS is written under that id (pandas ``Styler`` does the same), and every in-page anchor is
prefixed with it, so two outputs in one notebook never restyle each other or share a link
target.

Role: lab layer, used by the views in this package only.
"""

from __future__ import annotations

import html
import re
import uuid
from typing import Any

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
§{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.45;color:#1f2328;
background:#fff;max-width:64rem;padding:.2rem .1rem}
§ code,§ pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
§ pre{white-space:pre-wrap;word-break:break-word;margin:.2rem 0;background:#f6f8fa;padding:.35rem .5rem;
border-radius:4px;max-height:22rem;overflow:auto}
§ .fl-head{display:flex;flex-wrap:wrap;gap:.25rem .6rem;align-items:baseline;margin-bottom:.35rem}
§ .fl-head b{font-size:14px}
§ .fl-muted{color:#59636e}
§ .fl-tag{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;color:#fff;background:#6e7781}
§ .fl-st-finished{background:#1a7f37}§ .fl-st-failed{background:#cf222e}§ .fl-st-paused{background:#9a6700}
§ .fl-answer{border-left:4px solid #0969da;background:#f3f8ff;padding:.35rem .6rem;margin:.35rem 0;
border-radius:0 6px 6px 0}
§ .fl-answer.fl-failed{border-color:#cf222e;background:#fff5f5}
§ .fl-answer.fl-paused{border-color:#9a6700;background:#fff8e5}
§ .fl-answer pre{background:transparent;padding:0;font-size:13px;font-family:inherit}
§ h4{margin:.7rem 0 .25rem 0;font-size:13.5px}
§ h5{margin:.45rem 0 .15rem 0;font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#59636e}
§ details{margin:0}
§ summary{cursor:pointer}
§ .fl-piece{border-left:4px solid var(--k,#6e7781);background:#fafbfc;margin:2px 0;border-radius:0 4px 4px 0}
§ .fl-piece>summary{padding:2px 6px;display:flex;gap:.5rem;align-items:baseline;list-style:none}
§ .fl-piece>summary::-webkit-details-marker{display:none}
§ .fl-piece>summary::before{content:'▸';color:#8c959f}
§ .fl-piece[open]>summary::before{content:'▾'}
§ .fl-piece[open]{background:#f6f8fa}
§ .fl-kind{font-size:11px;font-weight:600;color:var(--k,#6e7781);min-width:5.5rem}
§ .fl-id{font-weight:600}
§ .fl-prev{color:#59636e;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;flex:1;min-width:0}
§ .fl-at{color:#59636e;font-size:11px;white-space:nowrap}
§ .fl-rank{font-size:11px;white-space:nowrap;background:#fff1e5;border-radius:8px;padding:0 6px;color:#953800}
§ .fl-body{padding:.2rem .6rem .45rem 1.4rem}
§ .fl-hops{list-style:none;margin:.25rem 0;padding:0}
§ .fl-hops li{padding:1px 0}
§ .fl-hops b{display:inline-block;min-width:4.6rem;font-family:ui-monospace,monospace;font-size:11px}
§ .fl-unproven{color:#cf222e}
§ .fl-note{color:#59636e;font-size:12px;margin:.2rem 0}
§ .fl-box{border:1px solid #d0d7de;border-radius:6px;padding:.25rem .6rem;margin:.4rem 0}
§ .fl-box>summary{font-weight:600}
§ table.fl-table{border-collapse:collapse;margin:.3rem 0;font-size:12px}
§ .fl-table td,§ .fl-table th{border:1px solid #d8dee4;padding:1px 6px;text-align:left;vertical-align:top}
§ .fl-table th{background:#f6f8fa}
§ .fl-tree,§ .fl-tree ul{list-style:none;margin:0;padding-left:1.1rem;border-left:1px dashed #d0d7de}
§ .fl-tree{padding-left:.4rem;border-left:none}
§ .fl-member>summary{padding:2px 0}
§ .fl-edge{font-size:11px;color:#8250df}
§ .fl-member-body{border:1px solid #d0d7de;border-radius:6px;padding:.3rem .6rem;margin:.2rem 0 .4rem 0}
§ a{color:#0969da}
"""


def esc(value: Any) -> str:
    """Any value as text safe in HTML content and in quoted attributes."""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def new_scope() -> str:
    """A fresh id for one output: its CSS and its anchors live under it."""
    return "fl-" + uuid.uuid4().hex[:10]


def style(scope: str) -> str:
    """The style sheet of the lab views, scoped to the output ``scope``."""
    return "<style>" + _CSS.replace("§", f"#{scope}").replace("\n", "") + "</style>"


def wrap(scope: str, body: str, *, css_class: str = "fl-view") -> str:
    """One self-contained output: its scoped style sheet and its body."""
    return f'<div id="{scope}" class="{css_class}">{style(scope)}{body}</div>'


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def anchor(scope: str, kind: str, key: str) -> str:
    """An element id under ``scope`` for ``key`` (a step id, a mount path), made of safe characters only."""
    return f"{scope}-{kind}-" + _UNSAFE.sub(lambda m: f"_{ord(m.group()):x}_", key)


def shorten(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def clip(text: str, limit: int = 4000) -> str:
    """At most ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit} more characters: run.context() holds them all)"


def kind_style(kind: str) -> str:
    """The inline custom property that colours a row by source kind."""
    return f"--k:{KIND_COLOURS.get(kind, '#6e7781')}"

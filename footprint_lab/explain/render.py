"""How an explanation shows itself: plain text first, and HTML with every recorded value escaped.

Rule kept here: an explanation's text is built once, by the explanation; the notebook forms
(``text/markdown``, ``text/html``) only wrap it. Everything in it may come from a model, a
tool, a user or a document, so every form draws it through the engine's one door for values
(:mod:`footprint_lab.markup.elements`: bounded, invisible controls shown, escaped in the HTML),
and the HTML carries no script. ``str(explanation)`` keeps the whole text.

Role: explain layer.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.base.display import bundle
from footprint_lab.markup.elements import el, esc, raw, shown


def shorten(text: str, limit: int = 96) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def mimebundle(summary: str, text: str) -> dict[str, str]:
    """The display forms of an explanation whose full text is ``text``."""
    whole = "str() of this object"
    plain = shown(text, whole=whole)
    fenced = plain.replace("```", "'''")
    return {
        "text/plain": plain,
        "text/markdown": f"**{esc(summary, badges=False)}**\n\n```\n{fenced}\n```",
        "text/html": el("div", el("p", el("strong", summary)), el("pre", raw(esc(text, whole=whole))),
                        class_="footprint-explain"),
    }


def display_bundle(kind: str, obj: Any, summary: str, text: str, include: Any, exclude: Any) -> dict[str, Any]:
    """An explanation's display: the lab's view when registered (``base.display``), else :func:`mimebundle`."""
    return bundle(kind, obj, lambda: mimebundle(summary, text), include, exclude)

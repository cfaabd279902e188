"""How an explanation shows itself: plain text first, and HTML with every recorded value escaped.

Rule kept here: an explanation's text is built once, by the explanation; the notebook forms
(``text/markdown``, ``text/html``) only wrap it. Everything in it may come from a model, a
tool, a user or a document, so the HTML form escapes all of it and carries no script.

Role: explain layer.
"""

from __future__ import annotations

import html
from typing import Any


def shorten(text: str, limit: int = 96) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def mimebundle(summary: str, text: str) -> dict[str, str]:
    """The display forms of an explanation whose full text is ``text``."""
    fenced = text.replace("```", "'''")
    return {
        "text/plain": text,
        "text/markdown": f"**{summary}**\n\n```\n{fenced}\n```",
        "text/html": (f"<div class='footprint-explain'><p><strong>{html.escape(summary)}</strong></p>"
                      f"<pre>{html.escape(text)}</pre></div>"),
    }


def display_bundle(kind: str, obj: Any, summary: str, text: str, include: Any, exclude: Any) -> dict[str, Any]:
    """An explanation's display: the lab's view when registered (``engine.display``), else :func:`mimebundle`."""
    from footprint_lab.engine.display import bundle

    return bundle(kind, obj, lambda: mimebundle(summary, text), include, exclude)

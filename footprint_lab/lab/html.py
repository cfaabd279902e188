"""HTML views of a run, drawn from its ``Recording`` only.

Rule kept here: every string that came from a model, a tool, a user or a document is
HTML-escaped before it is written, and no view carries JavaScript. A view reads nothing but
the recording, so what a redaction policy kept out of the recording is not in the page.

Role: lab layer. The notebook lab builds richer views on these; ``Run.to_html()`` and
``Run._repr_html_`` use :func:`run_html`.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from footprint_lab.engine.recording import Recording

_STYLE = (
    "<style>"
    ".fl-run{font-family:system-ui,sans-serif;font-size:13px;line-height:1.4;max-width:60rem}"
    ".fl-run table{border-collapse:collapse;margin:.4rem 0}"
    ".fl-run td,.fl-run th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
    ".fl-run pre{white-space:pre-wrap;margin:0}"
    ".fl-status-finished{color:#1a7f37}.fl-status-failed{color:#cf222e}.fl-status-paused{color:#9a6700}"
    "</style>"
)


def text(value: Any) -> str:
    """Any value as escaped text."""
    return escape(value if isinstance(value, str) else str(value), quote=True)


def run_html(recording: Recording) -> str:
    """One run: who ran, how it ended, the answer (or the question it waits on), the transcript, the steps."""
    runner = recording.runner
    title = " ".join(text(part) for part in (runner.kind, runner.name or runner.id or "") if part)
    status = text(recording.status)
    parts = [
        _STYLE,
        '<div class="fl-run">',
        f"<div><b>{title}</b> · <code>{text(recording.run_id)}</code> · "
        f'<span class="fl-status-{status}">{status}</span> · {len(recording.steps)} steps · '
        f"{recording.duration_ms:.2f} ms</div>",
    ]
    pause = recording.meta.get("pause")
    if recording.status == "paused" and isinstance(pause, dict):
        parts.append(f"<p><b>Waiting on a person</b> (tool {text(pause.get('tool_name', ''))}): "
                     f"{text(pause.get('question', ''))}</p>")
    elif recording.answer is not None:
        parts.append(f"<p><b>Answer</b></p><pre>{text(recording.answer)}</pre>")
    if recording.error:
        parts.append(f"<p><b>Failed</b> at <code>{text(recording.error.get('step_id', ''))}</code>: "
                     f"{text(recording.error.get('type', ''))}</p>")
    if recording.redaction:
        matched = ", ".join(recording.redaction.get("matched", [])) or "nothing matched"
        parts.append(f"<p><i>Redaction in force</i>: {text(matched)}</p>")
    parts.append(_notes(recording))
    parts.append(_transcript(recording))
    parts.append(_steps(recording))
    parts.append("</div>")
    return "".join(parts)


def _notes(recording: Recording) -> str:
    """The analyst's notes on the run, each with what it is about."""
    if not recording.annotations:
        return ""
    items = "".join(
        f'<li class="fl-note"><code>{text(note.target)}</code>'
        + (f" <i>({text(note.tag)})</i>" if note.tag else "") + f": {text(note.text)}</li>"
        for note in recording.annotations
    )
    return f"<p><b>Notes</b></p><ul>{items}</ul>"


def _transcript(recording: Recording) -> str:
    rows = []
    for message in recording.messages:
        content = message.get("content") or ""
        calls = message.get("tool_calls") or []
        if calls:
            content += "".join(f"\n→ {call.get('name', '')}({call.get('args', {})})" for call in calls)
        rows.append(f"<tr><td>{text(message.get('role', ''))}</td><td><pre>{text(content)}</pre></td></tr>")
    return "<table><tr><th>role</th><th>content</th></tr>" + "".join(rows) + "</table>"


def _steps(recording: Recording) -> str:
    rows = "".join(
        f"<tr><td><code>{text(step.step_id)}</code></td><td>{text(step.status)}</td>"
        f"<td>{step.duration_ms:.3f} ms</td></tr>"
        for step in recording.steps
    )
    return f"<details><summary>steps</summary><table>{rows}</table></details>"

"""The live view of a run in flight: its event stream folded into a few rows, sent in small batches.

Rule kept here: the widget shows what the run's own event stream says, as it says it, and
never more often than a browser can draw. Each step becomes one row (its id, what it is, how
it ended); an LLM call's row gathers its streamed tokens, a tool's row its arguments and
result, a member run's start its own row. The engine's routine ``read`` / ``write`` /
``commit`` events are not drawn.

A ``recall`` event (a value learned late that earlier events held) is applied: those events'
payloads are replaced with the masked ones it carries and the rows folded again, so the view
stops showing what the run's policy covers.

Rows go out in batches: at once when the last batch left more than ``interval`` seconds ago,
otherwise on a timer that fires within ``interval`` (so no row waits longer than that plus
whatever the run itself holds the event loop for). Only the last ``keep`` rows are sent, so
the widget's saved state stays small however long the run; the rows dropped are counted.
A row's texts go out as a view draws any value (``markup.elements.shown``): each at most
``DETAIL_LIMIT`` characters, every direction control or control character shown as a mark
(the browser writes them as text, never as markup).

Role: lab layer; fed by ``on_event=`` of any runner, drained by :mod:`footprint_lab.lab.widget`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from time import perf_counter
from typing import Any

from footprint_lab.explain.render import shorten
from footprint_lab.markup.elements import shown

#: the events drawn; anything else (reads, writes, commits) only costs a dict lookup
_DRAWN = frozenset({"run_start", "run_end", "step_start", "step_end", "llm_start", "llm_end", "token", "tool_start",
                    "tool_end", "decision", "error"})
_STAGES = {"seed": "the message lands", "assemble": "slots assembled", "call-llm": "LLM call", "tool": "tool call",
           "final": "the answer is written"}
DETAIL_LIMIT = 600


class LiveSteps:
    """Fold events into rows; hand batches of rows to ``publish(rows, hidden)``."""

    def __init__(self, publish: Callable[[list[dict[str, Any]], int], None], *, interval: float = 0.05,
                 keep: int = 300) -> None:
        self._publish = publish
        self.interval = interval
        self.keep = keep
        self.rows: list[dict[str, Any]] = []
        self._by_step: dict[str, dict[str, Any]] = {}
        #: every drawn event as ``[seq, type, step_id, payload, at]``, to fold again after a recall
        self._seen: list[list[Any]] = []
        self._dirty = False
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.started = perf_counter()

    # -- in: events -------------------------------------------------------------------------
    def on_event(self, event: Any) -> None:
        """A runner's listener: fold one event in, and send a batch when one is due.

        A ``recall`` event (the run learned a value its earlier events held) replaces those
        events' payloads with the masked ones it carries, and the rows are folded again.
        """
        kind = event.type
        if kind == "recall":
            self._recall(event.payload.get("events") or [])
            self._due()
            return
        if kind not in _DRAWN:
            return
        at = round((perf_counter() - self.started) * 1000, 1)
        self._seen.append([getattr(event, "seq", None), kind, event.step_id, event.payload, at])
        self._fold(kind, event.step_id, event.payload, at)
        self._due()

    def _recall(self, recalled: list[Any]) -> None:
        masked = {entry["seq"]: entry["payload"] for entry in recalled
                  if isinstance(entry, dict) and isinstance(entry.get("payload"), dict)}
        hit = [seen for seen in self._seen if seen[0] in masked]
        if not hit:
            return
        for seen in hit:
            seen[3] = masked[seen[0]]
        self.rows, self._by_step = [], {}
        for _, kind, step_id, payload, at in self._seen:
            self._fold(kind, step_id, payload, at)
        self._dirty = True

    def _fold(self, kind: str, step_id: str, payload: dict[str, Any], at: float) -> None:
        if kind == "step_start":
            stage = payload.get("stage", "")
            self._add(step_id, "step", _STAGES.get(stage, stage), status="running", at=at)
        elif kind == "step_end":
            row = self._by_step.get(step_id)
            if row is not None:
                row["status"] = payload.get("status", "ok")
                row["ms"] = round(at - row["at"], 1)
                self._touch(row)
        elif kind == "run_start" and step_id:  # a member run (the top run's own start is the widget's)
            name = payload.get("name") or payload.get("id") or step_id.rpartition("/")[2]
            self._add(f"{step_id} ▸", "member", f"member run: {name} ({payload.get('runner', 'runner')})",
                      status="running", at=at)
        elif kind == "run_end" and step_id:
            row = self._by_step.get(f"{step_id} ▸")
            if row is not None:
                row["status"] = payload.get("status", "finished")
                row["ms"] = round(at - row["at"], 1)
                self._touch(row)
        elif kind == "llm_start":
            self._label(step_id, f"LLM call ({payload.get('model') or 'model'}, {payload.get('messages', 0)} messages, "
                                 f"{payload.get('tools', 0)} tools)")
        elif kind == "token":
            self._detail(step_id, str(payload.get("text", "")), append=True)
        elif kind == "llm_end":
            self._label(step_id, f"LLM call: {payload.get('input_tokens', 0)} in / "
                                 f"{payload.get('output_tokens', 0)} out tokens"
                                 + (f", asks for {payload['tool_calls']} tool call(s)" if payload.get("tool_calls")
                                    else ""))
        elif kind == "tool_start":
            arguments = json.dumps(payload.get("args", {}), ensure_ascii=False, default=str)
            self._label(step_id, f"tool {payload.get('tool', '')}")
            self._detail(step_id, f"{payload.get('tool', '')}({arguments})" if "args" in payload else
                         "the person's answer lands as the result")
        elif kind == "tool_end":
            if payload.get("paused"):
                self._detail(step_id, "\n→ paused: asks a person", append=True)
            elif "result" in payload:
                mark = "error" if payload.get("is_error") else "→"
                self._detail(step_id, f"\n{mark} {payload['result']}", append=True)
        elif kind == "decision":
            self._detail(step_id, f"decided '{payload.get('rule', '')}': chose {payload.get('chosen', '')}")
        elif kind == "error":
            stopped = payload.get("type") == "CancelledError"
            self._add(f"{step_id or 'run'} ✕", "error", "stopped here (cancelled)" if stopped else
                      f"failed: {payload.get('type', 'error')}", status="cancelled" if stopped else "error", at=at)

    def _add(self, step_id: str, kind: str, label: str, *, status: str, at: float) -> None:
        row = {"id": step_id, "kind": kind, "label": label, "status": status, "detail": "", "at": at}
        self.rows.append(row)
        self._by_step[step_id] = row
        self._dirty = True

    def _touch(self, row: dict[str, Any]) -> None:
        self._dirty = True

    def _label(self, step_id: str, label: str) -> None:
        row = self._by_step.get(step_id)
        if row is not None:
            row["label"] = label
            self._touch(row)

    def _detail(self, step_id: str, detail: str, *, append: bool = False) -> None:
        row = self._by_step.get(step_id)
        if row is not None:
            joined = row["detail"] + detail if append else detail
            row["detail"] = joined if len(joined) <= DETAIL_LIMIT else shorten(joined, DETAIL_LIMIT)
            self._touch(row)

    # -- out: batches -----------------------------------------------------------------------
    def _due(self) -> None:
        if not self._dirty:
            return
        if perf_counter() - self._last >= self.interval:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop to wait on: send now
                self.flush()
                return
            self._timer = loop.call_later(self.interval, self.flush)

    def flush(self) -> None:
        """Send what changed since the last batch (the last ``keep`` rows, as fresh dicts)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._dirty:
            return
        self._dirty = False
        self._last = perf_counter()
        hidden = max(0, len(self.rows) - self.keep)
        self._publish([_drawn(row) for row in self.rows[hidden:]], hidden)

    def close(self) -> None:
        """Send the last batch now and stop the timer."""
        self.flush()


def _drawn(row: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy of ``row`` with its texts as a view draws them."""
    return {**row, **{key: shown(row[key], limit=DETAIL_LIMIT, whole="lab.run.events")
                      for key in ("id", "label", "detail")}}

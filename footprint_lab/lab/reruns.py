"""What the Lab reruns: the piece an analyst clicked, and the turns of its conversation as a ``Chat``.

Rule kept here: a rerun started from the widget runs what the same call in code would run.
A piece clicked in a run's call reruns that run on its agent (a member's call, on the one
member agent that made it; a chat's turn, on the chat, inside its own conversation).
The widget's follow-up turns are the turns of one :class:`~footprint_lab.Chat`
(``lab.chat``), so whatever the widget offers on a turn is what the chat offers in code:
``chat[k]`` opened in the answer view, ``chat.rerun(k, without=[source])`` (only that turn
calls the provider), and ``chat.fork(k)`` (the widget goes on in the fork, the turns before
``k`` kept; the chat it came from is ``lab.chat.forked_from``). The turn rows the browser draws
hold the message and answer as recorded (a redaction policy's masks included), bounded, and
the removable sources by their ids: never a recording.

Role: lab layer; mixed into :class:`footprint_lab.lab.widget.Lab`, whose traits it sets.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from footprint_lab.base.progress import Listener
from footprint_lab.core.chat import Chat
from footprint_lab.core.run import Run
from footprint_lab.explain import (
    compare_runs,
    explain_difference,
    find_dropped_context,
    localize,
    replay,
    rerun_without,
)
from footprint_lab.lab import panels
from footprint_lab.lab.views.difference import difference_explanation_html, difference_html
from footprint_lab.markup.elements import el, join, raw, shown

_SHORT = 120


class Reruns:
    """The Lab's reruns: of a clicked piece (``_act``) and of its chat's turns (``press_turn``)."""

    chat: Chat | None
    run: Any
    runner: Any
    replay: Any
    turns: list[dict[str, Any]]
    turn: int
    follows: bool
    note: str
    selection: dict[str, Any]
    panel_html: str
    progress: dict[str, Any]
    busy: str
    _call: str | None
    _piece: tuple[str, str] | None
    _continued_from: Any

    if TYPE_CHECKING:
        def _in_flight(self) -> bool: ...

        def _show_run(self, run: Run | None) -> None: ...

        def _background(self, label: str, before: str, start: Callable[[], Coroutine[Any, Any, Any]],
                        draw: Callable[[Any], str]) -> None: ...

    def _chat_rows(self) -> list[dict[str, Any]]:
        """One short row per turn of the chat: its number, status, message and answer as recorded."""
        if self.chat is None:
            return []
        return [{"turn": int(row["turn"]), "status": str(row["status"]),
                 "message": shown(row["message"] or "", limit=_SHORT, whole="lab.chat.frame()"),
                 "answer": shown(row["answer"] or "", limit=_SHORT, whole="lab.chat.frame()")}
                for row in self.chat.frame().to_dict("records")]

    def press_turn(self, content: dict[str, Any]) -> None:
        """A turn's buttons: ``open`` it, ``rerun`` it without ``source``, or ``fork`` the chat before it."""
        chat = self.chat
        number = content.get("turn")
        if self._in_flight() or chat is None or not isinstance(number, int) or isinstance(number, bool) \
                or not 0 <= number < len(chat):
            return
        action = content.get("action")
        if action == "open":
            self._show_run(chat[number])
            self.selection = {"turn": number}
            self.note = f"Turn {number} of {len(chat)}: a piece clicked here reruns this turn without it."
        elif action == "fork":
            fork = chat.fork(number)
            self.chat = fork
            self._show_run(fork[-1] if len(fork) else None)
            self.turn = len(fork)
            self.follows = len(fork) > 0
            self.turns = self._chat_rows()
            self.selection = {}
            self.note = (f"Forked before turn {number}: the next message is this chat's new turn {number}; "
                         "the chat it came from is lab.chat.forked_from.")
        elif action == "compare" and self.run is not None and chat[number] is not self.run:
            found = compare_runs(chat[number], self.run)
            self.selection = {"turn": number, "panel": "compare"}
            self.panel_html = panels.bounded(join([
                el("h4", f"Turn {number} against the run shown"), raw(difference_html(found)),
                el("div", panels.action("difference", f"Test which difference brings turn {number}'s answer back "
                                        "(replay)", str(number)), class_="fl-p fl-actions")]), "The difference")
        elif action == "rerun" and isinstance(content.get("source"), str):
            source = str(content["source"])
            self.selection = {"turn": number, "panel": "rerun", "source": source}
            self._background(f"Rerunning turn {number} without '{source}'…", "",
                             lambda: chat.rerun(number, [source]),
                             lambda result: el("h4", f"Turn {number}") + panels.rerun_panel(result.report))

    def _rerun_target(self, call: str | None) -> tuple[Any, Any] | None:
        """What reruns from ``call`` rerun: this run with its agent, or the member run that made the call
        with the one member agent that made it (``None`` when no agent can be rebuilt for it)."""
        root = self.run.recording
        home = panels.find_recording(root, step_id=call) if call else root
        if home is None:
            return None
        if home is root:
            if self.chat is not None and any(turn is self.run for turn in self.chat):
                return self.run, self.chat  # a turn reruns inside its own conversation (Chat.rerun_start)
            return (self.run, self.runner) if callable(getattr(self.runner, "without", None)) else None
        member = _member_agent(self.runner, home.runner)
        if member is None:
            return None

        return Run.from_recording(home), member

    def _act(self, action: str, source: Any, edit: str | None = None) -> None:
        if self._in_flight() or self.run is None:
            return
        if action.startswith("replay"):
            self._replay(action, source, edit)
            return
        if action == "step" and isinstance(source, str):  # step through the run: one step, what it saw and wrote
            self.selection = {**self.selection, "panel": "step", "step": source}
            self.panel_html = panels.bounded(panels.step_panel(self.run.recording, source, self._piece),
                                             f"The step {source}")
            return
        if action == "difference" and isinstance(source, str) and source.isdigit():
            self._difference_test(int(source))
            return

        run, runner = self._rerun_target(self._call) or (self.run, None)
        carried = self._continued_from
        extra = {"continue_from": carried} if (run is self.run and runner is not self.chat
                                               and run.recording.meta.get("continues")) else {}
        before = self.panel_html
        if action in ("rerun", "localize") and runner is None:
            return
        if action == "rerun" and isinstance(source, str):
            self._background(f"Rerunning without '{source}'…", before, lambda: rerun_without(
                run, [source], rerun=runner, **extra), panels.rerun_panel)
        elif action == "localize":
            only = [source] if isinstance(source, str) else None  # a piece's own button tests that piece alone
            doing = f"Testing '{source}': reruns without it beside unchanged ones" if only else \
                "Localizing: testing every piece that reached the answer"
            self._background(doing, before, lambda: localize(
                run, rerun=runner, sources=only, progress=self._heard(doing), **extra), panels.localize_panel)
        elif action == "dropped":
            rerun = runner if callable(getattr(runner, "with_forced", None)) else None
            restoring = "Restoring each left-out piece in a rerun"
            self._background(restoring, before, lambda: find_dropped_context(
                run, rerun=rerun, progress=self._heard(restoring), **extra), panels.dropped_panel)


    def _replay(self, action: str, source: Any, edit: str | None) -> None:
        """A piece's replays: its call re-sent without it (``replay``) or with its text edited (``replay_edit``),
        ``REPLAYS`` times beside as many unchanged replays; or the answering call's every piece tested by replay
        (``replay_localize``)."""
        provider = self.replay
        if provider is None:
            return
        run, call, before = self.run, self._call, self.panel_html
        if action == "replay_localize":
            label = "Localizing by replay: the answering call re-sent without each of its pieces"
            self._background(label, before, lambda: localize(run, replay=provider, progress=self._heard(label)),
                             panels.localize_panel)
        elif action == "replay" and isinstance(source, str):
            label = f"Replaying {call} without '{source}' ({REPLAYS} times, and {REPLAYS} unchanged)…"
            self._background(label, before, lambda: replay(run, provider, call=call, without=[source],
                                                           samples=REPLAYS, progress=self._heard(label)),
                             panels.replay_panel)
        elif action == "replay_edit" and isinstance(source, str) and edit is not None:
            label = f"Replaying {call} with '{source}' edited ({REPLAYS} times, and {REPLAYS} unchanged)…"
            self._background(label, before, lambda: replay(run, provider, call=call, edit={source: edit},
                                                           samples=REPLAYS, progress=self._heard(label)),
                             panels.replay_panel)


    def _difference_test(self, number: int) -> None:
        """Which differences between turn ``number`` (the good answer) and the run shown bring that answer back:
        ``explain_difference`` by replay, through the Lab's ``replay`` provider or the agent's own."""
        chat, run = self.chat, self.run
        provider = self.replay or getattr(self.runner, "provider", None)
        if chat is None or run is None or provider is None or not 0 <= number < len(chat):
            return

        label = f"Carrying each difference of turn {number} into the run shown, by replay"
        self._background(label, self.panel_html,
                         lambda: explain_difference(chat[number], run, replay=provider, progress=self._heard(label)),
                         difference_explanation_html)

    def _heard(self, label: str) -> Heard:
        """The progress function of a rerun started under ``label``: its count to the bar, its phase to the status
        line beside it."""
        return Heard(self, label)


class Heard(Listener):
    """What the Lab hears of a long call: ``(done, total)`` drawn as its bar (``progress``), and what the call is
    doing ("screening", "confirming 'vip-override'") after the status line's label (``busy``), as a notebook's bar
    shows it after its count."""

    def __init__(self, lab: Reruns, label: str) -> None:
        self.lab = lab
        self.label = label

    def __call__(self, done: int, total: int) -> None:
        self.lab.progress = {"done": done, "total": total}

    def doing(self, what: str) -> None:
        self.lab.busy = f"{self.label} · {what}" if what else self.label


#: How many times the Lab replays a call with a piece changed (and as many times unchanged, for the noise).
REPLAYS = 3


def _member_agent(composition: Any, made_by: Any) -> Any:
    """The one agent among a composition's members (at any depth) recorded as ``made_by``, or ``None``."""
    found: dict[int, Any] = {}
    pending = [composition]
    while pending:
        runner = pending.pop()
        members = getattr(runner, "_runners", None)
        if callable(members):
            pending.extend(members())
        elif (callable(getattr(runner, "without", None)) and getattr(runner, "kind", None) == made_by.kind
              and runner.name == made_by.name and runner.id == made_by.id):
            found[id(runner)] = runner
    return next(iter(found.values())) if len(found) == 1 else None

"""``Lab(runner)``: run an agent or a composition inside the notebook, watch it, and click into why.

Rules kept here:

- The kernel stays responsive. **Run** schedules the run as a task on the kernel's own event
  loop and returns at once; **Stop** cancels that task. A cancelled run keeps its recording
  (the engine records where it stopped) and shows as cancelled; ``lab.run`` holds it.
- What the widget shows comes from the run's own event stream while it runs
  (:mod:`footprint_lab.lab.live`) and from its recording once it ends (the answer view of
  :mod:`footprint_lab.lab.views`, the panels of :mod:`footprint_lab.lab.panels`); the
  browser holds no logic of its own.
- A refusal is shown as its card inside the widget, which stays usable; a pause shows the
  question with an answer box (**Answer** resumes the run, **Abandon** calls ``abandon_pause``).
- Several turns continue one conversation until **New conversation**: for an agent, its
  turns are a :class:`~footprint_lab.Chat` (``lab.chat``), listed under the box, each one
  opened, rerun without a source or forked from there (:mod:`footprint_lab.lab.reruns`).
- The synced state is data, versioned: ``state_schema`` names its layout, ``state_version``
  moves with every change of what the widget shows, ``selection`` says what is open (a call,
  a piece, a member, a turn, a panel). The browser draws everything in one place, from the
  whole state, each time the version moves, so the order in which traits arrive never matters.
- **Ask** questions the latest run in plain words through ``explain.ask`` with the Lab's
  ``explainer`` provider, as a task on the same loop (**Stop** cancels it); the answer shows
  with its cited ids as chips that open the call or piece they name
  (:mod:`footprint_lab.lab.ask_box`). Without an explainer the box says how to enable it.
- What a saved notebook keeps is small: the synced state holds short rows and the HTML of the
  current views only, never a recording; and the cell's output carries a static, no-JS copy of
  the last answer view beside the widget, refreshed after every run, for readers without a kernel.

What a click opens is :mod:`footprint_lab.lab._opening`'s, the Ask box's work
:mod:`footprint_lab.lab._asking`'s and the reruns :mod:`footprint_lab.lab.reruns`', each mixed into ``Lab``.

Role: lab layer. ``from footprint_lab import Lab`` loads this module (and anywidget) on first use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import anywidget
import traitlets

from footprint_lab.base.refusal import CodedError, Refusal
from footprint_lab.core.chat import Chat, holds_conversations
from footprint_lab.core.run import Run
from footprint_lab.lab import ask_box, panels
from footprint_lab.lab._asking import Asking
from footprint_lab.lab._opening import Opening
from footprint_lab.lab.cards import error_card_html
from footprint_lab.lab.door import LabConfigError, check_explainer, check_lab
from footprint_lab.lab.live import LiveSteps
from footprint_lab.lab.reruns import Reruns
from footprint_lab.markup import theme
from footprint_lab.markup.elements import shown

if TYPE_CHECKING:
    from footprint_lab.core.identity import IdentityInput
    from footprint_lab.core.runner import Runner
    from footprint_lab.explain.arguments import HasRecording
    from footprint_lab.providers.types import Provider

STATIC = Path(__file__).parent / "static"
_IDENTITY_FIELDS = ("conversation_id", "tenant", "principal")
#: the layout of the synced state (its traits and what each holds); a saved notebook's state says which it has
STATE_SCHEMA = 2


class Lab(Reruns, Opening, Asking, anywidget.AnyWidget):
    """The inline lab: a message box, Run / Stop, the live steps, the answer view made clickable."""

    _esm = STATIC / "lab.js"
    _css = theme.dark_rules() + (STATIC / "lab.css").read_text(encoding="utf-8")

    title = traitlets.Unicode("").tag(sync=True)
    #: whether the Lab has a runner to run messages with (a Lab of a run made elsewhere has none)
    can_run = traitlets.Bool(True).tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    identity = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("idle").tag(sync=True)
    turn = traitlets.Int(0).tag(sync=True)
    follows = traitlets.Bool(False).tag(sync=True)
    steps: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    steps_hidden = traitlets.Int(0).tag(sync=True)
    question = traitlets.Dict().tag(sync=True)
    card = traitlets.Unicode("").tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)
    answer_html = traitlets.Unicode("").tag(sync=True)
    tree = traitlets.Dict().tag(sync=True)
    member_path = traitlets.Unicode("").tag(sync=True)
    member_html = traitlets.Unicode("").tag(sync=True)
    panel_html = traitlets.Unicode("").tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    ask_question = traitlets.Unicode("").tag(sync=True)
    ask_hint = traitlets.Unicode("").tag(sync=True)
    ask_state = traitlets.Unicode("").tag(sync=True)
    ask_html = traitlets.Unicode("").tag(sync=True)
    #: the chat's turns, one short row each, and the ids a turn can be rerun without
    turns: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    sources: traitlets.List[str] = traitlets.List().tag(sync=True)
    #: what is open: {"call": ..., "piece": ..., "slot": ..., "member": ..., "turn": ..., "panel": ...}
    selection = traitlets.Dict().tag(sync=True)
    state_schema = traitlets.Int(STATE_SCHEMA, read_only=True).tag(sync=True)
    state_version = traitlets.Int(0).tag(sync=True)

    def __init__(self, runner: Runner | None = None, *, run: HasRecording | None = None,
                 replay: Provider | None = None, identity: IdentityInput = None, message: str | None = None,
                 explainer: Provider | str | None = None) -> None:
        who = check_lab(runner, identity, message, run, replay)
        explaining = check_explainer(explainer)
        # a run made elsewhere (imported, loaded): nothing to run, its calls replayed (check_lab has refused a run
        # beside a runner, and a Lab with neither)
        if run is not None:
            made = run.recording.runner
            title = f"Lab · {made.name or made.id or made.kind} ({made.kind}, explained from its recording)"
        else:
            name = getattr(runner, "name", None) or getattr(runner, "id", None) or type(runner).__name__
            policy = getattr(runner, "redact", None)   # a name the runner's policy covers is masked, as its records
            name = policy.for_run().scrub(name) if policy is not None and isinstance(name, str) else name
            title = f"Lab · {name} ({getattr(runner, 'kind', 'runner')})"
        super().__init__(title=shown(title), message=message or "", identity=who, can_run=runner is not None,
                         ask_hint="" if explaining is not None else ask_box.HINT)
        self.runner = runner
        #: the provider a piece's replay re-sends its recorded call through (``None``: no replay offered)
        self.replay = replay
        #: the conversation the widget's turns are (an agent's; ``None`` for a composition, or before a Run)
        self.chat: Chat | None = None
        self._chats = holds_conversations(runner)
        declared = getattr(runner, "source_ids", None)  # an agent's (a composition's runs hold no chat)
        if self._chats and callable(declared):
            self.sources = [shown(source) for source in declared()]
        #: the Ask box's provider (``None``: the box says how to enable it)
        self.explainer: Any = explaining
        #: the latest ``Explanation`` the Ask box showed, to continue with in code
        self.explanation: Any = None
        #: the latest ``Run`` (finished, paused, failed or cancelled), to continue with in code
        self.run: Any = None
        self._task: asyncio.Task[Any] | None = None
        #: the kernel's loop, where the widget was built: runs happen there, whichever thread a click arrives on
        self._loop = _running_loop()
        self._live: LiveSteps | None = None
        self._continued_from: Any = None  # the checkpoint the current run continued (reruns need it)
        self._call: str | None = None
        self._piece: tuple[str, str] | None = None
        self._handles: list[Any] = []
        self.on_msg(self._on_message)
        if run is not None:
            self.show(run)
        self.observe(self._moved, names=[name for name in self.trait_names(sync=True)
                                         if name not in ("state_version", "state_schema") and not name.startswith("_")
                                         and name not in anywidget.AnyWidget.class_trait_names()])

    def _moved(self, _change: Any) -> None:
        """Any change of what the widget shows moves the version: the browser redraws from the whole state."""
        self.state_version += 1

    # -- what the browser sends -------------------------------------------------------------
    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        handler = self._HANDLERS.get(str(content.get("do")))
        if handler is None:
            return
        # A kernel may hand widget messages to a subshell thread; runs and their tasks live on
        # the kernel's main loop, so the handler is moved there (a task is not thread-safe).
        loop = self._loop
        if loop is not None and not loop.is_closed() and _running_loop() is not loop:
            loop.call_soon_threadsafe(self._handle, handler, content)
        else:
            self._handle(handler, content)

    def _handle(self, handler: Callable[[Lab, dict[str, Any]], None], content: dict[str, Any]) -> None:
        with self.hold_sync():  # what one click changes reaches the browser as one update
            handler(self, content)

    def press_run(self, content: dict[str, Any] | None = None) -> None:
        """What the Run button does: run the message (continuing the conversation after a first turn)."""
        if self._in_flight():
            return
        if content is not None and isinstance(content.get("message"), str):
            self.message = content["message"]
        runner, message, identity = self.runner, self.message, self._identity()
        follow = self.follows and callable(getattr(runner, "follow_up", None))
        if self._chats:
            # a new conversation unless this one goes on (or waits on a question, which its chat refuses to skip)
            if self.chat is None or (not self.follows and self.chat.pending is None):
                self.chat = Chat(runner)
            chat = self.chat
            self._continued_from = None

            def start(listener: Callable[[Any], None]) -> Coroutine[Any, Any, Any]:
                return chat.send(message, on_event=listener, identity=identity)
        elif follow:
            self._continued_from = runner.checkpoint()

            def start(listener: Callable[[Any], None]) -> Coroutine[Any, Any, Any]:
                return cast("Coroutine[Any, Any, Any]", runner.follow_up(message, on_event=listener, identity=identity))
        else:
            self._continued_from = None

            def start(listener: Callable[[Any], None]) -> Coroutine[Any, Any, Any]:
                return cast("Coroutine[Any, Any, Any]", runner.run(message, on_event=listener, identity=identity))

        # Sent, the message leaves the box (as in a chat): the run's masked record keeps it, and the
        # widget's saved state never holds what a redaction policy covers.
        self.message = ""
        self._launch(start, turn=self.turn + 1 if follow else 1, typed=message)

    def press_stop(self, content: dict[str, Any] | None = None) -> None:
        """What the Stop button does: cancel the run (or the reruns) in flight."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def press_answer(self, content: dict[str, Any]) -> None:
        """Answer the question the run is waiting on: the run resumes where it paused."""
        run = self.run
        if self._in_flight() or run is None or not run.paused:
            return
        answer: Any = content.get("answer")  # refused by name at the door when it is no answer
        choices = (run.recording.meta.get("pause") or {}).get("choices") or []
        picked = content.get("choice")
        if isinstance(picked, int) and not isinstance(picked, bool) and 0 <= picked < len(choices):
            answer = choices[picked]  # the choice itself, not the text its button shows
        checkpoint = run.checkpoint
        self._continued_from = checkpoint
        runner, chat = self.runner, self.chat

        def start(listener: Callable[[Any], None]) -> Coroutine[Any, Any, Any]:
            if chat is not None and chat.pending is run:  # the chat's turn goes on where it paused
                return chat.answer(answer, on_event=listener)
            return cast("Coroutine[Any, Any, Any]", runner.resume(checkpoint, answer, on_event=listener))

        self._launch(start, turn=None)

    def press_abandon(self, content: dict[str, Any] | None = None) -> None:
        """Drop the question on the record (``abandon_pause``); the next Run starts a new conversation."""
        if self._in_flight() or self.run is None or not self.run.paused:
            return
        abandon = getattr(self.runner, "abandon_pause", None)
        if self.chat is not None and self.chat.pending is self.run:
            self.chat.abandon()
            self.turns = self._chat_rows()
        elif callable(abandon):
            abandon()
        self.question = {}
        self.status = "abandoned"
        self.note = "The question was dropped, on the record; the next Run starts a new conversation."
        self.follows = False
        self.turn = 0

    def press_new(self, content: dict[str, Any] | None = None) -> None:
        """Start a new conversation: the next Run is a fresh ``run()``, the turn counter starts over."""
        if self._in_flight():
            return
        self.follows = False
        self.turn = 0
        self.status = "idle"
        self.message = ""
        self.chat = None
        self.turns = []
        self._clear_views()

    def press_click(self, content: dict[str, Any]) -> None:
        """A click in the answer view, the tree or a panel."""
        if content.get("action"):
            edit = content.get("edit")
            self._act(str(content["action"]), content.get("source"), edit if isinstance(edit, str) else None)
        elif content.get("piece"):
            self.open_piece(str(content["piece"]), str(content.get("slot") or ""), call=content.get("call"),
                            with_call=bool(content.get("in_panel", True)))
        elif content.get("call"):
            self.open_call(str(content["call"]))
        elif content.get("answer"):
            self.open_answer()
        elif content.get("member") is not None:
            self.open_member(str(content["member"]))

    _HANDLERS: ClassVar[dict[str, Callable[[Lab, dict[str, Any]], None]]] = {
        "run": press_run, "stop": press_stop, "answer": press_answer, "abandon": press_abandon, "new": press_new,
        "click": press_click, "turn": Reruns.press_turn, "ask": Asking.press_ask, "cite": Asking.press_cite,
    }

    # -- running ------------------------------------------------------------------------------
    def _in_flight(self) -> bool:
        return self._task is not None and not self._task.done()

    def _identity(self) -> dict[str, str] | None:
        chosen = {k: v for k, v in self.identity.items() if k in _IDENTITY_FIELDS and v}
        return chosen or None

    def _launch(self, start: Callable[[Callable[[Any], None]], Coroutine[Any, Any, Any]], *, turn: int | None,
                typed: str = "") -> None:
        """Start a run; ``turn`` is the conversation's turn it will be once it ends (``None``: a resume)."""
        self.card = ""
        self.note = ""
        self.question = {}
        self._clear_views()
        self.steps = []
        self.steps_hidden = 0
        self.status = "running"
        live = LiveSteps(self._show_steps)
        self._live = live
        self._task = self._schedule(self._drive(start(live.on_event), live, turn, typed))

    def _schedule(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """A task on the running loop: the kernel's, where every handler runs (see ``_on_message``)."""
        loop = _running_loop()
        if loop is None:
            coroutine.close()
            raise RuntimeError("Lab: there is no running event loop to run on; use the widget in a Jupyter kernel")
        return loop.create_task(coroutine)

    def _show_steps(self, rows: list[dict[str, Any]], hidden: int) -> None:
        self.steps_hidden = hidden
        self.steps = rows

    async def _drive(self, running: Coroutine[Any, Any, Any], live: LiveSteps, turn: int | None, typed: str) -> None:
        try:
            run = await running
        except Refusal as refusal:
            live.close()
            self.message = typed  # nothing ran: the message goes back in the box, to fix and send again
            self.status = "refused"
            self.card = error_card_html(refusal)
            return
        except asyncio.CancelledError as stopped:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            live.close()
            self._ended(getattr(stopped, "_footprint_run", None), "cancelled",
                        "Stopped: the run was cancelled; what it did up to there is recorded (lab.run).")
            return
        except Exception as failure:
            live.close()
            self._ended(getattr(failure, "_footprint_run", None), "failed",
                        f"The run failed: {type(failure).__name__} (lab.run holds what was recorded).")
            if isinstance(failure, CodedError):  # a run failure says what happened and where the work is kept
                self.card = error_card_html(failure)
            return
        live.close()
        if self.chat is not None and any(held is run for held in self.chat):
            self.turn = len(self.chat)
        elif turn is not None:
            self.turn = turn
        self._ended(run, run.status, "")

    def _ended(self, run: Any, status: str, note: str) -> None:
        self.run = run
        self.note = note
        self.follows = status == "finished" and callable(getattr(self.runner, "follow_up", None))
        if status != "finished":
            self.follows = False
        self.turns = self._chat_rows()
        if run is None:
            self.status = status
            return
        recording = run.recording
        if run.paused:
            pause = recording.meta.get("pause") or {}
            # the question as the run's policy records it (widget state is saved with the notebook), drawn as
            # every value is; a choice's button sends back its place in the list, so it answers with the choice itself
            self.question = {"text": shown(run.masked(run.question or ""), whole="lab.run.question"),
                             "choices": [shown(choice) for choice in pause.get("choices") or []],
                             "tool": shown(pause.get("tool_name", ""))}
        self._show_run(run)
        self.status = status

    def show(self, run: HasRecording) -> None:
        """Show ``run`` (made here or elsewhere: imported from spans, loaded, received) as the Lab's latest run,
        to click into; its calls can be replayed when the Lab has ``replay=`` (a receiver's subscription can call
        this for each run that arrives)."""
        if not hasattr(run, "recording"):
            raise LabConfigError("Lab.show", "run", type(run).__name__, "must be a run (what agent.run returns, "
                                 "Run.from_recording(...), or a run of footprint_lab.otel.from_spans)")
        run = run if isinstance(run, Run) else Run.from_recording(run.recording)
        self._ended(run, run.status, "")

    def _show_run(self, run: Run | None) -> None:
        """Draw ``run`` (a turn of the chat, or the latest run) in the answer view and the tree."""
        self.run = run
        self._clear_views()
        if run is not None:
            self.tree = panels.tree_data(run.recording)
            self.answer_html = panels.answer_html(run.recording)
        self._refresh_static_copy()

    # -- work in the background, and a clean slate ---------------------------------------------
    def _background(self, label: str, before: str, start: Callable[[], Coroutine[Any, Any, Any]],
                    draw: Callable[[Any], str]) -> None:
        self.busy = label
        self.progress = {}

        async def work() -> None:
            try:
                report = await start()
                self.panel_html = before + draw(report)
            except Refusal as refusal:
                self.panel_html = before + error_card_html(refusal)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
                self.panel_html = before
                self.note = "Stopped: the reruns were cancelled."
            finally:
                with self.hold_sync():  # the bar and its label leave together
                    self.progress = {}
                    self.busy = ""

        self._task = self._schedule(work())

    def _clear_views(self) -> None:
        self.answer_html = ""
        self.panel_html = ""
        self.tree = {}
        self.member_path = ""
        self.member_html = ""
        self.ask_html = ""
        self.ask_state = ""
        self.selection = {}
        self._call = None
        self._piece = None

    # -- display and the saved copy -----------------------------------------------------------
    def _bundle(self) -> dict[str, Any]:
        shown = super()._repr_mimebundle_()
        bundle: dict[str, Any] = dict(shown[0]) if shown is not None else {}
        bundle["text/plain"] = f"{self.title}: {self.status}"
        return bundle

    def _static_bundle(self) -> dict[str, Any]:
        """The static copy, an output of its own: a notebook reopened without the widget's model (no kernel, no
        saved widget state) still shows what the Lab showed, where the widget's output can only say it is gone.
        While the widget is live its style sheet hides the copy (``.fl-static-copy``), so nothing shows twice."""
        return {"text/html": panels.static_copy(self.answer_html) if self.answer_html else "",
                "text/plain": f"{self.title}: {self.status}"}

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        bundle = self._bundle()
        if self.answer_html:  # one bundle (a frontend that asks for one): the copy rides beside the widget
            bundle["text/html"] = panels.static_copy(self.answer_html)
        return bundle, {}

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self._bundle(), raw=True)
        handle = display(self._static_bundle(), raw=True, display_id=True)
        if handle is not None:
            self._handles.append(handle)

    def _refresh_static_copy(self) -> None:
        bundle = self._static_bundle()
        for handle in self._handles:  # every place the Lab was displayed keeps its copy current
            handle.update(bundle, raw=True)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None

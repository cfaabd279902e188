"""One execution of an agent: its live state, and the three ways it ends.

Rule kept: everything an execution changes lives on its :class:`Turn`, never on the agent
instance, so two executions of one agent (members of two compositions, a rerun next to
the original) can never see each other's conversation, pause or slots.

An execution ends one of three ways, each written here once:

- **finished** (:meth:`Turn.finish`): the run with its answer, and the conversation it
  leaves for ``follow_up`` (none when the input guard refused the message);
- **paused** (:meth:`Turn.pause`): a tool asked a person; the asking ``tool`` step closes as
  ``paused`` and the run carries the checkpoint that ``resume`` continues;
- **failed** (:meth:`Turn.fail`): the open step is closed as failed and the run is kept on the
  exception; after a completed tool round the failure is raised again as
  ``RunCheckpointError`` with the conversation up to that round.

Role: core layer; the agent (``core.agent``) drives the steps, this module holds their state.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import types
from collections.abc import Mapping
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any, NamedTuple

from footprint_lab.base.refusal import raised
from footprint_lab.base.unicode import sound_text
from footprint_lab.core.conversation_legs import Leg, Saved, freeze, turn_position
from footprint_lab.core.identity import Identity, memory_identity
from footprint_lab.core.pause import HumanQuestion, Pause
from footprint_lab.core.run import Run, sealer
from footprint_lab.core.runner import ended_status
from footprint_lab.record.lazy_recording import RecordingLater

if TYPE_CHECKING:
    from footprint_lab.record.recorder import Recorder

PAUSE = ("pause",)


class Slots(NamedTuple):
    """What one ``assemble`` step put in the slots, for the ``call-llm`` step that reads them."""

    system_text: str
    #: indexes of the system slot's context pieces, in the order their texts were joined
    system_ids: list[int]
    #: the tool schemas offered, and the indexes of their context pieces
    schemas: list[dict[str, Any]]
    tool_ids: list[int]


class Turn:
    """The live state of one execution (never stored on the agent instance).

    ``runner`` is the agent as its recording names it (``kind``, ``id``, ``name``) and
    ``door`` its class name, as failures name the door that raised.
    """

    __slots__ = ("call_index", "context", "door", "first_run_id", "history", "history_chars", "identity", "leg",
                 "memory", "message", "rec", "run_id", "runner", "sealed", "slots")

    def __init__(self, rec: Recorder, message: Any, identity: Any, leg: Leg, first_run_id: str, *,
                 runner: dict[str, Any], door: str, sealed: bool = False) -> None:
        self.rec = rec
        self.sealed = sealed
        self.run_id = rec.run_id
        self.message = message
        self.identity = identity
        self.leg = leg
        self.runner = runner
        self.door = door
        # the run that opened this conversation, and whom its memory belongs to (core.identity)
        self.first_run_id = first_run_id
        self.memory = memory_identity(identity, first_run_id)
        self.history: list[dict[str, Any]] = []
        self.history_chars = 0
        self.call_index = 0
        # what the last assemble step put in the slots, for the call that reads them
        self.slots = Slots("", [], [], [])
        # this run's declared context (footprint_lab.context), when the agent declares any
        self.context: Any = None

    # -- how an execution ends ----------------------------------------------------------------
    def finish(self, bag: dict[str, Any], answer: str, stopped_early: dict[str, Any] | None) -> Run:
        """The finished run, holding the conversation it leaves (none when the message was refused)."""
        self.rec.emit("run_end", self.rec.path, {"status": "finished"})
        run = self.make_run(bag, "finished", answer, stopped_early, None)
        refused = stopped_early is not None and stopped_early["reason"] == "input_refused"
        run._conversation = self.leave("input-refused" if refused else "finished")
        return run

    def pause(self, bag: dict[str, Any], asked: HumanQuestion) -> Run:
        """Close the asking tool's step as paused and return the paused run with its checkpoint."""
        from footprint_lab.core.checkpoint import checkpoint_from

        rec = self.rec
        call = self.leg.call
        pause = Pause(question=asked.question, tool_name=call.name, tool_call_id=call.id, run_id=self.run_id,
                      choices=asked.choices)
        step_id = rec.current
        rec.write(PAUSE, "set", pause.as_data())
        rec.emit("tool_end", step_id, {"tool": call.name, "tool_call_id": call.id, "paused": True, **self.leg.who})
        rec.end("paused")
        rec.meta["pause"] = pause.as_data()
        rec.emit("run_end", rec.path, {"status": "paused"})
        saved = self.leave("paused", pause=pause)
        run = self.make_run(bag, "paused", None, None, None)
        run.question = asked.question
        run.checkpoint = checkpoint_from(saved)
        run._conversation = saved
        return run

    def fail(self, bag: dict[str, Any], exc: BaseException) -> None:
        """Record a failure or a cancellation, keeping the conversation up to the last completed tool round.

        The ended run (status ``failed`` or ``cancelled``, with ``checkpoint`` when a round had
        completed) rides on the exception for the agent to keep as ``last_run``. A failure after
        a completed round is raised again as ``RunCheckpointError``; a cancellation is not
        converted (it must reach whoever cancelled), it only carries the conversation (``_saved``).
        """
        from footprint_lab.core.checkpoint import RunCheckpointError, checkpoint_from

        rec = self.rec
        status = ended_status(exc)
        rec.fail_open_step(status)
        error = {"type": type(exc).__name__, "code": getattr(exc, "code", None), "step_id": rec.current}
        if status == "failed":  # what failed, masked and bounded as every recorded value (a cancel is no failure)
            _, error["message"], frame = raised(exc, rec.clean)
            if frame is not None:
                error["frame"] = frame
        rec.emit("error", rec.current, dict(error))
        rec.emit("run_end", rec.path, {"status": status})
        ended = self.make_run(bag, status, None, None, error)
        with contextlib.suppress(AttributeError):  # some built-in exceptions take no attributes
            exc._footprint_run = ended  # type: ignore[attr-defined]
        good = self.leg.good
        if good is None or not isinstance(exc, Exception | asyncio.CancelledError):
            return
        saved = self.leave(status, history=self.history[:good])
        checkpoint = ended.checkpoint = checkpoint_from(saved)
        rounds = turn_position(self.history[:good])[0]
        # The recording says what was kept (the checkpoint itself holds the conversation: it stays on the run).
        rec.meta["kept"] = {"tool_rounds": rounds, "messages": good, "resume_with": "resume_on_error"}
        if status == "cancelled":
            exc._saved = saved  # type: ignore[union-attr]
            return
        _, stage, iteration = rec.steps[-1][:3] if rec.steps else ("", "run", None)
        start = self.leg.start
        err = RunCheckpointError(
            f"{self.door}.{start.how if start is not None else 'run'}", checkpoint=checkpoint,
            saved=saved, cause=exc, stage=stage, iteration=iteration or self.leg.iteration, step_id=rec.current,
            rounds=rounds,
        )
        err._footprint_run = ended  # type: ignore[attr-defined]
        raise err from exc

    def leave(
        self, outcome: str, *, pause: Pause | None = None, history: list[dict[str, Any]] | None = None,
    ) -> Saved:
        """What this execution leaves for its runner to hold (the agent's ``_drive`` holds it)."""
        scrubber = self.leg.scrubber
        carried = self.leg.start.carried if self.leg.start is not None else None
        frozen, held = (None, 0) if outcome == "input-refused" else freeze(
            self.history if history is None else history, carried)
        return Saved(
            outcome=outcome, run_id=self.run_id, first_run_id=self.first_run_id, history=frozen,
            identity=self.identity, agent_id=self.runner["id"],
            policy=scrubber.policy if scrubber is not None else None, marks=self.leg.marks(), pause=pause,
            scrubber=scrubber, sealed=self.sealed, carried=carried, held=held,
        )

    def make_run(
        self, bag: dict[str, Any], status: str, answer: str | None, stopped_early: dict[str, Any] | None,
        error: dict[str, Any] | None,
    ) -> Run:
        """The run users hold; its recording is built from the recorder when first asked for."""
        ended = perf_counter_ns()
        rec = self.rec
        scrubber = self.leg.scrubber
        build = RecordingLater(rec, runner=self.runner, status=status, bag=bag, answer=answer,
                               identity=_identity_dict(self.identity), stopped_early=stopped_early, error=error,
                               ended=ended, report=scrubber.report() if scrubber is not None else None,
                               seal=sealer(self.sealed))
        return Run(run_id=rec.run_id, status=status, answer=answer, build=build, stopped_early=stopped_early,
                   shown_answer=rec.clean(answer), clean=rec.clean if rec.policy is not None else None,
                   policy=getattr(rec.policy, "policy", None))


def input_refused() -> dict[str, Any]:
    """Why a run stopped early when its input guard refused the message."""
    return {"reason": "input_refused", "detail": "the input guard refused the message; the model was not called"}


def _identity_dict(identity: Identity | None) -> dict[str, str] | None:
    return identity.as_dict() if identity is not None else None


def turn_text(message: dict[str, Any]) -> str:
    """What the model reads of one conversation turn, as one string."""
    text = message.get("content") or ""
    calls = message.get("tool_calls")
    if not calls:
        return text
    rendered = "\n".join(f"{c['name']}({json.dumps(c['args'], ensure_ascii=False, sort_keys=True)})" for c in calls)
    return f"{text}\n{rendered}" if text else rendered


def result_text(result: Any) -> str:
    """A tool's return value as the text the model reads (and the record keeps): text that can be saved (a lone
    surrogate made U+FFFD); a pydantic model or a dataclass as its data, as JSON (a policy reads its keys)."""
    if isinstance(result, str):
        return sound_text(result)
    if isinstance(result, tuple) and hasattr(result, "_asdict"):  # a NamedTuple: JSON would write a bare list
        result = result._asdict()
    try:
        return sound_text(json.dumps(result, default=_as_data, ensure_ascii=False))
    except (TypeError, ValueError):
        return sound_text(str(result))


def _as_data(value: Any) -> Any:
    """What JSON writes for a value it cannot write itself: the data of a model, a dataclass, a mapping or a
    namespace, with its keys; anything else by its ``str``."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, types.SimpleNamespace):
        return vars(value)
    return str(value)

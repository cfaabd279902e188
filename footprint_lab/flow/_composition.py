"""What every composition shares: the door, the one run it opens, and how members are mounted.

Rules kept here:

- A composition is a :class:`~footprint_lab.core.runner.Runner`: the same run-input door,
  the same :class:`~footprint_lab.core.run.Run` result, ``run_sync``, and any runner
  (an Agent, an LLMCall, another composition) can be a member.
- A member's ``run()`` never runs. Each member is mounted through its ``_execute`` with a
  child :class:`~footprint_lab.core.runner.Mount` whose ``path`` is the id of the step
  that mounts it, so step ids join across the whole tree
  (``sequence-step#2/call-llm#3``), and whose ``link`` is the run this execution serves
  (:mod:`footprint_lab.core.member_run`). The outermost ``run()`` opens that run and
  closes it when it returns; nested compositions hand the same link down.
- Nothing per-run lives on the instance: no in-flight guard, no last run. One composition
  can serve any number of overlapping runs.
- The composition records its own steps (``seed``, one step per mount, ``final``) with
  tracked reads and one commit each: a member's input is read from the output of the
  step that produced it, so the evidence chain crosses members. Each member's run is a
  child of the composition's recording.
- A member that pauses (a tool asked a person) pauses the whole composition; its
  checkpoint (:class:`~footprint_lab.flow.checkpoint.FlowCheckpoint`, plain JSON) keeps
  every answer already produced, and ``resume`` (in this process or another, on a
  composition built the same way) checks it before anything runs, replays those answers
  and continues inside the paused member.
- A run is covered by every redaction policy its members declare, at any depth: one
  scrubber serves the whole run (the composition's own steps and every member's), so a
  value one member keeps out of its records stays out of the composition's and of every
  other member's. The policies are combined when the composition is built.

Role: flow layer; every composition subclasses :class:`Composition` and writes only its
``_flow``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, cast

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.conversation import AnswerInput, answer_text
from footprint_lab.core.conversation_legs import who
from footprint_lab.core.conversation_refusals import ResumeIdentityConflictError
from footprint_lab.core.door import RunInput, normalize_run_input
from footprint_lab.core.identity import IdentityInput, coerce_identity
from footprint_lab.core.member_run import ParentRun, check_member_input, close_parent_run, open_parent_run, run_for
from footprint_lab.core.run import Run, sealer
from footprint_lab.core.runner import Listener, Mount, Runner, ended_status, new_run_id, run_coroutine_sync
from footprint_lab.flow._members import failure_summary
from footprint_lab.flow.refusals import (
    CompositionConfigError,
    ResumeDivergedError,
)
from footprint_lab.record.lazy_recording import RecordingLater
from footprint_lab.record.recorder import Recorder
from footprint_lab.record.schema import ANSWER, INPUT_MESSAGE, MEMBER_KEY, Path, output
from footprint_lab.record.step_id import parse_step_id
from footprint_lab.redact.policy import Redaction, RedactionConfigError, combine_policies

if TYPE_CHECKING:
    from collections.abc import Mapping

    from footprint_lab.flow.checkpoint import FlowCheckpoint

INPUT: Path = INPUT_MESSAGE
#: what a composition's ``resume`` takes: its run's ``FlowCheckpoint``, the same as a dict, or its JSON text
FlowCheckpointInput: TypeAlias = "FlowCheckpoint | Mapping[str, Any] | str"


class MemberPaused(Exception):
    """Control flow, not an error: a member paused, so its composition stops and pauses too."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


@dataclass(slots=True)
class _Exec:
    """The live state of one composition execution (never stored on the instance)."""

    rec: Recorder
    serves: ParentRun
    listeners: tuple[Listener, ...]
    link: str | None
    scrubber: Any = None
    resume: Any = None  # the FlowCheckpoint a resumed leg continues
    resume_answer: Any = None
    retry: bool = False  # the resumed leg picks a failed run up (resume_on_error) rather than answering a pause
    children: list[tuple[int, Run]] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)
    paused: dict[str, Any] = field(default_factory=dict)
    #: members that failed in this leg, with what each kept (``None``: nothing)
    failed: dict[str, Any] = field(default_factory=dict)
    replayed: set[str] = field(default_factory=set)
    resumed: set[str] = field(default_factory=set)
    stopped_early: dict[str, Any] | None = None

    def held(self, key: str) -> str:
        """A member's key as the checkpoint this leg resumes holds it (masked when the policy covers it)."""
        return key if self.resume is None else self.resume.held_key(key)

    def shown(self, text: str) -> str:
        """``text`` (a member's name, a door naming one) as an error of this run may quote it: masked by the
        run's policy, as the records mask it."""
        return text if self.scrubber is None else str(self.scrubber.quietly(text))

    async def mount(self, key: str, member: Runner, input: Any, step_id: str, *, door: str) -> str:
        """Run ``member`` under ``step_id`` for the run this execution serves; its answer.

        A member whose answer the paused leg already produced is not run again; the member
        the person's answer is for resumes with it; another member still waiting on a person
        stays paused without running.
        """
        resume = self.resume
        held = self.held(key)
        if resume is not None and held in resume.answers:
            self.replayed.add(key)
            self.answers[key] = resume.answers[held]
            return cast("str", resume.answers[held])
        if resume is not None and held in resume.paused and (self.retry or held != resume.asking):
            self.paused[key] = resume.paused[held]
            raise MemberPaused(key)
        door = self.shown(door)  # it names the member
        bag = normalize_run_input(input, door)
        check_member_input(bag, door, member=True)
        child = Mount(run_id=self.serves.run_id, path=step_id, listeners=self.listeners, link=self.link,
                      scrubber=self.scrubber)
        child.extra[MEMBER_KEY] = key
        if resume is not None and not self.retry and held == resume.asking:
            child.extra["resume"] = (resume.paused[held], self.resume_answer)
            self.resumed.add(held)
        elif resume is not None and self.retry and resume.failed.get(held) is not None:
            child.extra["retry"] = resume.failed[held]
        order = parse_step_id(step_id)
        position = order.number if order is not None else len(self.children)
        try:
            run = await member._execute(bag, child)
        except BaseException as exc:
            failed = getattr(exc, "_footprint_run", None)
            if isinstance(failed, Run):
                self.children.append((position, failed))
            if isinstance(exc, Exception):
                from footprint_lab.flow.checkpoint import kept_by

                self.failed[key] = kept_by(exc)
            raise
        self.children.append((position, run))
        if run.status == "paused":
            self.paused[key] = run.checkpoint
            raise MemberPaused(key)
        answer = run.answer or ""
        self.answers[key] = answer
        return answer

    def diverged_from(self, keys: Iterable[str], chosen: str) -> str | None:
        """On a resume: the one of ``keys`` the paused run took, when it is not ``chosen``."""
        if self.resume is None:
            return None
        taken = [key for key in keys if self.held(key) in self.resume.answers or self.held(key) in self.resume.paused]
        return taken[0] if taken and chosen not in taken else None

    def check_reached(self, composition: str) -> None:
        """On a resume: refuse a run that never got to the member the person's answer is for."""
        if self.resume is not None and not self.retry and self.resume.asking not in self.resumed:
            raise ResumeDivergedError(composition, self.shown(self.resume.asking))

    def close(self, key: str, answer: str) -> None:
        """Write a mounted member's answer and close the current step with its one commit."""
        self.rec.write(output(key), "set", answer)
        self.rec.end("replayed" if key in self.replayed else "ok")


class Composition(Runner):
    """Base of every composition. Subclasses build their members, call ``_cover()``, and write ``_flow``.

    ``redact`` is the policy every run of the composition is covered by: the union of its
    members' policies, at any depth (``None`` when no member declares one). ``seal`` is ``True``
    when any member seals (``Agent(..., seal=True)``): the composition's recording is then
    sealed with every member's inside it.
    """

    kind: ClassVar[str] = "composition"
    members: list[tuple[str, Runner]]
    redact: Redaction | None = None
    seal: bool = False

    def __init__(self, *, id: str | None = None, name: str | None = None) -> None:
        for setting, value in (("id", id), ("name", name)):
            if value is not None and not isinstance(value, str):
                raise CompositionConfigError(type(self).__name__, setting, describe_shape(value),
                                             "must be a string or None")
        super().__init__(id=id, name=name)

    def _cover(self) -> None:
        """Combine the members' redaction policies (two different patterns under one name are refused here);
        a composition with a sealing member, at any depth, seals its whole run."""
        self.redact = combine_policies(*(getattr(runner, "redact", None) for runner in self._runners()))
        self.seal = any(getattr(runner, "seal", False) for runner in self._runners())

    def _runners(self) -> Iterable[Runner]:
        """Every runner this composition may mount."""
        return [runner for _, runner in self.members]

    def _member_for(self, key: str) -> Runner | None:
        """The runner mounted under ``key`` (what outputs and checkpoints are keyed by), or ``None``."""
        return next((runner for name, runner in self.members if name == key), None)

    def _member_keys(self) -> list[str]:
        """Every key a member may be mounted under, in order (each one ``_member_for`` finds)."""
        return [key for key, _ in self._parts() if key is not None]

    # -- rebuilding for reruns (footprint_lab.explain) --------------------------------------
    def without(self, exclude: Iterable[str] | str = (), *, seed: int | None = None) -> Composition:
        """A new composition of the same shape, each member rebuilt without the ``exclude`` ids.

        A bare id removes that source from every member that has it; ``member/id`` (the path
        ``run.suspects()`` shows in ``removal_id``) from that member only. ``seed`` goes to every
        member. Unknown ids are refused with the ids this composition's members have.
        """
        from footprint_lab.flow._rebuild import rebuilt

        return rebuilt(self, f"{type(self).__name__}.without", exclude=exclude, force=(), seed=seed)

    def with_forced(self, force: Iterable[str] | str, *, exclude: Iterable[str] | str = (),
                    seed: int | None = None) -> Composition:
        """A new composition whose members have the ``force`` declarations forced in (see ``Agent.with_forced``)."""
        from footprint_lab.flow._rebuild import rebuilt

        return rebuilt(self, f"{type(self).__name__}.with_forced", exclude=exclude, force=force, seed=seed)

    def source_ids(self, *, forcible: bool = False) -> list[str]:
        """Every id ``without`` accepts (``forcible``: every id ``with_forced`` accepts), bare and by member."""
        from footprint_lab.flow._rebuild import composition_ids

        return composition_ids(self._parts(), forcible=forcible)

    def _parts(self) -> list[tuple[str | None, Runner]]:
        """The members a rebuild replaces, in order, each under the key its sources are qualified by."""
        return [(key, runner) for key, runner in self.members]

    def _rebuilt(self, runners: list[Runner]) -> Composition:
        """This composition built again with ``runners`` in place of ``_parts()``, every other setting kept."""
        raise TypeError(f"{type(self).__name__} does not say how it is rebuilt")

    # -- the doors ------------------------------------------------------------------------
    async def run(self, input: RunInput = None, /, *, on_event: Listener | None = None,
                  identity: IdentityInput = None) -> Run:
        """Run once on ``input`` (a message, or ``{"message": ...}``), for ``identity`` when one is named."""
        bag = normalize_run_input(input, self.door, identity=identity)
        named = coerce_identity(bag.pop("identity", None), self.door)
        listeners = self._listeners_for(on_event)
        opened = open_parent_run(new_run_id(), named, door=self.door)
        try:
            mount = Mount(run_id=opened.run_id, listeners=listeners, link=opened.link,
                          scrubber=self.redact.for_run() if self.redact is not None else None)
            return await self._kept(self._execute(bag, mount))
        finally:
            close_parent_run(opened)

    async def resume(
        self, checkpoint: FlowCheckpointInput, answer: AnswerInput, /, *, identity: IdentityInput = None,
        redact: Redaction | None = None, on_event: Listener | None = None,
    ) -> Run:
        """Continue a paused run of this composition: ``answer`` goes to the member that asked.

        ``checkpoint`` is ``run.checkpoint`` (a ``FlowCheckpoint``), or the same as a dict or
        JSON text from a store: it is checked against this composition before anything runs,
        so a stored one resumes on a freshly built composition of the same shape. The run
        continues for the person it was paused for (naming anyone else is refused), under its
        own run id; answers already produced are replayed, not recomputed. When several
        members are waiting, the answer goes to the first of them (``checkpoint.question`` is
        its question) and the run pauses again for the next. ``redact`` names patterns a stored
        checkpoint's redaction policy refers to that no member here declares.
        """
        door = f"{type(self).__name__}.resume"
        named = coerce_identity(identity, door)
        if redact is not None and not isinstance(redact, Redaction):
            raise RedactionConfigError("redact", describe_shape(redact), "must be a Redaction(keys=..., patterns=...)")
        text = answer_text(answer, door)
        sources = combine_policies(self.redact, redact)
        read, waiting = self._read_checkpoint(checkpoint, door, sources, named, failed=False)
        return await self._continue(read, door, waiting, sources, on_event, ("resume", (read, text)))

    def _read_checkpoint(self, checkpoint: Any, door: str, sources: Redaction | None, named: Any, *,
                         failed: bool) -> tuple[Any, list[Any]]:
        """A paused (or failed) run's checkpoint read against this composition; another person is refused."""
        from footprint_lab.flow.checkpoint import read_flow_checkpoint

        read, waiting = read_flow_checkpoint(checkpoint, self, door, redact=sources, failed=failed)
        if named is not None and named != read.owner():
            raise ResumeIdentityConflictError(door)
        return read, waiting

    async def _continue(self, checkpoint: Any, door: str, waiting: list[Any], sources: Redaction | None,
                        on_event: Listener | None, how: tuple[str, Any]) -> Run:
        """Run the next leg of a checkpointed run under its own run id, for the person it served."""
        # The leg is covered at least as the earlier one was: by what its waiting members carry too.
        policy = combine_policies(sources, *(start.policy for start in waiting))
        matched = sorted({name for start in waiting for name in (start.marks or {}).get("matched", ())})
        listeners = self._listeners_for(on_event)
        opened = open_parent_run(checkpoint.run_id, checkpoint.owner(), door=door)
        try:
            scrubber = policy.for_run({"matched": matched}) if policy is not None else None
            if scrubber is not None:
                scrubber.teach(checkpoint.learned())  # what the earlier leg learned is masked from the start
            mount = Mount(run_id=opened.run_id, listeners=listeners, link=opened.link, scrubber=scrubber)
            mount.extra[how[0]] = how[1]
            return await self._kept(self._execute(dict(checkpoint.input), mount))
        finally:
            close_parent_run(opened)

    async def resume_on_error(
        self, checkpoint: FlowCheckpointInput, /, *, identity: IdentityInput = None, redact: Redaction | None = None,
        on_event: Listener | None = None,
    ) -> Run:
        """Pick a failed run of this composition up: ``await flow.resume_on_error(err.checkpoint)``.

        ``err`` is the :class:`~footprint_lab.flow.FlowCheckpointError` the run raised; its
        checkpoint (or the same as a dict or JSON text) is checked against this composition
        before anything runs. The run goes on under its own run id, for the person it served:
        the answers already produced are replayed, not recomputed; a member that failed after
        completing a tool round goes on from there (no finished tool runs again), any other
        failed member runs again from its message. ``redact`` is as for ``resume``.
        """
        door = f"{type(self).__name__}.resume_on_error"
        named = coerce_identity(identity, door)
        if redact is not None and not isinstance(redact, Redaction):
            raise RedactionConfigError("redact", describe_shape(redact), "must be a Redaction(keys=..., patterns=...)")
        sources = combine_policies(self.redact, redact)
        read, waiting = self._read_checkpoint(checkpoint, door, sources, named, failed=True)
        return await self._continue(read, door, waiting, sources, on_event, ("retry", read))

    def resume_on_error_sync(self, checkpoint: FlowCheckpointInput, /, *, identity: IdentityInput = None,
                             redact: Redaction | None = None, on_event: Listener | None = None) -> Run:
        """``resume_on_error`` from synchronous code, inside a running event loop or not (see ``run_sync``)."""
        return run_coroutine_sync(self.resume_on_error(checkpoint, identity=identity, redact=redact,
                                                       on_event=on_event))

    def resume_sync(self, checkpoint: FlowCheckpointInput, answer: AnswerInput, /, *, identity: IdentityInput = None,
                    redact: Redaction | None = None, on_event: Listener | None = None) -> Run:
        """``resume`` from synchronous code, inside a running event loop or not (see ``run_sync``)."""
        return run_coroutine_sync(self.resume(checkpoint, answer, identity=identity, redact=redact,
                                              on_event=on_event))

    def _waiting_checkpoint(
        self, checkpoint: Any, door: str, *, run_id: str, owner: Any, redact: Any,
    ) -> tuple[Any, list[Any]]:
        from footprint_lab.flow.checkpoint import read_flow_checkpoint

        return read_flow_checkpoint(checkpoint, self, door, member_of=(run_id, owner), redact=redact)

    def _failed_checkpoint(
        self, checkpoint: Any, door: str, *, run_id: str, owner: Any, redact: Any,
    ) -> tuple[Any, list[Any]]:
        from footprint_lab.flow.checkpoint import read_flow_checkpoint

        return read_flow_checkpoint(checkpoint, self, door, member_of=(run_id, owner), redact=redact, failed=True)

    # -- one execution --------------------------------------------------------------------
    async def _execute(self, bag: dict[str, Any], mount: Mount) -> Run:
        serves = run_for(mount, bag, self.door)
        scrubber = mount.scrubber
        if scrubber is None and self.redact is not None:  # mounted by a runner that hands down no scrubber
            scrubber = self.redact.for_run()
        rec = Recorder(serves.run_id, path=mount.path, listeners=mount.listeners, policy=scrubber)
        if MEMBER_KEY in mount.extra:
            rec.meta[MEMBER_KEY] = mount.extra[MEMBER_KEY]
        exe = _Exec(rec=rec, serves=serves, listeners=mount.listeners, link=mount.link, scrubber=scrubber)
        resume = mount.extra.get("resume")
        if resume is not None:
            exe.resume, exe.resume_answer = resume
        elif "retry" in mount.extra:  # a failed run picked up again: by resume_on_error, or by the composition above
            exe.resume, exe.retry = mount.extra["retry"], True
        rec.emit("run_start", rec.path, {"runner": self.kind, "id": self.id, "name": self.name,
                                         **who(serves.identity)})
        rec.begin("seed")
        rec.write(INPUT, "set", bag["message"])
        rec.end()
        try:
            try:
                source: Path | None = await self._flow(exe)
            except MemberPaused:
                source = None
            exe.check_reached(type(self).__name__)
        except BaseException as exc:
            status = ended_status(exc)
            rec.fail_open_step(status)
            error = {**failure_summary(exc), "step_id": rec.current}
            rec.emit("error", rec.current, dict(error))
            rec.emit("run_end", rec.path, {"status": status})
            failed = self._make_run(exe, bag, status, None, error)
            with contextlib.suppress(AttributeError):  # some built-in exceptions take no attributes
                exc._footprint_run = failed  # type: ignore[attr-defined]
            from footprint_lab.flow.checkpoint import failure_kept  # pydantic: a checkpoint's model

            kept = failure_kept(self, exe, bag, exc)
            if kept is None:
                raise
            failed.checkpoint = kept.checkpoint  # reachable from the failed run too, as an agent's is
            kept._footprint_run = failed  # type: ignore[attr-defined]
            raise kept from exc
        if source is None:
            if rec.steps and rec.steps[-1][5] == "running":
                rec.end("paused")
            rec.emit("run_end", rec.path, {"status": "paused"})
            from footprint_lab.flow.checkpoint import paused_checkpoint  # pydantic: a checkpoint's model

            return self._make_run(exe, bag, "paused", None, None, checkpoint=paused_checkpoint(self, exe, bag))
        rec.begin("final")
        answer = str(rec.read(source) or "")
        rec.write(ANSWER, "set", answer)
        rec.end()
        rec.emit("run_end", rec.path, {"status": "finished"})
        return self._make_run(exe, bag, "finished", answer, None)

    async def _flow(self, exe: _Exec) -> Path:
        """Run the members; return the tracked path holding the composition's answer."""
        raise TypeError(f"{type(self).__name__} does not define its flow")

    def _runner_info(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "name": self.name}

    def _make_run(
        self, exe: _Exec, bag: dict[str, Any], status: str, answer: str | None, error: dict[str, Any] | None,
        *, checkpoint: Any = None,
    ) -> Run:
        ended = perf_counter_ns()
        rec = exe.rec
        runner_info = self._runner_info()
        identity = exe.serves.identity
        children = [run for _, run in sorted(exe.children, key=lambda pair: pair[0])]
        stopped_early = exe.stopped_early
        report = exe.scrubber.report() if exe.scrubber is not None else None

        build = RecordingLater(rec, runner=runner_info, status=status, bag=bag, answer=answer,
                               identity=identity.as_dict() if identity is not None else None,
                               stopped_early=stopped_early, error=error, ended=ended, report=report,
                               seal=sealer(self.seal), children=children)
        return Run(
            run_id=rec.run_id, status=status, answer=answer, build=build, stopped_early=stopped_early,
            question=checkpoint.question if checkpoint is not None else None, checkpoint=checkpoint,
            shown_answer=rec.clean(answer),
            clean=rec.clean if rec.policy is not None else None, policy=getattr(rec.policy, "policy", None),
        )

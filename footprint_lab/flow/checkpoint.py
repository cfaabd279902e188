"""``FlowCheckpoint``: a paused composition as plain JSON, and the checks that guard resuming one.

Rule kept here: a paused composition's checkpoint leaves this process and may come back
from any store, so a resume reads it like a caller's input, field by field, before
anything runs: every refusal names the field (``paused.fan.paused.approve.history[2].role``)
and describes what arrived by its shape, never by its value.

A flow checkpoint holds ``schema_version``, ``run_id`` (the run every member serves; a
resume continues under it), ``runner`` (the composition's kind, id and name), ``identity``
(only when the caller named one), ``input`` (the run's input), ``answers`` (every member
answer already produced, by member name) and ``paused`` (the checkpoint of each member
waiting on a person: an agent's :class:`~footprint_lab.Checkpoint`, or for a nested
composition another ``FlowCheckpoint``). The next answer goes to the first of them.

A run that failed after some of its members answered leaves the same checkpoint on
:class:`FlowCheckpointError`, with ``failed``: each member that failed, with what it kept
(an agent's checkpoint after a completed tool round, a nested composition's own
``FlowCheckpoint``) or ``null``; ``resume_on_error`` replays the answers and picks each failed
member up from what it kept. A checkpoint written before ``failed`` existed reads as one with none.

Read against the composition resuming it, a checkpoint may only name that composition's
own members, each paused entry is read by the member it names (an agent checks its
conversation, identity and redaction policy exactly as its own ``resume`` would), and every
nested checkpoint must belong to the same run and the same person. A stored checkpoint
therefore resumes on a freshly built composition of the same shape, in any process.

The composition's id and name and its member names (the keys of ``answers``, ``paused`` and
``failed``) are what a resume matches a checkpoint on; under a policy they are held masked
(:func:`held_keys`, two names masked alike kept two: ``[redacted:acme]#2``), and a resume masks the
resuming composition's own the same way before it compares them.

Like an agent's checkpoint it is a redaction surface (:mod:`footprint_lab.core.checkpoint_masks`): under
a policy its input, answers, identity and every nested checkpoint show masks, the real values stay
private to the process that ran it, and a stored one holding masks resumes once told how
(``unmask({...})`` or ``accept_masked()``, which reach the nested checkpoints too).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, Field, PrivateAttr

from footprint_lab.base.display import bundle
from footprint_lab.base.refusal import Refusal, RunFailure, describe_shape
from footprint_lab.core.checkpoint import (
    Checkpoint,
    InvalidCheckpointError,
    RunCheckpointError,
    check_envelope,
    check_identity_data,
    door_checkpoint,
    nonblank,
    resume_can_help,
)
from footprint_lab.core.checkpoint_masks import Concealed, Mapper, map_value, shown_label
from footprint_lab.core.conversation_refusals import ResumeIdentityConflictError
from footprint_lab.core.identity import Identity
from footprint_lab.record.recording import Seal
from footprint_lab.record.records import jsonable
from footprint_lab.sealing.seal import seal

if TYPE_CHECKING:
    from collections.abc import Callable

    from footprint_lab.core.conversation_legs import Continuation
    from footprint_lab.core.runner import Runner
    from footprint_lab.flow._composition import Composition, _Exec
    from footprint_lab.redact.policy import Redaction

FLOW_CHECKPOINT_VERSION = 1
FLOW_CHECKPOINT_FIELDS = ("schema_version", "run_id", "runner", "identity", "input", "answers", "paused", "failed",
                          "seal")
#: Input keys that would say whom the run is for: the doors refuse them, so no checkpoint carries them.
_CLAIMS = ("parent_run", "identity")
_AS_GIVEN = ("Pass run.checkpoint of a paused run of this composition as it was written; a stored one reads "
             "back with FlowCheckpoint.model_validate_json(text) or can be passed as the JSON text itself.")


class FlowCheckpoint(Concealed):
    """Where a paused composition stopped: plain JSON, resumable in this process or another.

    ``answers`` holds every member answer already produced; ``paused`` the checkpoint of each
    member waiting on a person (more than one when parallel members asked). The next answer
    goes to the first of them (``asking``, whose question is ``question``); the others stay
    paused, untouched, for the resumes after it.
    """

    model_config = ConfigDict(extra="forbid")
    _VALUE_FIELDS: ClassVar[tuple[str, ...]] = ("identity", "input", "answers")

    schema_version: int = FLOW_CHECKPOINT_VERSION
    run_id: str
    runner: dict[str, str | None]
    identity: dict[str, str] | None = None
    input: dict[str, Any]
    answers: dict[str, str]
    paused: dict[str, Checkpoint | FlowCheckpoint]
    #: members that failed (a failed run's checkpoint), each with what it kept, or ``None``
    failed: dict[str, Checkpoint | FlowCheckpoint | None] = Field(default_factory=dict)
    #: set by ``footprint_lab.seal`` (and by a composition with a sealing member): over the saved form above
    seal: Seal | None = None

    #: read by a resume: each member's key (as the resuming composition names it) -> as this checkpoint holds it
    _held: dict[str, str] = PrivateAttr(default_factory=dict)

    def held_key(self, key: str) -> str:
        """The key member ``key`` of the resuming composition is held under here (masked, when it was)."""
        held: dict[str, str] = getattr(self, "_held", None) or {}  # a pickle carries none
        return held.get(key, key)

    def _shown_labels(self, policy: Redaction) -> dict[str, Any]:
        """The composition's id and name, as the policy masks them."""
        return {"runner": {field: value if field == "kind" else shown_label(value, policy)
                           for field, value in self.runner.items()}}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return bundle("flow_checkpoint", self, lambda: {"text/plain": repr(self)}, include, exclude)

    @property
    def asking(self) -> str:
        """The member the next answer is for (empty for a failed run's checkpoint that waits on nobody)."""
        return next(iter(self.paused), "")

    @property
    def question(self) -> str:
        """What that member asked (empty for a failed run's checkpoint that waits on nobody)."""
        return self.questions.get(self.asking, "")

    @property
    def questions(self) -> dict[str, str]:
        """What each waiting member asked, by member name."""
        return {key: _question_of(waiting) for key, waiting in self.paused.items()}

    @classmethod
    def _map_values(cls, values: dict[str, Any], fn: Mapper) -> dict[str, Any]:
        """The run's input, every member answer (by member name), the identity's fields."""
        out = dict(values)
        out["input"] = map_value(values.get("input"), fn)
        answers = values.get("answers")
        if isinstance(answers, dict):
            out["answers"] = {key: fn(answer) for key, answer in answers.items()}
        identity = values.get("identity")
        if isinstance(identity, dict):
            out["identity"] = {key: fn(value) for key, value in identity.items()}
        return out

    @classmethod
    def _valued(cls, values: dict[str, Any]) -> Any:
        """The answers without the member names they are keyed by (a masked name is no masked value)."""
        answers = values.get("answers")
        return {**values, "answers": list(answers.values())} if isinstance(answers, dict) else values

    def _nested(self) -> Iterator[tuple[str, str, Concealed]]:
        for field in ("paused", "failed"):
            for key, inner in getattr(self, field).items():
                if isinstance(inner, Concealed):
                    yield field, key, inner

    def owner(self) -> Identity | None:
        """Whom the paused run serves: the identity its caller named, or ``None``."""
        return Identity(**self.identity) if self.identity is not None else None


class FlowCheckpointError(RunFailure):
    """Raised when a composition's run fails after some of its members answered (or kept work of their own).

    A :class:`~footprint_lab.errors.RunFailure`, not a refusal: work was done, and none of it is
    lost. ``checkpoint`` is a :class:`FlowCheckpoint` holding every answer already produced and, under ``failed``, what
    each failed member kept; ``cause`` is the original error (the innermost one, when a nested
    composition failed); ``member`` names the member that failed (its path from this
    composition); ``resumable`` says whether ``composition.resume_on_error(err.checkpoint)`` can
    get past the cause as it is. The message names the cause by type and code, never its text.
    """

    code: ClassVar[str] = "ERR_FLOW_CHECKPOINT"
    fields: ClassVar[tuple[str, ...]] = ("member", "resumable", "checkpoint", "cause")

    def __init__(self, door: str, *, checkpoint: FlowCheckpoint, cause: BaseException, member: str | None) -> None:
        resumable, why = resume_can_help(cause)
        code = getattr(cause, "code", None)
        named = f"{type(cause).__name__}{f', {code}' if isinstance(code, str) else ''}"
        where = f"member '{member}' failed" if member else "the run failed between its members"
        kept = len(checkpoint.answers)
        then = ("Once the cause has passed, await composition.resume_on_error(err.checkpoint) continues there: the "
                "members that answered are not run again, and a failed agent goes on from its last completed tool "
                "round." if resumable else
                f"Resuming as it is would not help: {why}; then composition.resume_on_error(err.checkpoint) can "
                "continue.")
        message = (f"{door}: {where} ({named}). Nothing done before it is lost: err.checkpoint keeps the {kept} "
                   f"answer{'s' if kept != 1 else ''} already produced and what the failed member kept, and "
                   f"err.cause the original error. {then}")
        super().__init__(message)
        self.checkpoint = checkpoint
        self.cause = cause
        self.member = member
        self.resumable = resumable


def kept_by(exc: BaseException) -> Checkpoint | FlowCheckpoint | None:
    """What a failed member kept: the checkpoint on its ``RunCheckpointError`` / ``FlowCheckpointError``."""
    if isinstance(exc, RunCheckpointError | FlowCheckpointError):
        return exc.checkpoint
    return None


def root_cause(exc: BaseException) -> BaseException:
    """The original error under any checkpoint errors wrapping it."""
    while isinstance(exc, RunCheckpointError | FlowCheckpointError):
        exc = exc.cause
    return exc


def _question_of(waiting: Checkpoint | FlowCheckpoint) -> str:
    if isinstance(waiting, FlowCheckpoint):
        return waiting.question
    return str((waiting.pause or {}).get("question", ""))


def read_flow_checkpoint(
    value: Any, composition: Composition, door: str, *, member_of: tuple[str, Identity | None] | None = None,
    redact: Redaction | None = None, failed: bool = False,
) -> tuple[FlowCheckpoint, list[Continuation]]:
    """A paused run's checkpoint, checked against ``composition``: the checkpoint, and how each waiting
    agent goes on (its :class:`~footprint_lab.core.conversation_legs.Continuation`, carrying the policy it was
    covered by).

    A nested checkpoint is read ``member_of`` its run (run id, owner): it must belong to
    that run and serve that person (else
    :class:`~footprint_lab.errors.ResumeIdentityConflictError`). ``redact`` is the policy the
    patterns of a carried redaction policy are looked up in. ``failed`` reads it for
    ``resume_on_error`` (a failed run's checkpoint) rather than for ``resume`` (a paused one's).
    """
    data, trusted = door_checkpoint(value, door, _AS_GIVEN)
    if isinstance(value, FlowCheckpoint):  # each member reads its own checkpoint, private values and all
        data["paused"], data["failed"] = dict(value.paused), dict(value.failed)
    if "failed" not in data:  # written before failed runs kept checkpoints
        data["failed"] = {}
    check_envelope(data, FLOW_CHECKPOINT_FIELDS, FLOW_CHECKPOINT_VERSION, door, _AS_GIVEN)
    run_id = data["run_id"]
    if not nonblank(run_id):
        raise InvalidCheckpointError(door, "run_id", describe_shape(run_id), "must be a non-empty string", _AS_GIVEN)
    if member_of is not None and run_id != member_of[0]:
        raise InvalidCheckpointError(door, "run_id", "another run's id",
                                     "must be the id of the run the composition's checkpoint belongs to", _AS_GIVEN)
    _check_runner(data["runner"], composition, door, redact)
    check_identity_data(data["identity"], door)
    owner = Identity(**data["identity"]) if data["identity"] is not None else None
    if member_of is not None and owner != member_of[1]:
        raise ResumeIdentityConflictError(door)
    _check_input(data["input"], door)
    answers = data["answers"]
    if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
        raise InvalidCheckpointError(door, "answers", describe_shape(answers),
                                     "must be an object of member name -> answer text", _AS_GIVEN)
    live = _live_keys(composition, redact)
    _check_members(answers, "answers", live, composition, door)
    if not trusted and redact is not None:  # a stored checkpoint: masks must not reach a member as its input
        FlowCheckpoint.refuse_placeholders({name: data[name] for name in FlowCheckpoint._VALUE_FIELDS},
                                           {*redact.keys, *redact.patterns}, door)
    paused = data["paused"]
    failures = data["failed"]
    if not isinstance(failures, dict):
        raise InvalidCheckpointError(door, "failed", describe_shape(failures),
                                     "must be an object of member name -> what it kept (or null)", _AS_GIVEN)
    _check_members(failures, "failed", live, composition, door)
    if not isinstance(paused, dict) or (not paused and not failed):
        why = ("must name at least one member waiting on a person" if not failures else
               "is empty: this run failed rather than paused, so pick it up with resume_on_error(checkpoint)")
        raise InvalidCheckpointError(door, "paused", describe_shape(paused), why, _AS_GIVEN)
    if failed and paused and not failures:
        raise InvalidCheckpointError(door, "failed", "nothing", "is empty: this run is waiting on a person, not "
                                     "failed; answer it with resume(checkpoint, answer)", _AS_GIVEN)
    _check_members(paused, "paused", live, composition, door)
    waiting: dict[str, Checkpoint | FlowCheckpoint] = {}
    continuations: list[Continuation] = []

    def member_checkpoint(key: str, field: str, pick: Callable[[Runner], Callable[..., Any]], entry: Any) -> Any:
        """One member's own checkpoint, read by the member; a refusal names where in this one it sits."""
        member = composition._member_for(live[key])
        assert member is not None  # _check_members refused every other name
        try:
            kept, found = pick(member)(entry, door, run_id=run_id, owner=owner, redact=redact)
        except InvalidCheckpointError as refused:
            raise refused.within(f"{field}.{key}") from None
        continuations.extend(found)
        return kept

    for key, entry in paused.items():
        if key in answers:
            raise InvalidCheckpointError(door, f"paused.{key}", "a member that already answered",
                                         "must be a member still waiting on a person", _AS_GIVEN)
        waiting[key] = member_checkpoint(key, "paused", lambda member: member._waiting_checkpoint, entry)
    kept: dict[str, Checkpoint | FlowCheckpoint | None] = {}
    for key, entry in failures.items():
        if key in answers or key in paused:
            raise InvalidCheckpointError(door, f"failed.{key}", "a member that answered or is waiting",
                                         "must be a member that failed", _AS_GIVEN)
        kept[key] = None if entry is None else member_checkpoint(
            key, "failed", lambda member: member._failed_checkpoint, entry)
    checkpoint = FlowCheckpoint(schema_version=FLOW_CHECKPOINT_VERSION, run_id=run_id, runner=data["runner"],
                                identity=data["identity"], input=data["input"], answers=answers, paused=waiting,
                                failed=kept)
    if isinstance(value, Concealed):
        checkpoint._learned = value.learned()
    checkpoint._held = {live[key]: key for entries in (answers, paused, failures) for key in entries}
    return checkpoint, continuations


def _check_runner(runner: Any, composition: Composition, door: str, redact: Redaction | None) -> None:
    if not isinstance(runner, dict) or set(runner) != {"kind", "id", "name"}:
        raise InvalidCheckpointError(door, "runner", describe_shape(runner), "must be an object {kind, id, name}",
                                     _AS_GIVEN)
    if runner["kind"] != composition.kind:
        raise InvalidCheckpointError(
            door, "runner.kind", "another kind of runner",
            f"must be '{composition.kind}': the checkpoint is not of a {type(composition).__name__}",
            "Resume a checkpoint on a composition built like the one that paused.",
        )
    for name in ("id", "name"):
        if runner[name] is not None and not nonblank(runner[name]):
            raise InvalidCheckpointError(door, f"runner.{name}", describe_shape(runner[name]),
                                         "must be a non-empty string or null", _AS_GIVEN)
    if runner["id"] is not None and composition.id is not None and runner["id"] not in (
            composition.id, shown_label(composition.id, redact)):  # held masked under a policy that covers it
        raise InvalidCheckpointError(door, "runner.id", "another composition's id",
                                     "names another composition (both ids are explicit, and they differ)",
                                     "Resume it on the composition that paused, or one built with the same id.")


def _check_input(bag: Any, door: str) -> None:
    if not isinstance(bag, dict) or not nonblank(bag.get("message")):
        raise InvalidCheckpointError(door, "input", describe_shape(bag),
                                     "must be the run's input, an object with a non-empty 'message'", _AS_GIVEN)
    if any(claim in bag for claim in _CLAIMS):
        raise InvalidCheckpointError(door, "input", "an input that names whom the run is for",
                                     "must not carry parent_run or identity: whom a resumed run serves comes from "
                                     "the checkpoint's identity alone", _AS_GIVEN)


def held_keys(composition: Composition, policy: Redaction | None) -> dict[str, str]:
    """Each member key of ``composition`` -> the key its checkpoints hold it under: masked by ``policy``'s
    patterns (:func:`~footprint_lab.core.checkpoint_masks.shown_label`), two masked alike kept two (``#2``, in
    member order), so a resume masking its own members' keys the same way finds each one again."""
    keys = composition._member_keys()
    if policy is None:
        return {key: key for key in keys}
    taken = set(keys)
    held: dict[str, str] = {}
    for key in keys:
        shown = shown_label(key, policy) or key
        if shown != key:
            base, number = shown, 2
            while shown in taken:
                shown, number = f"{base}#{number}", number + 1
            taken.add(shown)
        held[key] = shown
    return held


def _live_keys(composition: Composition, redact: Redaction | None) -> dict[str, str]:
    """A checkpoint's member key -> the member of ``composition`` it names: held masked by ``redact`` (the
    policy the resume runs under), or as given (a checkpoint written under no policy)."""
    live = {key: key for key in composition._member_keys()}
    live.update({held: key for key, held in held_keys(composition, redact).items()})
    return live


def _check_members(entries: dict[str, Any], field: str, live: dict[str, str], composition: Composition,
                   door: str) -> None:
    unknown = sum(1 for key in entries if key not in live)
    if unknown:
        raise InvalidCheckpointError(
            door, field, f"{unknown} name(s) that are no member of this {type(composition).__name__}",
            "must name only members of the composition resuming it",
            "Resume a checkpoint on a composition built like the one that paused.",
        )


FlowCheckpoint.model_rebuild()


# -- the checkpoints a composition hands out -------------------------------------------------------
def paused_checkpoint(composition: Composition, exe: _Exec, bag: dict[str, Any]) -> FlowCheckpoint:
    """A paused run as a ``FlowCheckpoint``: whom it serves, the answers so far, the members waiting."""
    for key, waiting in exe.paused.items():
        if not isinstance(waiting, Checkpoint | FlowCheckpoint):
            raise TypeError(f"{type(composition).__name__}: member '{key}' paused without leaving an agent's "
                            "Checkpoint or a composition's FlowCheckpoint, so its run could never be resumed")
    identity = exe.serves.identity
    held = _held_by(composition, exe)
    checkpoint = FlowCheckpoint(
        run_id=exe.serves.run_id, runner=composition._runner_info(),
        identity=identity.as_dict() if identity is not None else None, input=jsonable(bag),
        answers=held(exe.answers), paused=held(exe.paused),
    )
    return handed_out(composition, checkpoint, exe)


def _held_by(composition: Composition, exe: _Exec) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Member entries (by the member's key) as the checkpoint holds them: keyed masked under the run's policy."""
    policy = getattr(exe.scrubber, "policy", None)
    names = held_keys(composition, policy)
    return lambda entries: {names.get(key) or shown_label(key, policy) or key: value for key, value in entries.items()}


def failure_kept(composition: Composition, exe: _Exec, bag: dict[str, Any],
                 exc: BaseException) -> FlowCheckpointError | None:
    """A failure that leaves work to keep, as a ``FlowCheckpointError``; ``None`` when nothing was kept.

    A refusal says its own fix and is raised as it is; so is a failure that kept nothing.
    """
    if not isinstance(exc, Exception) or isinstance(exc, Refusal) or not (exe.answers or any(exe.failed.values())):
        return None
    identity = exe.serves.identity
    held = _held_by(composition, exe)
    checkpoint = FlowCheckpoint(
        run_id=exe.serves.run_id, runner=composition._runner_info(),
        identity=identity.as_dict() if identity is not None else None, input=jsonable(bag),
        answers=held(exe.answers), paused=held(exe.paused), failed=held(exe.failed),
    )
    checkpoint = handed_out(composition, checkpoint, exe)
    inner = exc.member if isinstance(exc, FlowCheckpointError) else None
    key = next(iter(exe.failed), None)
    member = f"{key}/{inner}" if key is not None and inner else key
    if member is not None:  # the error quotes it and shows it on its card: masked as the records mask it
        member = exe.shown(member)
    how = "resume_on_error" if exe.retry else "resume" if exe.resume is not None else "run"
    return FlowCheckpointError(f"{type(composition).__name__}.{how}", checkpoint=checkpoint, cause=root_cause(exc),
                               member=member)


def handed_out(composition: Composition, checkpoint: FlowCheckpoint, exe: _Exec) -> FlowCheckpoint:
    """A checkpoint as it is handed out: masked under the run's policy, then sealed when a member seals."""
    if exe.scrubber is not None:
        checkpoint = checkpoint.concealed_by(exe.scrubber)
    if composition.seal:
        seal(checkpoint)  # type: ignore[arg-type]  # seal takes a checkpoint too
    return checkpoint

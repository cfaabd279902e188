"""``Run``: the result a caller holds, a thin face over one run's ``Recording``.

``str(run)`` is the answer, the live value. ``run.recording`` is the full evidence
(materialised from the capture on first access, then cached); ``run.steps`` and
``run.events`` are pandas views of it, ``run.context(call)`` shows what one LLM call was
given, piece by piece, with where each piece came from, and a displayed run (or
``run.to_html()``) is its answer view, rendered by the notebook lab through the display
registry in ``footprint_lab.base.display`` (this module never imports the lab). Every
view and every explanation is a pure function of the recording (so a redaction policy
covers them all), and a run loaded from JSON (``Run.from_recording``) answers every
question the live one does. A paused run also carries ``question`` and ``checkpoint``.

A run computes each explanation its views draw (the backtrack from the answer, its suspects, the
integrity report) once, and keeps it with the recording it explains (:class:`Explained`): a
second display, the Lab's panels and ``run.backtrack()`` read the same copy. A recording replaced
later (a chat masks an earlier turn anew) gets its own copy; nothing global keeps a run alive.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from time import time
from typing import TYPE_CHECKING, Any

from footprint_lab.base.bug_reports import write_bug_report
from footprint_lab.base.display import bundle
from footprint_lab.base.refusal import Refusal, describe_shape, did_you_mean

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.core.call_messages import CallMessages
    from footprint_lab.core.runner import Runner
    from footprint_lab.core.timeline import Timeline
    from footprint_lab.explain.checks.integrity import IntegrityReport
    from footprint_lab.explain.provenance.custody import Backtrack
    from footprint_lab.explain.provenance.influence import InfluenceStrategy
    from footprint_lab.explain.provenance.tree import RunTree
    from footprint_lab.record.recording import Annotation, ContextPiece, LLMExchange, Recording
    from footprint_lab.redact.policy import Redaction

#: The columns of ``Run.context()``, in order.
CONTEXT_COLUMNS = [
    "slot", "position", "source_kind", "source_id", "content", "trigger", "reason", "landed_by", "read_by",
    "iteration", "admission", "allowed_by", "content_hash", "cache", "declared_at", "detail", "index",
]


class CallNotFoundError(Refusal, ValueError):
    """Raised by ``run.context(call)`` / ``run.context_pieces(call)`` when ``call`` names no LLM call of the run.

    Also raised by ``run.messages(call)``, whose calls include its members' (``door`` names which).
    Carries ``received`` (the shape of what arrived), ``calls`` (how many LLM calls the run made) and
    ``near`` (``"did you mean 'call-llm#3'?"`` when a call's id is near what was typed, else empty).
    """

    code = "ERR_CALL_NOT_FOUND"
    fields = ("received", "calls", "near")

    def __init__(self, received: str, calls: int, *, door: str = "run.context", near: str = "") -> None:
        super().__init__(
            f"{door}: this run made {calls} LLM call(s); name one by its step id as shown in run.steps "
            f"(e.g. 'call-llm#3'), by its index (0 for the first, -1 for the last), or leave call out for "
            f"the call that produced the answer{'; ' + near if near else ''} (received {received})."
        )
        self.received = received
        self.calls = calls
        self.near = near


class InvalidAnnotationError(Refusal, ValueError):
    """Raised by ``run.annotate(target, text, tag=...)`` when an argument cannot make a note.

    Carries ``argument`` (``target``, ``text`` or ``tag``), ``received`` (the shape of what
    arrived) and, for a target, ``known`` (the ids a note can be attached to in this run).
    """

    code = "ERR_INVALID_ANNOTATION"
    fields = ("argument", "received", "known")

    def __init__(self, argument: str, received: str, known: list[str] | None = None) -> None:
        if known is not None:
            shown = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
            fix = f"name 'answer', a step id from run.steps, or a context piece's source_id; this run has: {shown}"
        elif argument == "text":
            fix = "must be the note itself, a non-empty string"
        else:
            fix = "is a short label string (e.g. 'suspect'), or leave it out"
        super().__init__(f"run.annotate: '{argument}' {fix} (received {received}).")
        self.argument = argument
        self.received = received
        self.known = known


class Explained:
    """The explanations of one recording that its views draw, each computed on first use and then kept.

    ``backtrack(at)`` and ``suspects(at)`` (the lexical ranking, from that same backtrack) for the
    answer (``at=None``) or a step, and ``integrity()``, all with their default settings. A ``Run``
    holds one for its recording; :func:`explained` finds it from the recording alone, as the views
    are handed it.
    """

    __slots__ = ("__weakref__", "_backtracks", "_integrity", "_suspects", "recording")

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self._backtracks: dict[str | None, Backtrack] = {}
        self._suspects: dict[str | None, pd.DataFrame] = {}
        self._integrity: IntegrityReport | None = None

    def backtrack(self, at: str | None = None) -> Backtrack:
        """``explain.backtrack(recording, at)``, computed once."""
        if at not in self._backtracks:
            from footprint_lab.explain.provenance.custody import backtrack  # pydantic (it reads the recording's models)

            self._backtracks[at] = backtrack(self.recording, at)
        return self._backtracks[at]

    def suspects(self, at: str | None = None) -> pd.DataFrame:
        """``explain.suspects(recording, at=at)`` (lexical), ranked from :meth:`backtrack`, computed once."""
        if at not in self._suspects:
            from footprint_lab.explain.provenance.influence import suspects  # pandas

            self._suspects[at] = suspects(self.recording, at=at, trace=self.backtrack(at))
        return self._suspects[at]

    def integrity(self) -> IntegrityReport:
        """``explain.integrity(recording)``, computed once."""
        if self._integrity is None:
            from footprint_lab.explain.checks.integrity import integrity  # the explain layer: loaded when first used

            self._integrity = integrity(self.recording)
        return self._integrity


#: the explanations each live run keeps, by the id of the recording they explain; held weakly, so a run's
#: copy goes with the run (the recording it holds keeps that id its own while both live)
_KEPT: weakref.WeakValueDictionary[int, Explained] = weakref.WeakValueDictionary()


def explained(recording: Recording) -> Explained:
    """The explanations kept for ``recording`` by the run that holds it, or a new set (kept by no one) for a
    recording no live run holds."""
    kept = _KEPT.get(id(recording))
    return kept if kept is not None and kept.recording is recording else Explained(recording)


class Run:
    """One finished (or paused) run: its answer, status and recording."""

    __slots__ = ("__weakref__", "_build", "_clean", "_conversation", "_explained", "_recording", "_shown_answer",
                 "answer", "checkpoint", "policy", "question", "run_id", "status", "stopped_early")

    def __init__(
        self,
        *,
        run_id: str,
        status: str,
        answer: str | None,
        build: Callable[[], Recording] | None = None,
        recording: Recording | None = None,
        stopped_early: dict[str, Any] | None = None,
        question: str | None = None,
        checkpoint: Any = None,
        shown_answer: str | None = None,
        clean: Callable[[Any], Any] | None = None,
        policy: Redaction | None = None,
    ) -> None:
        self.run_id = run_id
        self.status = status
        self.answer = answer
        self.stopped_early = stopped_early
        self.question = question
        self.checkpoint = checkpoint
        self._build = build
        self._recording = recording
        #: the answer as the recording holds it (a redaction policy applied), so ``repr`` never
        #: has to build the recording: asyncio and IPython call it on every finished run
        self._shown_answer = recording.answer if recording is not None else shown_answer
        #: the run's redaction (the recorder's ``clean``), applied to notes; ``None`` without a policy
        self._clean = clean
        #: the redaction policy the run was recorded under, patterns and all (a run rebuilt from a
        #: recording has only what its report names: the keys and the library's patterns)
        self.policy = policy
        #: what the run leaves its runner to hold (the conversation, a pause); not part of the evidence
        self._conversation: Any = None
        self._explained: Explained | None = None

    @classmethod
    def from_recording(cls, recording: Recording) -> Run:
        """Wrap a recording (loaded from JSON, say) so every explanation works on it.

        The recording is checked once, here (:func:`~footprint_lab.record.recording_door.check_recording`):
        one that does not hold together is refused with ``InvalidRecordingError`` naming the field,
        so no view meets it. Load a saved one with ``footprint_lab.load_recording(text)``.
        """
        from footprint_lab.record.recording_door import check_recording  # pydantic: a recording's door

        recording = check_recording(recording, door="Run.from_recording")

        # notes added now are masked with what can be rebuilt of the policy it was recorded under
        from footprint_lab.redact.policy import policy_from_reports  # kept out of %load_ext's path

        policy = policy_from_reports([recording.redaction] if recording.redaction else [])
        return cls(
            run_id=recording.run_id, status=recording.status, answer=recording.answer,
            recording=recording, stopped_early=recording.stopped_early,
            clean=policy.for_run().scrub if policy is not None else None, policy=policy,
        )

    @property
    def recording(self) -> Recording:
        """The run as data; built from the capture the first time it is asked for."""
        return self.explained.recording

    @property
    def explained(self) -> Explained:
        """The explanations of this run's recording its views draw, computed once and kept with the run (a
        recording replaced since, as a chat masks an earlier turn, gets a set of its own). Kept where the
        views find them from the recording alone (:func:`explained`)."""
        if self._recording is None:
            assert self._build is not None
            self._recording = self._build()
            self._build = None
        recording = self._recording
        kept = self._explained
        if kept is None or kept.recording is not recording:
            kept = self._explained = _KEPT[id(recording)] = Explained(recording)
        return kept

    @property
    def paused(self) -> bool:
        """``True`` when the run stopped to ask a person something."""
        return self.status == "paused"

    @property
    def steps(self) -> pd.DataFrame:
        """One row per step: ``step_id``, ``stage``, ``iteration``, ``status``, ``started_ms``, ``duration_ms``."""
        return steps_frame(self.recording)

    @property
    def events(self) -> pd.DataFrame:
        """One row per event, in order: ``seq``, ``type``, ``step_id``, ``payload``, ``run_id``."""
        return events_frame(self.recording)

    def tree(self, *, steps: bool = False) -> RunTree:
        """The run and its member runs as a tree (``.nodes``, ``.edges``, ``.to_frame()``); it displays as a figure.

        With ``steps=True`` every LLM call and tool step is a node too.
        """
        from footprint_lab.explain.provenance.tree import run_tree  # the explain layer: loaded when first used

        return run_tree(self.recording, steps=steps)

    def context_pieces(self, call: int | str | None = None, *, left_out: bool = False) -> list[ContextPiece]:
        """The context pieces one LLM call was sent, slot by slot (system, messages, tools).

        ``call`` is a call's step id (``"call-llm#3"``), its index among the run's calls
        (``0``, ``-1``), or ``None`` for the call that produced the answer (the last one). With
        ``left_out=True`` the pieces its iteration skipped or dropped follow the ones sent.
        """
        return self._call_pieces(call, left_out)[1]

    def context(self, call: int | str | None = None, *, left_out: bool = False) -> pd.DataFrame:
        """:meth:`context_pieces` as a DataFrame, one row per piece, with ``read_by`` the call's step id."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        exchange, pieces = self._call_pieces(call, left_out)
        read_by = exchange.step_id if exchange is not None else None
        rows = [{**piece.model_dump(), "admission": piece.verdict,
                 "read_by": read_by if piece.verdict == "admitted" else None} for piece in pieces]
        frame = ShownFrame(rows, columns=CONTEXT_COLUMNS)
        return frame.astype({"position": "int64", "iteration": "Int64"})

    def _call_pieces(self, call: int | str | None, left_out: bool) -> tuple[LLMExchange | None, list[ContextPiece]]:
        exchange = self.exchange(call)
        return exchange, [] if exchange is None else self.recording.call_pieces(exchange, left_out=left_out)

    def exchange(self, call: int | str | None = None) -> LLMExchange | None:
        """The recorded exchange of one LLM call, named as :meth:`context_pieces` names it (``None``: no call)."""
        exchanges = self.recording.exchanges
        if call is None:
            return exchanges[-1] if exchanges else None
        if isinstance(call, int) and not isinstance(call, bool):
            if -len(exchanges) <= call < len(exchanges):
                return exchanges[call]
            raise CallNotFoundError("an index out of range", len(exchanges))
        if isinstance(call, str):
            found = self.recording.exchange_at(call)
            if found is not None:
                return found
            raise CallNotFoundError("a string that is not the step id of one of its LLM calls", len(exchanges),
                                    near=did_you_mean([call], [x.step_id for x in exchanges]))
        raise CallNotFoundError(describe_shape(call), len(exchanges))

    def timeline(self) -> Timeline:
        """The run's steps in time order, each at its start and as long as it took; it displays as a waterfall.

        ``timeline.to_frame()`` has one row per step (``step``, ``stage``, ``kind``: llm, tool, member or
        step, ``status``, ``start_ms``, ``duration_ms`` from the run's start, ``depth``, ``member``,
        ``label``); a composition's member runs follow the step that ran them, one level deeper.
        """
        from footprint_lab.core.timeline import Timeline

        return Timeline(self.recording)

    def messages(self, call: int | str | None = None) -> CallMessages:
        """The messages one LLM call was sent and its reply, as a chat; it displays with the raw request and
        response one click away (``.request``, ``.response``, ``.to_frame()`` give them as data).

        ``call`` is a call's step id (a member's too: ``"sequence-step#3/call-llm#3"``), its index among
        the run's calls in timeline order, members included (``0``, ``-1``), or ``None`` for the call
        whose reply became the answer. A call the run did not make is refused (``CallNotFoundError``).
        """
        from footprint_lab.core.call_messages import CallMessages
        from footprint_lab.core.timeline import timeline_rows

        root = self.recording
        made: dict[str, tuple[Recording, LLMExchange]] = {}
        pending = [root]
        while pending:
            recording = pending.pop()
            made.update((x.step_id, (recording, x)) for x in recording.exchanges)
            pending.extend(recording.children)
        order = [row.step for row in timeline_rows(root) if row.kind == "llm" and row.step in made]
        order += [step_id for step_id in made if step_id not in set(order)]
        chosen = self._chosen_call(call, order, made)
        return CallMessages(root, *made[chosen])

    def _chosen_call(self, call: int | str | None, order: list[str],
                     made: Mapping[str, tuple[Recording, LLMExchange]]) -> str:
        """The step id ``call`` names among ``order`` (every call of the run), or the answering call for ``None``."""
        if call is None and order:
            reached = [step_id for step_id in self.explained.backtrack().calls if step_id in made]
            return reached[0] if reached else order[-1]
        if isinstance(call, int) and not isinstance(call, bool) and -len(order) <= call < len(order):
            return order[call]
        if isinstance(call, str) and call in made:
            return call
        received = ("nothing, and it made no LLM call" if call is None else "an index out of range"
                    if isinstance(call, int) and not isinstance(call, bool)
                    else "a string that is not the step id of one of its LLM calls" if isinstance(call, str)
                    else describe_shape(call))
        near = did_you_mean([call], order) if isinstance(call, str) else ""
        raise CallNotFoundError(received, len(order), door="run.messages", near=near)

    def annotate(self, target: str, text: str, *, tag: str | None = None) -> Annotation:
        """Attach a note to a step id (``"call-llm#3"``), a context piece's source id or ``"answer"``.

        The note is stored in the recording (``recording.annotations``), so it travels with the run:
        through JSON, a notebook export and ``load_runs``. An unknown target is refused with the ids
        that exist. A run recorded under a redaction policy masks the note with that policy too.
        """
        from footprint_lab.record.recording import Annotation  # pydantic: loaded with the first recording

        targets = self.recording.annotation_targets()
        if not isinstance(target, str) or target not in targets:
            raise InvalidAnnotationError(
                "target", "a string that names nothing in this run" if isinstance(target, str)
                else describe_shape(target), sorted(targets),
            )
        for argument, value in (("text", text), ("tag", tag)):
            if (value is not None or argument == "text") and (not isinstance(value, str) or not value.strip()):
                raise InvalidAnnotationError(argument, "a blank string" if isinstance(value, str)
                                             else describe_shape(value))
        note = Annotation(target=target, text=self.masked(text), tag=tag if tag is None else self.masked(tag),
                          at=time())
        self.recording.annotations.append(note)
        return note

    def masked(self, text: str) -> str:
        """``text`` as this run's redaction policy would record it (unchanged for a run without one)."""
        return text if self._clean is None else self._clean(text)

    def annotations(self) -> pd.DataFrame:
        """The run's notes, one row each: ``target``, ``kind`` (answer, step or piece), ``text``, ``tag``, ``at``."""
        import pandas as pd

        kinds = self.recording.annotation_targets()
        rows = [{**note.model_dump(), "kind": kinds.get(note.target, "unknown")} for note in self.recording.annotations]
        return pd.DataFrame(rows, columns=["target", "kind", "text", "tag", "at"])

    def to_html(self) -> str:
        """The run's answer view: a self-contained HTML fragment (no JavaScript), drawn from its recording."""
        return str(self._repr_mimebundle_(include=["text/html"])["text/html"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """``text/plain`` (one line), ``text/html`` (the answer view) and the recording as JSON.

        The renderer comes from the display registry below this layer (the lab registers it),
        so displaying a run needs no ``%load_ext`` and ``core`` never imports ``lab``.
        """
        return bundle("run", self, lambda: {"text/plain": repr(self)}, include, exclude)

    # -- explanations: thin doors onto footprint_lab.explain -------------------------------
    def backtrack(self, at: str | None = None, *, max_depth: int = 32, max_steps: int = 2000) -> Backtrack:
        """Every piece of context that reached the answer (or step ``at``), each with its chain of custody.

        ``str(bt)`` is the ANSWER / READ / LANDED / ALLOWED / BORN chain per piece, ``bt.to_frame()``
        one row per hop, ``bt.candidates`` the pieces; ``max_depth`` and ``max_steps`` bound the
        backward slice over reads, and a limit hit is reported.
        """
        from footprint_lab.explain.provenance.slice import DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS

        if (max_depth, max_steps) == (DEFAULT_MAX_DEPTH, DEFAULT_MAX_STEPS) and (at is None or isinstance(at, str)):
            return self.explained.backtrack(at)  # the one its views draw, walked once
        from footprint_lab.explain.provenance.custody import backtrack  # pydantic (it reads the recording's models)

        return backtrack(self.recording, at, max_depth=max_depth, max_steps=max_steps)

    def suspects(self, strategy: str | InfluenceStrategy = "lexical", *, at: str | None = None,
                 embed: Callable[[list[str]], Any] | None = None, reference: str | None = None) -> pd.DataFrame:
        """The backtrack's pieces ranked by how plausibly each shaped the output (correlational, not causal).

        ``strategy`` is ``"lexical"`` (default), ``"embedding"`` (with ``embed=fn``) or any object
        with ``score(output, contents)``; see ``footprint_lab.explain.list_influence_strategies()``.
        ``reference`` (the answer that was expected) ranks each piece by how much more it resembles
        the actual answer than the reference. ``frame.attrs["confidence"]`` says whether the top
        stands clear of the rest or which shortlist to confirm.
        """
        plain = isinstance(strategy, str) and strategy == "lexical" and embed is None and reference is None
        if plain and (at is None or isinstance(at, str)):
            return self.explained.suspects(at).copy()  # ranked once; the caller's copy is the caller's to change
        from footprint_lab.explain.provenance.influence import suspects  # pydantic (through the backtrack it ranks)

        return suspects(self.recording, strategy=strategy, at=at, embed=embed, reference=reference)

    def integrity(self, *, claims: Mapping[str, Any] | None = None) -> IntegrityReport:
        """The contradictions this run's recording holds, with a disposition for every check.

        ``report.findings`` lists each (an ungrounded tool, an invented identifier, a duplicate
        call, an answer against a tool result...), ``report.ok`` says whether every check that
        ran passed; ``claims`` maps a claim name to how to read it from a tool result (see
        :func:`footprint_lab.explain.integrity`).
        """
        if claims is None:
            return self.explained.integrity()  # the one its views draw, checked once
        from footprint_lab.explain.checks.integrity import integrity  # the explain layer: loaded when first used

        return integrity(self.recording, claims=claims)

    def bug_report(self, path: str | os.PathLike[str], *, redact: Redaction | None = None,
                   runner: Runner | None = None) -> Path:
        """Write a zip to attach to a bug report: the recording masked and scanned clean, the answer view
        as an offline page, versions, provider and model names, and ``manifest.json`` saying what each file holds.

        ``redact`` masks with a policy besides the one the run was recorded under; ``runner`` (the agent
        that ran it) names its provider. Written by ``footprint_lab.notebook`` (see ``base.bug_reports``).
        """
        return Path(write_bug_report([self], path, redact=redact, runner=runner, title="A run"))

    def __str__(self) -> str:
        return self.answer or ""

    def __repr__(self) -> str:
        # The answer as recorded, so a redaction policy covers what a notebook shows; read
        # without building the recording (asyncio and IPython ask for this on every run).
        shown = self._recording.answer if self._recording is not None else self._shown_answer
        preview = (shown or "")[:60]
        return f"Run(run_id={self.run_id!r}, status={self.status!r}, answer={preview!r})"


def sealer(sealed: bool) -> Callable[[Recording], None] | None:
    """What seals a run's recording as it is built, for a runner made with ``seal=True`` (else ``None``)."""
    return _seal_at_end if sealed else None


def _seal_at_end(recording: Recording) -> None:
    from footprint_lab.sealing.seal import seal_at_end  # hashing and the seal's model: loaded with a sealed recording

    seal_at_end(recording)


def steps_frame(recording: Recording) -> pd.DataFrame:
    """The steps of a recording as a DataFrame."""
    import pandas as pd

    columns = ["step_id", "stage", "iteration", "status", "started_ms", "duration_ms"]
    # an iteration is a whole number, absent (<NA>, never NaN) on the steps outside the loop (seed, final)
    return pd.DataFrame([s.model_dump() for s in recording.steps], columns=columns).astype({"iteration": "Int64"})


def events_frame(recording: Recording) -> pd.DataFrame:
    """The events of a recording as a DataFrame."""
    import pandas as pd

    columns = ["seq", "type", "step_id", "payload", "run_id"]
    return pd.DataFrame([e.model_dump() for e in recording.events], columns=columns)

"""The recorder: a run's evidence captured the moment it happens, as cheap tuples.

Rule kept here: everything an explanation needs is written down while the run executes, never
rebuilt afterwards. :meth:`Recorder.begin` opens a step, reads and writes go through the tracked
scope, and :meth:`Recorder.end` closes the step with one commit holding only what changed.

- A read stamps the step that last wrote the value, at read time, so walking back from a read
  is a pointer walk, never a search.
- A commit is a delta: its cost grows with what the step changed, not with the state.
- Events go out in order, in one envelope, to the run's listeners, numbered by one ``seq`` for
  the whole run tree (``record.events``). A listener that raises is counted and skipped; it
  never breaks the run.
- A redaction policy (anything with ``scrub(value) -> value``) is applied to every value before
  it is captured or delivered. The live run keeps the real value.

Role: record layer. The recorder knows nothing about LLMs: runners put their own evidence
(context pieces, exchanges, the transcript) in the plain lists it carries, and
:func:`footprint_lab.record.build.build_recording` turns the capture into a ``Recording``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from time import perf_counter_ns, time
from typing import Any, Protocol, cast

from footprint_lab.base.unicode import sound_text
from footprint_lab.record.by_field import Kind, by_field
from footprint_lab.record.captured import Carried, flat, share_carried
from footprint_lab.record.events import (
    EventStream,
    Listener,
    Path,
    event_stream,
    routine_payloads,
)
from footprint_lab.record.schema import ROUTINE_PAYLOADS

VERBS = ("set", "merge", "append", "delete")

def _nothing() -> None:
    return None


class Scrubber(Protocol):
    """What the recorder needs of a redaction policy."""

    def scrub(self, value: Any) -> Any:
        """Return ``value`` with every covered part replaced."""
        ...


def summarize(value: Any, limit: int = 80) -> str:
    """A short, cheap description of a value for a read record."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__} of {len(value)}"
    if isinstance(value, dict):
        return f"dict of {len(value)}"
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return type(value).__name__


#: the capture's columns, which :meth:`Recorder.seal` turns into tuples when the run ends
_COLUMNS = ("steps", "reads", "commits", "entry_paths", "entry_verbs", "entry_values", "event_types", "event_steps",
            "event_payloads", "pieces", "exchanges", "messages", "message_pieces", "shared")


class Recorder:
    """Captures one run (or one member run) as it executes."""

    __slots__ = (
        "_event_class",
        "_shared_at",
        "_shown_paths",
        "annotations",
        "carried",
        "carried_at",
        "children",
        "commits",
        "counter",
        "current",
        "decisions",
        "entry_paths",
        "entry_values",
        "entry_verbs",
        "event_payloads",
        "event_refs",
        "event_seqs",
        "event_steps",
        "event_types",
        "exchanges",
        "listener_errors",
        "listeners",
        "message_pieces",
        "messages",
        "meta",
        "path",
        "pending_start",
        "pieces",
        "policy",
        "reads",
        "run_id",
        "shared",
        "started_at",
        "started_ns",
        "state",
        "steps",
        "writers",
    )

    def __init__(
        self,
        run_id: str,
        *,
        path: str = "",
        listeners: Iterable[Listener] = (),
        policy: Scrubber | None = None,
    ) -> None:
        self.run_id = run_id
        self.path = path
        self.counter = 0
        self.current = ""
        self.pending_start = 0
        self.state: dict[Path, Any] = {}
        self.writers: dict[Path, str] = {}
        # (step_id, stage, iteration, start_ns, end_ns, status): tuples of plain values, which the
        # garbage collector stops tracking, so a long run does not slow every collection
        self.steps: list[tuple[str, str, int | None, int, int, str]] = []
        self.reads: list[tuple[str, Path, str | None, str]] = []
        # every commit's entries as three parallel columns (no tuple per entry for the collector
        # to track); a commit is (step_id, first, end), indices into them
        self.entry_paths: list[Path] = []
        self.entry_verbs: list[str] = []
        self.entry_values: list[Any] = []
        self.commits: list[tuple[str, int, int]] = []
        self.decisions: list[tuple[str, str, tuple[tuple[str, dict[str, Any], Any], ...], str]] = []
        # Events as parallel columns, so a long run's events add no object for the collector to walk.
        # A routine event (step_start, step_end, read, write, commit) keeps only the index of the record
        # it reports, in event_refs (-1 for others); its payload is made from that record when needed.
        self.event_seqs = array("q")  # 8 bytes a number, where a list holds a pointer and an int object
        self.event_refs = array("q")
        self.event_types: list[str] = []
        self.event_steps: list[str] = []
        #: each event's payload dict, None for a routine event (see event_refs)
        self.event_payloads: list[dict[str, Any] | None] = []
        #: context pieces, each one flat tuple, its keys first (record.captured.CapturedPiece)
        self.pieces: list[Any] = []
        self.exchanges: list[Any] = []
        self.messages: list[dict[str, Any]] = []
        #: for each transcript message, the index of its context piece
        self.message_pieces: list[int] = []
        #: the conversation a continued leg carried, its forms shared with the other legs (record.captured)
        self.carried: Carried | None = None
        #: where the carried stretch starts in the entries, events, pieces and messages
        self.carried_at: tuple[int, int, int, int] | None = None
        self.children: list[Any] = []
        self.annotations: list[dict[str, Any]] = []
        #: values many records refer to, each kept once (see share)
        self.shared: list[Any] = []
        self._shared_at: dict[int, int] = {}
        #: the run's listeners and its event counter (shared with the member runs it mounts)
        self.listeners = event_stream(listeners)
        self.listener_errors = 0
        self.policy = policy
        self.started_at = time()
        self.started_ns = perf_counter_ns()
        self.meta: dict[str, Any] = {}
        self._event_class: Any = None
        #: how many values the policy had learned, and each tracked path as masked then (see shown_path)
        self._shown_paths: tuple[int, dict[Path, Path]] = (0, {})

    # -- redaction: the one place a value enters the capture ---------------------------
    def share(self, value: Any) -> int:
        """The index of ``value`` (this very object) in :attr:`shared`, added on first sight.

        A record that holds the index instead of the value (say, the tools list every call of an
        agent sends) holds only plain values, which the garbage collector stops tracking.
        """
        at = self._shared_at.get(id(value))  # the object stays in self.shared, so its id is not reused
        if at is None:
            at = self._shared_at[id(value)] = len(self.shared)
            self.shared.append(value)
        return at

    def clean(self, value: Any) -> Any:
        """The value as the record may hold it (the policy applied, when there is one)."""
        policy = self.policy
        return value if policy is None else policy.scrub(value)

    def shown_path(self, path: Path) -> Path:
        """A tracked path as the records hold it: each part masked by the policy, as a value is.

        A path can hold names a runner was given (member names, ``outputs.<name>``). Each distinct
        path is masked once, and again after the policy learns more.
        """
        policy = self.policy
        if policy is None:
            return path
        learned: int = getattr(policy, "learned_count", 0)
        count, shown = self._shown_paths
        if count != learned:
            shown = {}
            self._shown_paths = (learned, shown)
        made = shown.get(path)
        if made is None:
            made = shown[path] = tuple(part if not part else str(policy.scrub(part)) for part in path)
        return made

    def learn(self, value: Any) -> None:
        """Show the policy structured data captured only as text (a fact's data as JSON), so the
        values under its covered keys are masked in that text too."""
        if self.policy is not None:
            self.policy.scrub(value)

    # -- events -----------------------------------------------------------------------
    def emit(self, type_: str, step_id: str, payload: dict[str, Any]) -> None:
        """Record an event and deliver it to the listeners; ``run_end`` also seals the capture.

        Routine events (``schema.ROUTINE_PAYLOADS``) are refused: the recorder writes them itself,
        with the record they report.
        """
        if type_ in ROUTINE_PAYLOADS:
            raise ValueError("emit: a routine event (a step's start or end, a read, a write, a commit) is written "
                             "by the recorder with the record it reports; call begin, read, write or end instead")
        if self.policy is not None:
            payload = self.policy.scrub(payload)
        self._event(type_, step_id, payload)
        if type_ == "run_end":
            self.seal()

    def carry(self, carried: Carried) -> None:
        """Note that the conversation ``carried`` lands next, message by message (write, piece, message).
        When the run is sealed, those stretches are read from the history the legs share."""
        self.carried = carried
        self.carried_at = (len(self.entry_paths), len(self.event_seqs), len(self.pieces), len(self.messages))

    def seal(self) -> None:
        """Make the finished run's capture read-only, compact, and invisible to the garbage collector.

        - Each exchange, a flat dict while its call runs, becomes a ``(keys, *values)`` tuple with
          shared keys, a fraction of the dict's room (``build_recording`` reads both forms).
        - Every column becomes a tuple. The collector walks a list on every full pass for as long as
          the run is held (a notebook holds many); a tuple of untracked values is walked no more.
          Writing a column after the run ended then fails loudly.
        - The carried conversation's stretches are read from the shared history.
        - The live tracked scope is let go: every value it held is in the commits.
        """
        self.exchanges = [flat(exchange) if isinstance(exchange, dict) else exchange for exchange in self.exchanges]
        for column in _COLUMNS:
            setattr(self, column, tuple(getattr(self, column)))
        share_carried(self)
        self.state = {}
        self.writers = {}

    def _event(self, type_: str, step_id: str, payload: dict[str, Any] | None, ref: int = -1) -> None:
        stream = self.listeners
        learned: int = getattr(self.policy, "learned_count", 0)
        if learned and stream:
            self._recall(stream)
        seq = stream.next_seq
        stream.next_seq = seq + 1
        self.event_seqs.append(seq)
        self.event_refs.append(ref)
        self.event_types.append(type_)
        self.event_steps.append(step_id)
        self.event_payloads.append(payload)
        if stream:
            delivered = self.payload(type_, payload, ref)
            if payload is not None:  # a routine payload holds paths and step ids, never a value
                stream.delivered.append((seq, type_, step_id, delivered))
            self._deliver(seq, type_, step_id, delivered)

    def payload(self, type_: str, captured: dict[str, Any] | None, ref: int) -> dict[str, Any]:
        """An event's payload: as captured, or (a routine event) made from the record at ``ref``."""
        if captured is not None:  # live delivery calls this for every event: the common case pays no batch
            return captured
        return cast("dict[str, Any]", self.payloads((type_,), (None,), (ref,))[0])

    def payloads(self, types: Sequence[str], captured: Sequence[dict[str, Any] | None],
                 refs: Sequence[int]) -> list[Any]:
        """Events' payloads in one pass (:func:`~footprint_lab.record.events.routine_payloads`)."""
        return routine_payloads(types, captured, refs, self.steps, self.reads, self.entry_paths, self.entry_verbs,
                                self.commits)

    def _recall(self, stream: EventStream) -> None:
        """Send a ``recall`` event for delivered events holding a value the policy learned since (``record._recall``).

        A live view replaces what it shows; the recording is swept the same way when built.
        """
        policy: Any = self.policy
        count = policy.learned_count
        checked = stream.checked.get(id(policy), 0)
        if count == checked:
            return
        stream.checked[id(policy)] = count
        from footprint_lab.record._recall import recall

        recalled = recall(stream.delivered, policy, policy.learned_since(checked))
        if recalled:
            self._event("recall", self.current or self.path, {"events": recalled})

    def commit(self, index: int) -> tuple[str, tuple[tuple[Path, str, Any], ...]]:
        """Commit number ``index`` as ``(step_id, entries)``."""
        step_id, first, end = self.commits[index]
        return step_id, tuple(zip(self.entry_paths[first:end], self.entry_verbs[first:end],
                                  self.entry_values[first:end], strict=True))

    def _deliver(self, seq: int, type_: str, step_id: str, payload: dict[str, Any]) -> None:
        if self._event_class is None:
            from footprint_lab.record.records import Event  # pydantic: loaded when a listener first needs an event

            self._event_class = Event
        event = self._event_class.model_construct(
            seq=seq, run_id=self.run_id, type=type_, step_id=step_id, payload=payload
        )
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # a subscriber's bug must never break the run it watches
                self.listener_errors += 1

    def token_stream(self, step_id: str) -> tuple[Callable[[str], None], Callable[[], None]]:
        """``(on_token, flush)`` for a streamed reply: each piece of text becomes a ``token`` event.

        With a policy, text is released only in stretches no covered match can straddle (a secret
        split across two tokens would otherwise pass); ``flush`` releases the rest when the reply ends.
        """

        def emit(text: str) -> None:
            self.emit("token", step_id, {"text": sound_text(text)})

        gate = getattr(self.policy, "token_gate", None)
        if gate is None:  # no policy, or a scrubber without a gate: each piece is scrubbed on its own
            return emit, _nothing
        released: tuple[Callable[[str], None], Callable[[], None]] = gate(
            lambda text: self._event("token", step_id, {"text": sound_text(text)}))  # released scrubbed
        return released

    # -- steps ------------------------------------------------------------------------
    def begin(self, stage: str, iteration: int | None = None) -> str:
        """Open a step and return its runtime id."""
        self.counter += 1
        step_id = f"{self.path}/{stage}#{self.counter}" if self.path else f"{stage}#{self.counter}"
        self.current = step_id
        self.pending_start = len(self.entry_paths)
        self.steps.append((step_id, stage, iteration, perf_counter_ns(), 0, "running"))
        self._event("step_start", step_id, None, len(self.steps) - 1)
        return step_id

    def read(self, path: Path) -> Any:
        """Read a tracked value, stamping the step that last wrote it."""
        value = self.state.get(path)
        writer = self.writers.get(path)
        policy = self.policy
        if policy is None:
            summary = summarize(value)
        elif isinstance(value, str):  # scrub before cutting: a secret cut short would no longer match
            summary = summarize(policy.scrub(value))
        else:
            summary = policy.scrub(summarize(value))
        self.reads.append((self.current, self.shown_path(path), writer, summary))
        self._event("read", self.current, None, len(self.reads) - 1)
        return value

    def write(self, path: Path, verb: str, value: Any, fields: dict[str, Kind] | None = None) -> None:
        """Change tracked state; the change joins the current step's commit. A value that is a record with
        ``fields`` of its own (a transcript message: ``record.by_field.MESSAGE``) is masked field by field."""
        state = self.state
        if verb == "set":
            state[path] = value
        elif verb == "append":
            target = state.get(path)
            if target is None:
                state[path] = [value]
            else:
                target.append(value)
        elif verb == "merge":
            state[path] = {**(state.get(path) or {}), **value}
        elif verb == "delete":
            state.pop(path, None)
        else:
            raise ValueError(f"unknown write verb {verb!r}; one of {VERBS}")
        self.writers[path] = self.current
        if self.policy is None:
            self.entry_paths.append(path)
            self.entry_values.append(value)
        else:
            self.entry_paths.append(self.shown_path(path))
            scrub = self.policy.scrub
            self.entry_values.append(scrub(value) if fields is None else by_field(value, scrub, fields))
        self.entry_verbs.append(verb)
        self._event("write", self.current, None, len(self.entry_paths) - 1)

    def decide(self, rule: str, evidence: Iterable[tuple[str, dict[str, Any], Any]], chosen: str) -> None:
        """Record the branch the current step chose, with each rule's inputs and result (all masked, since a
        rule's name can be a member's)."""
        clean = self.clean
        rows = tuple((clean(name), clean(reads), clean(result)) for name, reads, result in evidence)
        self.decisions.append((self.current, clean(rule), rows, clean(chosen)))
        self.emit("decision", self.current, {"rule": rule, "chosen": chosen})

    def end(self, status: str = "ok") -> None:
        """Close the current step with its one commit."""
        step_id = self.current
        first, end = self.pending_start, len(self.entry_paths)
        self.commits.append((step_id, first, end))
        self.pending_start = end
        self._event("commit", step_id, None, len(self.commits) - 1)
        step = self.steps[-1]
        index = len(self.steps) - 1
        if step[0] != step_id:  # a step opened alongside others is closed out of order
            index = next(i for i in range(index, -1, -1) if self.steps[i][0] == step_id)
            step = self.steps[index]
        self.steps[index] = (step[0], step[1], step[2], step[3], perf_counter_ns(), status)
        self._event("step_end", step_id, None, index)

    # -- steps that run alongside each other (parallel branches, graph nodes) ----------
    def open_step(self, stage: str, iteration: int | None = None, reads: Iterable[Path] = ()) -> tuple[str, list[Any]]:
        """Open a step that runs alongside others, take its reads now, and return its id and the values.

        It never becomes the current step, so siblings can open and close in any order.
        """
        current = self.current
        step_id = self.begin(stage, iteration)
        values = [self.read(path) for path in reads]
        self.current = current
        return step_id, values

    def close_step(self, step_id: str, writes: Iterable[tuple[Path, str, Any]] = (), status: str = "ok") -> None:
        """Close a step opened with :meth:`open_step`: apply its writes and commit them as its one commit.

        A commit is a contiguous run of entries, so call this only while no other step holds
        uncommitted writes (a composition closes its concurrent steps between its sequential ones).
        """
        if self.pending_start != len(self.entry_paths):
            raise RuntimeError("close_step: another step of this recorder has uncommitted writes")
        current = self.current
        self.current = step_id
        for path, verb, value in writes:
            self.write(path, verb, value)
        self.end(status)
        self.current = current

    def fail_open_step(self, status: str = "failed") -> None:
        """Close a step left open by an exception (as ``error``) or a cancellation, to show where it stopped."""
        if self.steps and self.steps[-1][5] == "running":
            self.end("cancelled" if status == "cancelled" else "error")

"""One read-only index over a recording and its member runs, built per explanation.

Rule kept here: an explanation looks a step up by its id, never by scanning the recording
again. Step ids join across a composed run (a member's steps are prefixed by the step that
mounted it), so one index covers the whole tree: for each step, the recording that holds it;
for each LLM-call step, its exchange; and, built on first use only, each step's reads, its
commit and its events. Nothing here writes to a recording.

Role: explain layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.explain.provenance.members import Member, SourceNames
from footprint_lab.record.schema import ANSWER

if TYPE_CHECKING:
    from footprint_lab.record.recording import Commit, Decision, Event, LLMExchange, Read, Recording, Step

ANSWER_PATH = list(ANSWER)


class RecordingIndex:
    """Steps, exchanges, reads, commits and events of a recording tree, by step id."""

    __slots__ = ("_commits", "_events", "_names", "_reads", "exchanges", "home", "mounted", "positions", "recordings",
                 "root", "steps")

    def __init__(self, root: Recording) -> None:
        self.root = root
        self.recordings: list[Recording] = []
        self.steps: dict[str, Step] = {}
        #: step id -> the recording (the root or a member's) that holds the step
        self.home: dict[str, Recording] = {}
        #: step id -> its position in its recording's steps (and, one commit per step, in its commits)
        self.positions: dict[str, int] = {}
        self.exchanges: dict[str, LLMExchange] = {}
        #: step id -> the member recordings it mounted
        self.mounted: dict[str, list[Recording]] = {}
        self._reads: dict[str, list[Read]] | None = None
        self._commits: dict[str, Commit] | None = None
        self._events: dict[str, list[Event]] | None = None
        self._names: SourceNames | None = None
        pending = [root]
        while pending:
            recording = pending.pop()
            self.recordings.append(recording)
            steps = self.steps
            home = self.home
            positions = self.positions
            for position, step in enumerate(recording.steps):
                step_id = step.step_id
                steps[step_id] = step
                home[step_id] = recording
                positions[step_id] = position
            for exchange in recording.exchanges:
                self.exchanges[exchange.step_id] = exchange
            for child in recording.children:
                mount = child.path or (child.steps[0].step_id.rpartition("/")[0] if child.steps else "")
                if mount:
                    self.mounted.setdefault(mount, []).append(child)
                pending.append(child)

    # -- built on first use ------------------------------------------------------------
    def reads_of(self, step_id: str) -> list[Read]:
        """The reads a step made, in order."""
        if self._reads is None:
            reads: dict[str, list[Read]] = {}
            for recording in self.recordings:
                for read in recording.reads:
                    found = reads.get(read.step_id)
                    if found is None:
                        reads[read.step_id] = [read]
                    else:
                        found.append(read)
            self._reads = reads
        return self._reads.get(step_id, [])

    def commit_of(self, step_id: str) -> Commit | None:
        """The one commit that closed a step, or ``None`` when the recording holds none."""
        recording = self.home.get(step_id)
        if recording is None:
            return None
        commits = recording.commits
        position = self.positions[step_id]
        # Steps run one at a time, each closed by one commit, so a step's commit sits at its own position.
        if position < len(commits) and commits[position].step_id == step_id:
            return commits[position]
        if self._commits is None:
            self._commits = {c.step_id: c for recording in self.recordings for c in recording.commits}
        return self._commits.get(step_id)

    def events_of(self, step_id: str) -> list[Event]:
        """The events a step emitted, in order."""
        if self._events is None:
            events: dict[str, list[Event]] = {}
            for recording in self.recordings:
                for event in recording.events:
                    events.setdefault(event.step_id, []).append(event)
            self._events = events
        return self._events.get(step_id, [])

    @property
    def names(self) -> SourceNames:
        """Each recording's member (path, name) and how its sources are named for a rerun."""
        if self._names is None:
            self._names = SourceNames(self.root)
        return self._names

    def member(self, recording: Recording) -> Member:
        """Where a recording of this tree sits: its member path and the name its runner was given."""
        return self.names.members[id(recording)]

    # -- questions every explanation asks ------------------------------------------------
    def answer_step(self, recording: Recording | None = None) -> str | None:
        """The step that wrote a recording's answer (the root's by default), or ``None``."""
        recording = recording or self.root
        for commit in reversed(recording.commits):
            if any(entry.path == ANSWER_PATH for entry in commit.entries):
                return commit.step_id
        return None

    def decision_of(self, step_id: str) -> Decision | None:
        """The decision a step recorded, or ``None``."""
        home = self.home.get(step_id)
        return None if home is None else next((d for d in home.decisions if d.step_id == step_id), None)

    def decision_seq(self, step_id: str) -> int | None:
        """The sequence number of the event a step's decision emitted, or ``None`` when none was recorded."""
        return next((e.seq for e in self.events_of(step_id) if e.type == "decision"), None)

    def is_llm_call(self, step_id: str) -> bool:
        return step_id in self.exchanges

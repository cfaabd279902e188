"""Members of a composed run: where each recording sits, what the analyst named it, and how its sources are named.

Rule kept here: every explanation of a composed run says which member each piece, verdict
and left-out piece belongs to, and names a source so that a rebuilt composition removes
exactly that one.

- A member's **path** is the chain of names its compositions mounted it under, from the
  outermost (``triage``, ``reflect/pass-2/critique``); the root run's path is empty. Its
  **name** is the runner's own ``name=`` (or ``id=``), as the analyst gave it.
- Its **qualifier** is the path a rebuild follows: the same, except that a ``Loop``'s passes
  share one body, so ``pass-N`` is left out (``reflect/critique``).
- A source id is **qualified** (``triage/system-prompt``) only when the same id names
  sources in more than one member; otherwise it stays bare (``vip-status``), as an agent's
  does. ``composition.without(["triage/x"])`` removes ``x`` from that member only; a bare
  id removes it from every member that declares it. Neither a member name nor a source id
  may hold ``/``, so the split is never in doubt.

Role: explain layer; pure functions of a recording tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from footprint_lab.explain.provenance.sources import removal_id
from footprint_lab.record.schema import FAILURES, KIND_REGISTRY, KIND_TOOL_RESULT, MEMBER_KEY, OUTPUTS

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece, Recording

#: The key a composition writes into a member's recording (``meta``) to say what it mounted it as.


@dataclass(frozen=True, slots=True)
class Member:
    """Where one recording sits in its run: path, rebuild qualifier, the runner's given name and kind."""

    path: str
    qualifier: str
    name: str | None
    kind: str

    def label(self) -> str:
        """``member 'triage' (agent 'triage')``, or ``the run`` for the root."""
        if not self.path:
            return "the run"
        given = f" ({self.kind} '{self.name}')" if self.name and self.name != self.path.rpartition("/")[2] else ""
        return f"member '{self.path}'{given}"


def members_of(root: Recording) -> dict[int, Member]:
    """Every recording of a run tree, by ``id()``, with its place in the run."""
    found: dict[int, Member] = {id(root): _member("", "", root)}
    pending = [root]
    while pending:
        parent = pending.pop()
        above = found[id(parent)]
        for child in parent.children:
            key = member_key(parent, child)
            path = f"{above.path}/{key}" if above.path else key
            if parent.runner.kind == "loop":
                qualifier = above.qualifier
            else:
                qualifier = f"{above.qualifier}/{key}" if above.qualifier else key
            found[id(child)] = _member(path, qualifier, child)
            pending.append(child)
    return found


def _member(path: str, qualifier: str, recording: Recording) -> Member:
    runner = recording.runner
    return Member(path, qualifier, runner.name or runner.id, runner.kind)


def member_key(parent: Recording, child: Recording) -> str:
    """The name ``parent`` mounted ``child`` under: recorded by the composition, or read from what its step wrote."""
    key = child.meta.get(MEMBER_KEY)
    if isinstance(key, str) and key:
        return key
    # A recording made before compositions wrote the key: the mounting step's commit names the member's output.
    for commit in parent.commits:
        if commit.step_id == child.path:
            for entry in commit.entries:
                if len(entry.path) == 2 and entry.path[0] in (OUTPUTS, FAILURES):
                    return str(entry.path[1])
    return child.path.rpartition("/")[2] or child.runner.kind


class SourceNames:
    """How the sources of one run tree are named for a rerun: qualified by member where ambiguous."""

    __slots__ = ("ambiguous", "members")

    def __init__(self, root: Recording, members: dict[int, Member] | None = None) -> None:
        self.members = members if members is not None else members_of(root)
        qualifiers: dict[str, set[str]] = {}
        pending = [root]
        while pending:
            recording = pending.pop()
            pending.extend(recording.children)
            qualifier = self.members[id(recording)].qualifier
            for piece in recording.context_pieces:
                base = removal_id(piece)
                if base is not None:
                    qualifiers.setdefault(base, set()).add(qualifier)
        #: ids that name sources in more than one member: shown qualified by member
        self.ambiguous = frozenset(base for base, where in qualifiers.items() if len(where) > 1)

    def name(self, recording: Recording, piece: ContextPiece) -> str | None:
        """The id a rerun of the whole run excludes to remove this piece (``None`` when none can)."""
        base = removal_id(piece)
        if base is None:
            return None
        return self.qualify(self.members[id(recording)], base)

    def qualify(self, member: Member, base: str) -> str:
        return f"{member.qualifier}/{base}" if base in self.ambiguous and member.qualifier else base


@dataclass(slots=True)
class Source:
    """A source a rerun can name: its kind, and the members that hold it (one, or several for a bare id)."""

    kind: str
    members: list[Member]

    @property
    def member(self) -> str:
        """The path of the member it belongs to; several joined by ', ' for a bare id held by more than one."""
        return ", ".join(m.path for m in self.members)

    @property
    def member_name(self) -> str | None:
        names = [m.name for m in self.members if m.name]
        return ", ".join(dict.fromkeys(names)) if names else None


def removable_sources(recording: Recording, names: SourceNames | None = None) -> dict[str, Source]:
    """Every id a rerun of this run could exclude, with the kind of source and the member(s) holding it.

    A tool appears as ``tool`` whether it was seen in the tools slot or through its results.
    Pieces that were skipped or dropped count too: they were declared, so they can be named.
    An id held by several members is listed qualified per member, and bare (every member).
    """
    names = names if names is not None else SourceNames(recording)
    found: dict[str, Source] = {}
    pending = [recording]
    while pending:
        current = pending.pop(0)
        pending.extend(current.children)
        member = names.members[id(current)]
        for piece in current.context_pieces:
            base = removal_id(piece)
            if base is None:
                continue
            kind = "tool" if piece.source_kind in (KIND_REGISTRY, KIND_TOOL_RESULT) else piece.source_kind
            for name in {names.qualify(member, base), base}:
                source = found.setdefault(name, Source(kind, []))
                if member not in source.members:
                    source.members.append(member)
    return found

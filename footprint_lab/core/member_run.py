"""Member runs: whom a composition's member runs for is decided by the run that mounted it.

The defect this closes: a composition mounts each member through the member's own
``_execute``; the member's ``run()`` never runs. Anything per-run a member read off its
instance (an identity, a memory namespace, a run id) would be shared by every run of the
composition: one memory for every user, or the identity of whoever ran it last.

The rule:

- The outermost composition's ``run()`` opens ONE run here (the identity its caller
  named, or none, and the run's own id) and hands its members only a link to it: an
  unguessable token on their :class:`~footprint_lab.core.runner.Mount`. Nested
  compositions hand the same link down; they never open a run of their own.
- A member looks its run up by that link (:func:`run_for`): the caller's identity when one
  was named, else nothing, with the run's own conversation ``{conversation_id: run_id}``
  as its memory namespace (:func:`~footprint_lab.core.identity.memory_identity`). Never
  a value its instance holds.
- A link that is not live (forged, from a finished run, closed) is refused with
  :class:`ParentRunRefusedError`, and so is any ``parent_run`` in an input (a caller's,
  a mapper's, or one built from a model's or a tool's output) and any ``identity`` in a
  member's input: only the engine names a member's run, and it does so on the mount.
- A member mounted where no run reaches it is refused with :class:`MemberIdentityError`.
- A resume re-opens its paused run under a fresh link; while a leg of that run is still
  open, a second resume would hand its members a second request and is refused with
  :class:`ResumeRequestConflictError`.
- The run that opened a link closes it when it returns (finished, failed or paused), so
  the registry never outgrows the runs in flight.

The link is a token rather than an object reference so that nothing but this module can
turn it back into a run: the registry is private, and a string copied out of one run names
nothing once that run has returned.

Role: core layer, run identity. Agent and every composition read it; nothing else writes it.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from footprint_lab.base.refusal import Refusal
from footprint_lab.core.identity import Identity

#: The key a caller might try to name a run under; never accepted from any input.
PARENT_RUN_KEY = "parent_run"


class ParentRunRefusedError(Refusal):
    """Raised when a run is named by anything but a live link its composition was handed.

    ``door`` names the runner (or composition step) that refused. ``carrier`` says where
    the claim arrived: ``"input"`` (a ``parent_run`` key in an input, including one an
    input mapper built), ``"identity"`` (an ``identity`` key in a member's input) or
    ``"link"`` (a mount whose link is not live: forged, from a finished run, or closed).
    """

    code = "ERR_PARENT_RUN_REFUSED"
    fields = ("door", "carrier")

    def __init__(self, door: str, carrier: str) -> None:
        arrived = {
            "input": "its input carries 'parent_run'",
            "identity": "its input, as a composition member, carries 'identity'",
            "link": "it was mounted with a run link that is not live (made up, or from a run that has returned)",
        }[carrier]
        super().__init__(
            f"{door}: {arrived}, and it is refused. Only a composition's own run() decides whom its "
            "members run for and hands them that run itself; a value built anywhere else (an input, an "
            "input mapper, a model's or a tool's output, a link kept from an earlier run) could name "
            "another person. Remove it, and pass identity= to the outermost run() instead."
        )
        self.door = door
        self.carrier = carrier


class MemberIdentityError(Refusal):
    """Raised when a runner is mounted as a member and no run reaches it.

    Carries ``door``. A member is mounted by another runner (its ``run()`` never runs);
    with neither a link from a composition nor an identity on its mount it would have to
    run for its instance's last caller, or for a placeholder every run shares.
    """

    code = "ERR_MEMBER_NO_IDENTITY"
    fields = ("door",)

    def __init__(self, door: str) -> None:
        super().__init__(
            f"{door}: this runner is mounted inside another runner and no run reaches it: no link from "
            "a composition and no identity on its mount. It is refused rather than run for whoever ran "
            "the instance last, or for a placeholder every run would share. Mount it through a "
            "composition (Sequence, Parallel, Conditional, Loop, Workflow, Graph), whose run() hands it "
            "the run it serves, or put the identity on the Mount you build."
        )
        self.door = door


class ResumeRequestConflictError(Refusal):
    """Raised when a resume would reopen a run that another leg still holds open.

    Carries ``door``. Each ``run()`` and ``resume()`` call is one request; the members of an
    open run already serve one, and a second resume would hand them a second.
    """

    code = "ERR_RESUME_REQUEST_CONFLICT"
    fields = ("door",)

    def __init__(self, door: str) -> None:
        super().__init__(
            f"{door}: the paused run is still open, resumed by another call that has not returned, and "
            "its members serve that request; a second resume cannot hand them another one. Await the "
            "resume in flight and continue from the Run it returns."
        )
        self.door = door


@dataclass(frozen=True, slots=True)
class ParentRun:
    """The run a member serves: its id, the caller's identity (or ``None``), and its link."""

    run_id: str
    identity: Identity | None
    link: str | None = None


# The registry: link -> run, and run id -> link for the runs that are open. Private, so that
# nothing outside this module can make a member run for someone.
_live: dict[str, ParentRun] = {}
_open: dict[str, str] = {}


def open_parent_run(run_id: str, identity: Identity | None, *, door: str) -> ParentRun:
    """Open ``run_id`` for its members and return it with a fresh link; close it with :func:`close_parent_run`.

    A run id that is already open is a resume racing another leg of the same run: refused.
    """
    if run_id in _open:
        raise ResumeRequestConflictError(door)
    link = secrets.token_urlsafe(24)
    opened = ParentRun(run_id=run_id, identity=identity, link=link)
    _live[link] = opened
    _open[run_id] = link
    return opened


def close_parent_run(opened: ParentRun) -> None:
    """Close a run opened by :func:`open_parent_run`; its link names nothing afterwards."""
    if opened.link is not None and _live.pop(opened.link, None) is not None:
        _open.pop(opened.run_id, None)


def open_run_count() -> int:
    """How many runs are open right now (zero whenever no composition run is in flight)."""
    return len(_live)


def check_member_input(bag: Mapping[str, Any], door: str, *, member: bool) -> None:
    """Refuse an input that tries to name whom a run is for (``parent_run``; ``identity`` on a member)."""
    if PARENT_RUN_KEY in bag:
        raise ParentRunRefusedError(door, "input")
    if member and "identity" in bag:
        raise ParentRunRefusedError(door, "identity")


def run_for(mount: Any, bag: Mapping[str, Any], door: str) -> ParentRun:
    """The run an execution serves, from its mount alone; refuses every other claim.

    A mount with a link is a composition member: the link decides, and a dead one is
    refused. A top-level mount (no path) serves its own run and the identity its caller
    named. A member mount without a link serves the identity put on the mount, and is
    refused when there is none.
    """
    member = bool(mount.path)
    check_member_input(bag, door, member=member)
    link = mount.link
    if link is not None:
        found = _live.get(link) if isinstance(link, str) else None
        if found is None:
            raise ParentRunRefusedError(door, "link")
        return found
    if member and mount.identity is None:
        raise MemberIdentityError(door)
    return ParentRun(run_id=mount.run_id, identity=mount.identity)

"""Rebuilding a composition for reruns: every member rebuilt the same way, each source removed where it was named.

Rule kept here: ``composition.without(ids)`` and ``composition.with_forced(ids)`` change
exactly the sources named and nothing else, so ``localize``, ``rerun_without`` and
``find_dropped_context`` can rerun a whole pipeline as they rerun one agent.

- A bare id (``vip-status``) names that source in every member that has it.
- An id qualified by a member path (``triage/system-prompt``, ``reflect/critique/tone``)
  names it in that member only. A ``Loop``'s passes share one body, so its path has no
  ``pass-N`` part; member names and source ids never hold ``/``.
- An id no member has is refused by name (:class:`~footprint_lab.context.source_ids.UnknownSourceError`)
  before anything is built.
- ``seed`` reaches every member that can be rebuilt; a member that cannot (a runner without
  ``without``) is mounted as it is, and naming a source in it is refused.

Role: flow layer; it calls each member's own ``without`` / ``with_forced`` and never reads an
agent's private state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from footprint_lab.context.source_ids import Rebuildable, UnknownSourceError, id_list

if TYPE_CHECKING:
    from footprint_lab.core.runner import Runner
    from footprint_lab.flow._composition import Composition

#: a member's key in a rebuild path; ``None`` for a part its composition's paths do not name (a Loop's body)
Part = tuple[str | None, "Runner"]


def member_ids(runner: Any, *, forcible: bool) -> set[str] | None:
    """The ids a member's rebuild accepts, or ``None`` when it cannot be rebuilt."""
    if not isinstance(runner, Rebuildable):
        return None
    return set(runner.source_ids(forcible=forcible))


def composition_ids(parts: list[Part], *, forcible: bool) -> list[str]:
    """Every id a composition's rebuild accepts: each member's ids bare, and qualified by the member's key."""
    found: dict[str, None] = {}
    for key, runner in parts:
        known = member_ids(runner, forcible=forcible) or set()
        for name in sorted(known):
            found[name] = None
        if key is not None:
            for name in sorted(known):
                found[f"{key}/{name}"] = None
    return list(found)


def route(door: str, parts: list[Part], ids: Iterable[str], *, forcible: bool, action: str) -> list[list[str]]:
    """For each member, the ids it must remove (or force in), as that member names them; unknown ids refused."""
    knowns = [member_ids(runner, forcible=forcible) for _, runner in parts]
    routed: list[list[str]] = [[] for _ in parts]
    unknown: list[str] = []
    for name in ids:
        head, qualified, rest = name.partition("/")
        hit = False
        for position, (key, _) in enumerate(parts):
            known = knowns[position]
            if known is None:
                continue
            if key is None or not qualified:  # a part its paths do not name, or a bare id: wherever it is held
                wanted = name
            elif head == key:
                wanted = rest
            else:
                continue
            if wanted in known:
                routed[position].append(wanted)
                hit = True
        if not hit:
            unknown.append(name)
    if unknown:
        raise UnknownSourceError(door, unknown, composition_ids(parts, forcible=forcible), action)
    return routed


def rebuilt(composition: Composition, door: str, *, exclude: Iterable[str], force: Iterable[str],
            seed: int | None) -> Composition:
    """A new composition of the same shape with each member rebuilt without ``exclude`` and with ``force``."""
    parts = composition._parts()
    removed = route(door, parts, id_list(door, "exclude", exclude), forcible=False, action="remove")
    forced_names = id_list(door, "force", force) if force else []
    forced = route(door, parts, forced_names, forcible=True, action="force in")
    runners: list[Runner] = []
    for (_, runner), excluded, forcing in zip(parts, removed, forced, strict=True):
        seeded = {"seed": seed} if seed is not None else {}
        if forcing:
            runners.append(runner.with_forced(forcing, exclude=excluded, **seeded))  # type: ignore[attr-defined]
        elif (excluded or seed is not None) and member_ids(runner, forcible=False) is not None:
            runners.append(runner.without(excluded, **seeded))  # type: ignore[attr-defined]
        else:
            runners.append(runner)
    return composition._rebuilt(runners)

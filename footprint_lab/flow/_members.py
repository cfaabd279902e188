"""The members a composition is given, judged before it exists: names, runners, callables.

Rule kept here: a composition that could not run is never built. Members come as
``{name: runner}`` or ``[(name, runner), ...]``; each name is a non-empty string without ``/``
(it becomes part of step ids and rebuild paths) and not the reserved ``input``, each member a
runner, no name twice; a predicate, mapper or merge must be callable with its one argument.
Each is refused by name (:mod:`footprint_lab.flow.refusals`), by the shape of what arrived.

Role: flow layer, used by every composition's constructor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from footprint_lab.base.refusal import call_problem, describe_shape
from footprint_lab.core.runner import Runner
from footprint_lab.flow.refusals import CompositionConfigError, DuplicateStepError, EmptyCompositionError
from footprint_lab.redact.policy import combine_policies

#: the name a member cannot take: the run's own message is tracked under it
RESERVED = "input"

#: a composition's members as a caller gives them: ``{name: runner}`` or ``[(name, runner), ...]``
Members: TypeAlias = Mapping[str, Runner] | Iterable[tuple[str, Runner]]


def named_members(composition: str, members: Any, example: str) -> list[tuple[str, Runner]]:
    """Members given as ``{name: runner}`` or ``[(name, runner), ...]``, checked; refused when unusable."""
    if isinstance(members, Mapping):
        pairs: list[Any] = list(members.items())
    elif isinstance(members, Iterable) and not isinstance(members, str | bytes):
        pairs = list(members)
    else:
        raise CompositionConfigError(
            composition, "members", describe_shape(members),
            f"must be a dict of name -> runner or a list of (name, runner) pairs, e.g. {example}",
        )
    if not pairs:
        raise EmptyCompositionError(composition, example)
    checked: list[tuple[str, Runner]] = []
    seen: set[str] = set()
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise CompositionConfigError(composition, "members", describe_shape(pair),
                                         f"must hold (name, runner) pairs, e.g. {example}")
        name, member = pair
        check_name(composition, name)
        check_runner(composition, name, member)
        if name in seen:
            raise DuplicateStepError(composition, shown_name(name, [runner for _, runner in checked] + [member]))
        seen.add(name)
        checked.append((name, member))
    return checked


def shown_name(name: str, runners: Iterable[Any]) -> str:
    """A member's name as an error may quote it: masked by the redaction policies of ``runners`` (the
    members of the composition refusing it), as every record of a run of theirs would mask it."""
    policy = combine_policies(*(getattr(runner, "redact", None) for runner in runners))
    return name if policy is None else str(policy.for_run().scrub(name))


def check_name(composition: str, name: Any) -> None:
    """A member name is a non-empty string without '/', and not the reserved ``input``."""
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise CompositionConfigError(composition, "name", describe_shape(name),
                                     "must be a non-empty string without '/' naming the member")
    if name == RESERVED:
        raise CompositionConfigError(composition, name, "the reserved name",
                                     "is reserved for the run's own message; name the member something else")


def check_runner(composition: str, name: str, member: Any) -> None:
    """A member is a runner: an Agent, an LLMCall or a composition."""
    if not isinstance(member, Runner):
        raise CompositionConfigError(composition, name, describe_shape(member),
                                     "must be a runner (an Agent, an LLMCall or a composition)")


def failure_summary(exc: BaseException) -> dict[str, Any]:
    """What a failed member's step commits: the error's type and code, never its message."""
    return {"type": type(exc).__name__, "code": getattr(exc, "code", None)}


def check_callable(composition: str, setting: str, value: Any, fix: str) -> None:
    """Refuse a predicate, mapper or merge that cannot be called with its one argument."""
    problem = call_problem(value, 1)
    if problem is not None:
        raise CompositionConfigError(composition, setting, problem, fix)

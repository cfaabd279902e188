"""The rebuild protocol reruns use: a runner rebuilt without some sources, or with some forced in.

Rule kept here: every explanation that reruns (``localize``, ``rerun_without``,
``find_dropped_context``) and every runner that can be rebuilt (an ``Agent``, a composition)
speak one protocol, :class:`Rebuildable`, and judge the ids they are given in one place:

- ``source_ids(forcible=False)`` lists the ids ``without`` accepts (the system prompt as
  ``system-prompt``, each tool by its name, each context declaration by its id);
  ``source_ids(forcible=True)`` the ids ``with_forced`` accepts (declarations only);
- ``without(exclude, seed=...)`` and ``with_forced(force, exclude=..., seed=...)`` build a new
  runner and never change the one asked;
- the ids a runner gives its own pieces are :data:`RESERVED_IDS` (``system-prompt``, ``user-message``,
  ``read_skill``, from ``record.schema``): no declaration may take one, and no tool the id of a piece
  that is not a tool, so one id never names two sources;
- a list of ids is read by :func:`id_list` (a lone string is one id; anything but strings is
  refused with :class:`ExplainConfigError`), and an id nothing holds is refused by
  :class:`UnknownSourceError`, which names the ids that can be given (the nearest first, when
  one is a near miss) and never quotes the caller's.

It sits below both ``core`` (which implements the protocol) and ``explain`` (which drives it),
so neither imports the other for it.

Role: context layer; imports only the engine's refusal base and the recording's schema.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from footprint_lab.base.refusal import CallSettingRefusal, Refusal, describe_shape, did_you_mean
from footprint_lab.record.schema import READ_SKILL, SYSTEM_PROMPT, USER_MESSAGE

#: The ids a runner gives its own pieces, each with what it names: the one list. A declaration may take
#: none of them (``context.declarations``), and a tool none but ``read_skill``, which is a tool itself and
#: clashes only with an agent that declares skills (``Agent`` refuses that as two tools of one name).
RESERVED_IDS: dict[str, str] = {
    SYSTEM_PROMPT: "the agent's system prompt",
    USER_MESSAGE: "the user's message",
    READ_SKILL: "the tool that loads a skill",
}


@runtime_checkable
class Rebuildable(Protocol):
    """A runner that reruns can rebuild without some sources, or with some forced in."""

    def source_ids(self, *, forcible: bool = False) -> list[str]: ...

    def without(self, exclude: Iterable[str] | str = (), *, seed: int | None = None) -> Any: ...


class ExplainConfigError(CallSettingRefusal):
    """Raised when an explanation (or a rebuild it asks for) is given a setting it cannot use.

    Carries ``function`` (the explanation or method called), ``setting`` (the keyword at fault)
    and ``received`` (its shape, never its value).
    """

    code = "ERR_EXPLAIN_CONFIG"


class UnknownSourceError(Refusal, ValueError):
    """Raised when a rerun is asked to remove (or force in) a source the run or agent does not have.

    Carries ``function`` (the explanation or method called), ``unknown`` (how many of the
    named ids are unknown; the ids themselves are not quoted) and ``known`` (the ids that
    can be named: declaration ids, tool names, ``system-prompt``). Given the unknown ids, the
    message names the known id nearest to one of them, when one is near (a misspelt id).
    """

    code = "ERR_UNKNOWN_SOURCE"
    fields = ("function", "unknown", "known")

    def __init__(self, function: str, unknown: Sequence[str], known: Sequence[str], action: str = "remove") -> None:
        listed = ", ".join(f"'{k}'" for k in known) or "none"
        near = did_you_mean(unknown, known)
        super().__init__(
            f"{function}: {len(unknown)} of the ids given name no source it can {action}"
            f"{'; ' + near if near else '.'} Name sources as run.suspects() shows them in removal_id: {listed}. "
            "The user's message and the model's own turns cannot be removed: a rerun answers the same input "
            "and produces its own turns."
        )
        self.function = function
        self.unknown = len(unknown)
        self.known = list(known)


def id_list(function: str, setting: str, value: Any, *, needed: str = "") -> list[str]:
    """A list of source ids (a lone string is one id), each once; refused when it is not strings, or empty where
    ``needed`` says what an id is needed for."""
    if isinstance(value, str):
        return [value]
    if needed and isinstance(value, list | tuple | set | frozenset) and not value:
        raise ExplainConfigError(function, setting, "an empty list", f"must name at least one source {needed}, "
                                 "as shown in run.suspects(), e.g. ['vip-override']")
    if isinstance(value, list | tuple | set | frozenset) and all(isinstance(v, str) for v in value):
        return list(dict.fromkeys(value))
    raise ExplainConfigError(
        function, setting, describe_shape(value),
        "must be a list of source ids as shown in run.suspects() (a declaration id, a tool name, "
        "'system-prompt'), e.g. ['vip-override']",
    )


def known_ids(function: str, setting: str, value: Any, known: Collection[str], action: str = "remove") -> list[str]:
    """:func:`id_list` of ``value``, every id one of ``known``; an unknown one is refused by count."""
    names = id_list(function, setting, value)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UnknownSourceError(function, unknown, list(known), action)
    return names

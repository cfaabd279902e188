"""An agent rebuilt for a rerun: from its own declarations, some removed, some forced in, a seed put on.

Rule kept here: a rerun changes exactly what it was asked to change. The rebuilt agent is made
from the keywords the original was declared with (never from its run state: listeners, runs and
conversations are not carried over); a removed ``system-prompt`` leaves no system prompt, a
removed tool is gone with its results, declarations are removed or forced in as
:mod:`footprint_lab.context.rebuild` says, and a seed goes on every request through
:func:`footprint_lab.providers.seeded.seeded`. The ids are judged before, by the rebuild
protocol (:mod:`footprint_lab.context.source_ids`).

Role: core layer: the rerun doors of ``Agent`` (:class:`Rebuilds`, mixed in: ``without``, ``with_forced``,
``source_ids``) and the rebuild they share (:func:`rebuilt`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Self, TypeVar

from footprint_lab.context.rebuild import forced_declarations, without_declarations
from footprint_lab.context.source_ids import known_ids
from footprint_lab.providers.seeded import seeded
from footprint_lab.record.schema import SYSTEM_PROMPT

if TYPE_CHECKING:
    from footprint_lab.context.assembly import ContextPlan
    from footprint_lab.core.tools import Tool
    from footprint_lab.providers.types import Provider


class Rebuilds:
    """The rerun doors of an ``Agent`` (mixed in): a new agent from its declarations, some removed, some forced."""

    if TYPE_CHECKING:
        system: str
        tools: list[Tool]
        provider: Provider
        _context: ContextPlan | None

        def _declarations(self) -> dict[str, Any]: ...

    def without(self, exclude: Iterable[str] | str = (), *, seed: int | None = None) -> Self:
        """A new agent built from this one's declarations minus the ``exclude`` ids.

        An id names the system prompt (``'system-prompt'``), a tool (by its name: the tool is
        gone, so are its results) or a context declaration (an instruction citing a removed
        fact no longer cites it). ``seed`` is put on every request of the new agent. Unknown
        ids are refused with the ids this agent has. Listeners and runs are not carried over:
        the new agent is a clean rerun target.
        """
        return self._rebuild(self._named("Agent.without", exclude, self.source_ids()), (), seed)

    def with_forced(self, force: Iterable[str] | str, *, exclude: Iterable[str] | str = (),
                    seed: int | None = None) -> Self:
        """A new agent whose ``force`` declarations are admitted on every iteration and past any budget.

        For testing missing context by restoration; see :mod:`footprint_lab.context.rebuild`
        for exactly what forcing changes. ``exclude`` and ``seed`` work as in :meth:`without`.
        """
        forced = self._named("Agent.with_forced", force, self.source_ids(forcible=True), action="force in")
        return self._rebuild(self._named("Agent.with_forced", exclude, self.source_ids()), forced, seed)

    def _rebuild(self, removed: set[str], forced: Iterable[str], seed: int | None) -> Self:
        return rebuilt(self, removed, forced, seed)

    def source_ids(self, *, forcible: bool = False) -> list[str]:
        """Every id ``without`` accepts for this agent (``forcible``: the declarations ``with_forced`` accepts)."""
        declared = [declaration.id for declaration, _, _ in self._context.entries] if self._context else []
        if forcible:
            return declared
        return [*([SYSTEM_PROMPT] if self.system else []), *(t.name for t in self.tools), *declared]

    @staticmethod
    def _named(door: str, ids: Iterable[str] | str, known: list[str], action: str = "remove") -> set[str]:
        return set(known_ids(door, "exclude" if action == "remove" else "force", ids, known, action))


Made = TypeVar("Made", bound=Rebuilds)


def rebuilt(agent: Made, removed: set[str], forced: Iterable[str], seed: int | None) -> Made:
    """A new agent of ``agent``'s class, declared as it was (its ``_declarations()``) minus ``removed``,
    with ``forced`` and ``seed``; a runner that declares no tools or context (an ``LLMCall``) keeps none."""
    settings = agent._declarations()
    if SYSTEM_PROMPT in removed:
        settings["system"] = ""
    if "tools" in settings:
        settings["tools"] = [t for t in settings["tools"] if t.name not in removed]
    if "context" in settings:
        settings["context"] = without_declarations(settings["context"], removed)
        forced = list(forced)
        if forced:
            settings["context"], settings["budgets"] = forced_declarations(
                settings["context"], settings["budgets"] or {}, forced, system_prompt=bool(settings["system"]))
    if seed is not None:
        settings["provider"] = seeded(agent.provider, seed)
    return type(agent)(**settings)

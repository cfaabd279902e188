"""An agent rebuilt for a rerun: from its own declarations, some removed, some forced in, a seed put on.

Rule kept here: a rerun changes exactly what it was asked to change. The rebuilt agent is made
from the keywords the original was declared with (never from its run state: listeners, runs and
conversations are not carried over); a removed ``system-prompt`` leaves no system prompt, a
removed tool is gone with its results, declarations are removed or forced in as
:mod:`footprint_lab.context.rebuild` says, and a seed goes on every request through
:func:`footprint_lab.providers.seeded.seeded`. The ids are judged before, by the rebuild
protocol (:mod:`footprint_lab.context.source_ids`).

Role: core layer, for ``Agent.without`` and ``Agent.with_forced``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from footprint_lab.context.rebuild import forced_declarations, without_declarations
from footprint_lab.providers.seeded import seeded
from footprint_lab.record.schema import SYSTEM_PROMPT

if TYPE_CHECKING:
    from footprint_lab.core.agent import Agent


def rebuilt(agent: Agent, removed: set[str], forced: Iterable[str], seed: int | None) -> Agent:
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

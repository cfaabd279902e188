"""Triggers: when a declared injection is let into the context, and the reason recorded for it.

Rule kept here: every trigger gives a verdict *and a reason* on every iteration, and a trigger
never breaks a run. A rule whose predicate raises is a skip with the reason
``rule raised: <ExceptionType>`` (the exception's message is not recorded: it may quote the
user's data), never a crash.

The four triggers:

- :func:`always` (the default): admitted on every iteration, reason ``always``.
- :func:`rule` (what ``active_when=predicate`` builds): the predicate receives a read-only
  :class:`IterationView` (``.iteration``, ``.message``, ``.history``, ``.last_tool_results``);
  truthy admits (``rule matched``), falsy skips (``rule did not match``).
- :func:`on_tool_return`: admitted on the iteration right after a matching tool returned
  (reason ``tool 'x' returned``). A ``str`` names one tool exactly; a compiled ``re.Pattern``
  must match the whole tool name.
- ``llm_activated`` (skills only, never passed by hand): admitted from the iteration after the
  model called ``read_skill`` for it until the turn ends (reason ``read_skill('billing')``).

A verdict is ``(admitted, reason, evidence_step)``; ``evidence_step`` is the tool step whose
result let the piece in (``on_tool_return``, ``llm_activated``), else ``None``.

Role: context layer; pure functions of the iteration, nothing here writes to the recording.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import call_problem
from footprint_lab.context.refusals import ContextDeclarationError

if TYPE_CHECKING:
    from footprint_lab.context.landing import TurnContext

TriggerVerdict = tuple[bool, str, str | None]


def _freeze(value: Any) -> Any:
    """A read-only copy: dicts become mapping proxies, lists become tuples."""
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


class IterationView:
    """What a rule may look at, read-only: the iteration, the user's message and the conversation.

    ``history`` is every message of the conversation so far (the user's message, assistant
    turns, tool results), oldest first; ``last_tool_results`` are the tool results of the
    previous iteration (empty on the first). Both are built on first access and frozen, so a
    predicate cannot change what the model is sent.
    """

    __slots__ = ("_frozen_history", "_frozen_results", "_history", "_results", "iteration", "message")

    def __init__(self, iteration: int, message: str, history: list[dict[str, Any]],
                 results: list[dict[str, Any]]) -> None:
        self.iteration = iteration
        self.message = message
        self._history = history
        self._results = results
        self._frozen_history: tuple[Mapping[str, Any], ...] | None = None
        self._frozen_results: tuple[Mapping[str, Any], ...] | None = None

    @property
    def history(self) -> tuple[Mapping[str, Any], ...]:
        if self._frozen_history is None:
            self._frozen_history = _freeze(self._history)
        return self._frozen_history

    @property
    def last_tool_results(self) -> tuple[Mapping[str, Any], ...]:
        if self._frozen_results is None:
            self._frozen_results = _freeze(self._results)
        return self._frozen_results

    def __repr__(self) -> str:
        return f"IterationView(iteration={self.iteration}, messages={len(self._history)})"


class Trigger:
    """Base of every trigger: ``kind`` is what the recording shows in a piece's ``trigger``."""

    __slots__ = ()
    kind = "trigger"

    def check(self, injection_id: str, view: IterationView, turn: TurnContext) -> TriggerVerdict:
        raise TypeError(f"{type(self).__name__} does not define a verdict")

    def describe(self) -> str:
        return self.kind

    def __repr__(self) -> str:
        return self.describe()


class Always(Trigger):
    __slots__ = ()
    kind = "always"

    def check(self, injection_id: str, view: IterationView, turn: TurnContext) -> TriggerVerdict:
        return True, "always", None


_ALWAYS = Always()


class Rule(Trigger):
    __slots__ = ("name", "predicate")
    kind = "rule"

    def __init__(self, predicate: Callable[[IterationView], Any]) -> None:
        self.predicate = predicate
        self.name = getattr(predicate, "__qualname__", type(predicate).__name__)

    def check(self, injection_id: str, view: IterationView, turn: TurnContext) -> TriggerVerdict:
        try:
            matched = self.predicate(view)
        except Exception as exc:  # a broken rule skips its piece; it never breaks the run
            return False, f"rule raised: {type(exc).__name__}", None
        return (True, "rule matched", None) if matched else (False, "rule did not match", None)

    def describe(self) -> str:
        return f"rule({self.name})"


class OnToolReturn(Trigger):
    __slots__ = ("name", "pattern", "target")
    kind = "on_tool_return"

    def __init__(self, name: str | None, pattern: re.Pattern[str] | None) -> None:
        self.name = name
        self.pattern = pattern
        #: what the verdict depends on besides the tools that returned: triggers with equal
        #: targets give equal verdicts in an iteration
        self.target = (name, pattern)

    def matches(self, tool_name: str) -> bool:
        if self.pattern is not None:
            return self.pattern.fullmatch(tool_name) is not None
        return tool_name == self.name

    def check(self, injection_id: str, view: IterationView, turn: TurnContext) -> TriggerVerdict:
        for tool_name, step_id in turn.returned:
            if self.matches(tool_name):
                return True, f"tool '{tool_name}' returned", step_id
        return False, f"waiting for {self._target()} to return", None

    def _target(self) -> str:
        return f"a tool matching /{self.pattern.pattern}/" if self.pattern is not None else f"tool '{self.name}'"

    def describe(self) -> str:
        target = f"/{self.pattern.pattern}/" if self.pattern is not None else repr(self.name)
        return f"on_tool_return({target})"


class LLMActivated(Trigger):
    __slots__ = ()
    kind = "llm_activated"

    def check(self, injection_id: str, view: IterationView, turn: TurnContext) -> TriggerVerdict:
        step_id = turn.active_skills.get(injection_id)
        if step_id is None:
            return False, "not loaded: the model has not called read_skill for it", None
        return True, f"read_skill('{injection_id}')", step_id


_LLM_ACTIVATED = LLMActivated()


def always() -> Trigger:
    """Admit on every iteration (the default trigger)."""
    return _ALWAYS


def rule(predicate: Callable[[IterationView], Any]) -> Trigger:
    """Admit while ``predicate(view)`` is truthy; the same as ``active_when=predicate``."""
    problem = call_problem(predicate, 1)
    if problem is not None:
        raise ContextDeclarationError(
            "rule", "predicate", predicate,
            "must be a function taking the iteration view, e.g. rule(lambda view: view.iteration > 1)",
            received=problem,
        )
    return Rule(predicate)


def on_tool_return(tool: str | re.Pattern[str]) -> Trigger:
    """Admit on the iteration after a tool returned: a name (exact) or a compiled regex (whole name)."""
    if isinstance(tool, re.Pattern):
        return OnToolReturn(None, tool)
    if isinstance(tool, str) and tool:
        return OnToolReturn(tool, None)
    raise ContextDeclarationError(
        "on_tool_return", "tool", tool,
        "must be a tool name or a compiled pattern, e.g. on_tool_return('lookup_order') or "
        "on_tool_return(re.compile(r'lookup_.*'))",
    )


def llm_activated() -> Trigger:
    """The skills' trigger: admitted once the model asked for the skill with ``read_skill``."""
    return _LLM_ACTIVATED

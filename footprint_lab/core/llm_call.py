"""``LLMCall``: one call to the model with a system prompt and the caller's message; no tools, no loop.

Rule kept: an ``LLMCall`` is built only with context that could reach the model. A skill is
loaded by the model calling ``read_skill`` and an ``on_tool_return`` trigger waits for a
tool's result; an ``LLMCall`` offers no tools, so both are refused by name when it is built
(:class:`LLMCallContextError`), as is a budget for the tools slot.

Pattern: an :class:`~footprint_lab.core.agent.Agent` with one iteration and no tools, whose
loop is seed, assemble (tools withheld), call-llm, final. Everything else (recording,
conversation doors, rebuilding for reruns) is the agent's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from footprint_lab.base.refusal import Refusal
from footprint_lab.base.runners import register as register_runner
from footprint_lab.context.assembly import ContextConfigError, ContextPlan
from footprint_lab.core.agent import Agent
from footprint_lab.core.turn import Turn, input_refused
from footprint_lab.providers.types import Provider
from footprint_lab.redact.policy import Redaction


class LLMCallContextError(Refusal):
    """Raised when an ``LLMCall`` is given context that only a tool-using agent could use.

    A skill is loaded by the model calling ``read_skill``, and an ``on_tool_return`` trigger
    waits for a tool's result; an ``LLMCall`` offers no tools, so neither could ever land.
    Carries ``context_id`` (the declaration's id) and ``kind`` (``skill``, or the kind of the
    declaration whose trigger waits for a tool).
    """

    code = "ERR_LLM_CALL_CONTEXT"
    fields = ("context_id", "kind")

    def __init__(self, context_id: str, kind: str, why: str) -> None:
        super().__init__(
            f"LLMCall: context '{context_id}' (a {kind}) {why}, and an LLMCall offers the model no tools, so it "
            "could never reach the model. Use an Agent(...) for context that depends on tools, or declare the "
            "text without it (define_instruction(id=..., prompt=...) for a skill's body; no trigger for a fact "
            "that should always be there)."
        )
        self.context_id = context_id
        self.kind = kind


class LLMCall(Agent):
    """One LLM call with a system prompt and the caller's message; no tools, no loop.

    ``context`` takes the same declarations as an ``Agent`` except those that need tools
    (skills, ``on_tool_return`` triggers), which are refused when the call is built;
    ``budgets`` caps the ``system`` and ``messages`` slots; ``seal=True`` seals each run's recording.
    """

    kind: ClassVar[str] = "llm_call"

    def __init__(
        self,
        *,
        provider: Provider,
        model: str | None = None,
        system: str = "",
        id: str | None = None,
        name: str | None = None,
        context: Sequence[Any] = (),
        budgets: Mapping[str, int] | None = None,
        redact: Redaction | None = None,
        input_guard: Callable[[str], Any] | None = None,
        seal: bool = False,
    ) -> None:
        super().__init__(provider=provider, model=model, system=system, id=id, name=name, max_iterations=1,
                         context=context, budgets=budgets, redact=redact, input_guard=input_guard, seal=seal)

    async def _loop(self, turn: Turn) -> tuple[str, dict[str, Any] | None]:
        if await self._seed(turn) is None:
            return self._final(turn), input_refused()
        self._assemble(turn, 1, withhold_tools=True)
        await self._call(turn, 1, withheld=False)
        return self._final(turn), None

    def _plan_context(self, context: Any, budgets: Any, runner: str) -> ContextPlan | None:
        """As for an agent, refusing what only tools could bring into the context."""
        plan = ContextPlan.build(context, budgets, runner=runner, tools=self._tool_names)
        if plan is None:
            return None
        for injection, _, _ in plan.entries:
            if injection.kind == "skill":
                raise LLMCallContextError(injection.id, "skill", "is loaded when the model calls read_skill")
            if injection.trigger.kind == "on_tool_return":
                raise LLMCallContextError(injection.id, injection.kind, "is admitted after a tool returns")
        if "tools" in plan.budgets:
            raise ContextConfigError(runner, "budgets", "a budget for the tools slot",
                                     "may only cap 'system' and 'messages' for an LLMCall, which offers no tools")
        return plan

    def _declarations(self) -> dict[str, Any]:
        """An agent's keywords less the two an LLMCall fixes itself (no tools, one iteration)."""
        settings = super()._declarations()
        del settings["tools"], settings["max_iterations"]
        return settings


register_runner("llm_call", LLMCall)

"""``Parallel``: every branch runs at once on the same message; a merge makes one answer.

Branches run concurrently (asyncio), each mounted under its own step, opened together and
closed as each returns. ``merge`` is either a function of ``{branch name: answer}`` or
:func:`merge_with_llm`, which asks a model to synthesize the answers (that call is a
member of the run like any other, recorded as a child). By default a failing branch fails
the run once every branch has returned; with ``tolerant=True`` the survivors are merged
and each failure stays on the record (its step, its commit, its child run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.llm_call import LLMCall
from footprint_lab.core.runner import Runner
from footprint_lab.flow._composition import INPUT, Composition, MemberPaused, _Exec
from footprint_lab.flow._members import Members, check_callable, failure_summary, named_members
from footprint_lab.flow.refusals import CompositionConfigError
from footprint_lab.providers.types import Provider
from footprint_lab.record.schema import Path, failure, output

EXAMPLE = 'Parallel({"legal": legal_agent, "ethics": ethics_agent}, merge=combine)'
MERGE = "merge"


class LLMMerge:
    """A merge that hands every branch's answer to a model with a prompt. Build with :func:`merge_with_llm`."""

    __slots__ = ("caller", "prompt")

    def __init__(self, caller: LLMCall, prompt: str) -> None:
        self.caller = caller
        self.prompt = prompt

    def message(self, answers: Mapping[str, str]) -> str:
        """The prompt followed by each branch's answer under its name."""
        sections = "\n\n".join(f"[{branch}]\n{answer}" for branch, answer in answers.items())
        return f"{self.prompt}\n\n{sections}"


def merge_with_llm(*, provider: Provider, model: str = "mock-model", prompt: str = "Synthesize:",
                   system: str = "") -> LLMMerge:
    """A ``Parallel`` merge in which a model synthesizes the branches' answers into one."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise CompositionConfigError("merge_with_llm", "prompt", describe_shape(prompt),
                                     "must be a non-empty string telling the model what to do with the answers")
    return LLMMerge(LLMCall(provider=provider, model=model, system=system, name="merge"), prompt)


class Parallel(Composition):
    """``Parallel({"legal": a, "ethics": b}, merge=fn | merge_with_llm(...), tolerant=False)``."""

    kind: ClassVar[str] = "parallel"

    def __init__(
        self,
        branches: Members,
        /,
        *,
        merge: Callable[[dict[str, str]], str] | LLMMerge | None = None,
        tolerant: bool = False,
        id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(id=id, name=name)
        self.members = named_members("Parallel", branches, EXAMPLE)
        if merge is None:
            raise CompositionConfigError(
                "Parallel", "merge", "None",
                "is mandatory: say how the branches' answers become one, with a function of "
                "{branch name: answer} or merge_with_llm(provider=..., prompt='Synthesize:')",
            )
        if not isinstance(merge, LLMMerge):
            check_callable("Parallel", "merge", merge,
                           "must be a function of {branch name: answer} or merge_with_llm(...)")
        if MERGE in dict(self.members):
            raise CompositionConfigError("Parallel", MERGE, "a branch of that name",
                                         "is the name of the merge step; name the branch something else")
        if not isinstance(tolerant, bool):
            raise CompositionConfigError("Parallel", "tolerant", describe_shape(tolerant), "must be True or False")
        self.merge = merge
        self.tolerant = tolerant
        self._cover()

    def _runners(self) -> Iterable[Runner]:
        merger = [self.merge.caller] if isinstance(self.merge, LLMMerge) else []
        return [*super()._runners(), *merger]

    def _member_for(self, key: str) -> Runner | None:
        if key == MERGE:
            return self.merge.caller if isinstance(self.merge, LLMMerge) else None
        return super()._member_for(key)

    def _parts(self) -> list[tuple[str | None, Runner]]:
        parts = super()._parts()
        return [*parts, (MERGE, self.merge.caller)] if isinstance(self.merge, LLMMerge) else parts

    def _rebuilt(self, runners: list[Runner]) -> Parallel:
        branches = [(key, runner) for (key, _), runner in zip(self.members, runners, strict=False)]
        merge = self.merge
        if isinstance(merge, LLMMerge):
            caller = runners[-1]
            assert isinstance(caller, LLMCall)
            merge = LLMMerge(caller, merge.prompt)
        return Parallel(branches, merge=merge, tolerant=self.tolerant, id=self.id, name=self.name)

    async def _flow(self, exe: _Exec) -> Path:
        rec = exe.rec
        opened = [(key, member, *rec.open_step("parallel-branch", reads=[INPUT])) for key, member in self.members]
        outcomes = await asyncio.gather(
            *(exe.mount(key, member, values[0], step_id, door=f"Parallel branch '{key}'")
              for key, member, step_id, values in opened),
            return_exceptions=True,
        )
        answers: dict[str, str] = {}
        failures: list[BaseException] = []
        paused = False
        for (key, _, step_id, _), outcome in zip(opened, outcomes, strict=True):
            if isinstance(outcome, MemberPaused):
                paused = True
                rec.close_step(step_id, status="paused")
            elif isinstance(outcome, BaseException):
                failures.append(outcome)
                rec.close_step(step_id, [(failure(key), "set", failure_summary(outcome))], "error")
            else:
                answers[key] = outcome
                rec.close_step(step_id, [(output(key), "set", outcome)],
                               "replayed" if key in exe.replayed else "ok")
        if failures and (not self.tolerant or not (answers or paused)):
            raise failures[0]
        if paused:
            raise MemberPaused(next(iter(exe.paused)))
        step_id = rec.begin(MERGE)
        merged = {key: rec.read(output(key)) for key in answers}
        if isinstance(self.merge, LLMMerge):
            answer = await exe.mount(MERGE, self.merge.caller, self.merge.message(merged), step_id,
                                     door="Parallel merge")
        else:
            answer = self.merge(dict(merged))
            if not isinstance(answer, str):
                raise CompositionConfigError("Parallel", "merge", f"a function returning {describe_shape(answer)}",
                                             "must return the merged answer as a string")
        exe.close(MERGE, answer)
        return output(MERGE)

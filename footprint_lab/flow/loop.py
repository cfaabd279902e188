"""``Loop``: one body run pass after pass, each pass on the previous answer, within a budget.

``times`` is mandatory and at most 500, so a loop can never spin for ever; ``until``
(a function of the last answer) stops it earlier. Each pass records its decision to go on
or stop with the evidence it read. A loop that spends its budget while ``until`` still does
not hold says so in ``run.stopped_early``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.runner import Runner
from footprint_lab.flow._composition import INPUT, Composition, _Exec
from footprint_lab.flow._members import check_callable, check_runner
from footprint_lab.flow.refusals import CompositionConfigError, LoopBudgetError
from footprint_lab.record.schema import Path, output

#: No loop may run more passes than this, whatever its budget says.
MAX_PASSES = 500


class _Omitted(enum.Enum):
    """``until`` left out (an explicit ``None`` is a mistake: a predicate that is not there)."""

    OMITTED = "omitted"


_OMITTED = _Omitted.OMITTED


class Loop(Composition):
    """``Loop(body, until=predicate, times=5)``: at most ``times`` passes of ``body``."""

    kind: ClassVar[str] = "loop"

    def __init__(
        self,
        body: Runner | None = None,
        /,
        *,
        times: int | None = None,
        until: Callable[[str], Any] | _Omitted | None = _OMITTED,
        id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(id=id, name=name)
        check_runner("Loop", "body", body)
        if until is None:
            raise CompositionConfigError(
                "Loop", "until", "None",
                "stops the loop early when it returns True for the last answer, so it must be a function; "
                "leave it out to run exactly `times` passes",
            )
        if times is None:
            raise LoopBudgetError("no budget", MAX_PASSES)
        if not isinstance(times, int) or isinstance(times, bool):
            raise LoopBudgetError(describe_shape(times), MAX_PASSES)
        if not 1 <= times <= MAX_PASSES:
            raise LoopBudgetError(f"{times} passes", MAX_PASSES)
        if not isinstance(until, _Omitted):
            check_callable("Loop", "until", until, "must be a function of the last answer returning True to stop")
        assert body is not None  # check_runner refused anything else
        self.body = body
        self.times = times
        self.until: Callable[[str], Any] | None = None if isinstance(until, _Omitted) else until
        self._cover()

    def _runners(self) -> Iterable[Runner]:
        return [self.body]

    def _member_for(self, key: str) -> Runner | None:
        number = key.removeprefix("pass-")
        if number.isdecimal() and key == _pass_key(int(number)) and 1 <= int(number) <= self.times:
            return self.body
        return None

    def _member_keys(self) -> list[str]:
        return [_pass_key(number) for number in range(1, self.times + 1)]

    def _parts(self) -> list[tuple[str | None, Runner]]:
        return [(None, self.body)]  # every pass runs the one body: its sources are named without a pass

    def _rebuilt(self, runners: list[Runner]) -> Loop:
        until = _OMITTED if self.until is None else self.until
        return Loop(runners[0], times=self.times, until=until, id=self.id, name=self.name)

    async def _flow(self, exe: _Exec) -> Path:
        rec = exe.rec
        source = INPUT
        held = False
        for number in range(1, self.times + 1):
            key = _pass_key(number)
            step_id = rec.begin("loop-pass", number)
            message = rec.read(source)
            answer = await exe.mount(key, self.body, message, step_id, door=f"Loop pass {number}")
            held = bool(self.until(answer)) if self.until is not None else False
            spent = number == self.times
            evidence: list[tuple[str, dict[str, Any], Any]] = [("budget", {"pass": number, "times": self.times}, spent)]
            if self.until is not None:
                evidence.insert(0, ("until", {"answer": answer}, held))
            rec.decide("loop", evidence, "stop" if held or spent else "continue")
            exe.close(key, answer)
            source = output(key)
            if held:
                break
        if self.until is not None and not held:
            exe.stopped_early = {
                "reason": "times",
                "times": self.times,
                "detail": f"until() still did not hold after {self.times} passes; the last pass's answer is the answer",
            }
        return source


def _pass_key(number: int) -> str:
    """The member name a pass is recorded and checkpointed under."""
    return f"pass-{number}"

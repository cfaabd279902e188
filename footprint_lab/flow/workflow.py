"""``Workflow`` and ``Graph``: members whose input is mapped from named earlier outputs.

A step names what it ``needs`` (earlier steps by name, or ``"input"`` for the run's message)
and may ``map`` those answers into its message (a string, or ``{"message": ...}``). The
step's record reads each needed output, stamped with the step that wrote it, so a mapped
input keeps its provenance.

- ``Workflow`` runs its steps in the order given; a step may only need steps before it.
  Without ``needs`` a step takes the previous step's answer (the first, the run's message).
- ``Graph`` runs a DAG: every node starts as soon as all it needs is ready, independent
  nodes concurrently. Without ``needs`` a node takes the run's message. A cycle is refused
  when the graph is built, naming the cycle; the answer is the one node nothing needs
  (or the node named by ``answer=``).

Everything about the wiring is checked at build time: unknown or later names, a step that
needs several answers but gives no ``map``, duplicate names, an empty composition.
A mapper can never say whom a member runs for: a ``parent_run`` or ``identity`` in its
output is refused (:mod:`footprint_lab.core.member_run`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.runner import Runner
from footprint_lab.flow._composition import INPUT, Composition, MemberPaused, _Exec
from footprint_lab.flow._members import RESERVED, check_callable, failure_summary, named_members, shown_name
from footprint_lab.flow.refusals import CompositionConfigError, GraphCycleError
from footprint_lab.record.schema import Path, failure, output

Mapper = Callable[[dict[str, str]], Any]
EXAMPLE = 'Workflow([step("draft", writer), step("review", critic, needs=["input", "draft"], map=fn)])'


@dataclass(frozen=True, slots=True)
class FlowStep:
    """One named member of a ``Workflow`` or ``Graph``, with what it needs and how its input is made."""

    name: str
    runner: Runner
    needs: tuple[str, ...] = ()
    map: Mapper | None = None

    def input_from(self, values: Mapping[str, str]) -> Any:
        """The member's input: the mapper's result, or the one needed answer as it is."""
        if self.map is not None:
            return self.map(dict(values))
        return next(iter(values.values()))


#: a ``Workflow``'s steps or a ``Graph``'s nodes as given: ``step(...)`` entries or ``(name, runner)`` pairs
Steps: TypeAlias = Iterable[FlowStep | tuple[str, Runner]]


def step(name: str, runner: Runner, /, *, needs: str | Iterable[str] = (), map: Mapper | None = None) -> FlowStep:
    """A ``Workflow`` step or ``Graph`` node: ``step("review", critic, needs=["draft"], map=fn)``."""
    wanted = (needs,) if isinstance(needs, str) else tuple(needs) if isinstance(needs, Iterable) else None
    if wanted is None or not all(isinstance(n, str) for n in wanted):
        raise CompositionConfigError("step", "needs", describe_shape(needs),
                                     "must be a step name or a list of step names ('input' for the run's message)")
    if map is not None:
        check_callable("step", "map", map, "must be a function of {needed name: answer} returning the message")
    return FlowStep(name=name, runner=runner, needs=wanted, map=map)


def _steps(composition: str, steps: Steps) -> list[FlowStep]:
    """The steps as ``FlowStep``s (``(name, runner)`` pairs are accepted), names and runners checked."""
    given = list(steps) if isinstance(steps, Iterable) and not isinstance(steps, str | Mapping) else None
    if given is None:
        raise CompositionConfigError(composition, "steps", describe_shape(steps),
                                     f"must be a list of step(...) entries, e.g. {EXAMPLE}")
    flow_steps = [item if isinstance(item, FlowStep) else None for item in given]
    pairs = [(s.name, s.runner) if s is not None else item for s, item in zip(flow_steps, given, strict=True)]
    named = named_members(composition, pairs, EXAMPLE)
    return [s if s is not None else FlowStep(name=n, runner=r) for s, (n, r) in zip(flow_steps, named, strict=True)]


def _needed_path(name: str) -> Path:
    return INPUT if name == RESERVED else output(name)


def _check_inputs(composition: str, node: FlowStep, runners: list[Runner]) -> None:
    if node.map is None and len(node.needs) > 1:
        raise CompositionConfigError(
            composition, shown_name(node.name, runners), f"{len(node.needs)} needed answers and no map",
            "needs a map=fn saying how its needed answers become its message",
        )


class Workflow(Composition):
    """``Workflow([step(name, runner, needs=[...], map=fn), ...])``: steps in order, inputs mapped."""

    kind: ClassVar[str] = "workflow"

    def __init__(self, steps: Steps, /, *, id: str | None = None, name: str | None = None) -> None:
        super().__init__(id=id, name=name)
        given = _steps("Workflow", steps)
        runners = [s.runner for s in given]
        checked: list[FlowStep] = []
        for position, node in enumerate(given):
            earlier = [s.name for s in given[:position]]
            needs = node.needs or ((earlier[-1] if earlier else RESERVED),)
            for need in needs:
                if need != RESERVED and need not in earlier:
                    later = any(s.name == need for s in given)
                    raise CompositionConfigError(
                        "Workflow", shown_name(node.name, runners),
                        f"a need that is {'a later step' if later else 'unknown'}",
                        "may only need steps listed before it, or 'input' for the run's message",
                    )
            node = FlowStep(name=node.name, runner=node.runner, needs=needs, map=node.map)
            _check_inputs("Workflow", node, runners)
            checked.append(node)
        self.steps = checked
        self._cover()

    def _runners(self) -> Iterable[Runner]:
        return [node.runner for node in self.steps]

    def _member_for(self, key: str) -> Runner | None:
        return next((node.runner for node in self.steps if node.name == key), None)

    def _parts(self) -> list[tuple[str | None, Runner]]:
        return [(node.name, node.runner) for node in self.steps]

    def _rebuilt(self, runners: list[Runner]) -> Workflow:
        return Workflow(_replaced(self.steps, runners), id=self.id, name=self.name)

    async def _flow(self, exe: _Exec) -> Path:
        rec = exe.rec
        for node in self.steps:
            step_id = rec.begin("workflow-step")
            values = {need: rec.read(_needed_path(need)) for need in node.needs}
            answer = await exe.mount(node.name, node.runner, node.input_from(values), step_id,
                                     door=f"Workflow step '{node.name}'")
            exe.close(node.name, answer)
        return output(self.steps[-1].name)


class Graph(Composition):
    """``Graph([step(name, runner, needs=[...], map=fn), ...], answer=None)``: a DAG, nodes run when ready."""

    kind: ClassVar[str] = "graph"

    def __init__(self, nodes: Steps, /, *, answer: str | None = None, id: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(id=id, name=name)
        checked = [FlowStep(name=n.name, runner=n.runner, needs=n.needs or (RESERVED,), map=n.map)
                   for n in _steps("Graph", nodes)]
        names = {n.name for n in checked}
        runners = [n.runner for n in checked]
        for node in checked:
            for need in node.needs:
                if need != RESERVED and need not in names:
                    raise CompositionConfigError(
                        "Graph", shown_name(node.name, runners), "a need that names no node",
                        "may only need nodes of this graph, or 'input' for the run's message")
            _check_inputs("Graph", node, runners)
        cycle = find_cycle({n.name: [d for d in n.needs if d != RESERVED] for n in checked})
        if cycle is not None:
            raise GraphCycleError([shown_name(name, runners) for name in cycle])
        needed = {d for n in checked for d in n.needs}
        sinks = [n.name for n in checked if n.name not in needed]
        if answer is None and len(sinks) != 1:
            raise CompositionConfigError(
                "Graph", "answer", f"{len(sinks)} nodes that nothing needs",
                "must name the node whose answer is the graph's answer when more than one node ends the graph",
            )
        if answer is not None and (not isinstance(answer, str) or answer not in names):
            raise CompositionConfigError("Graph", "answer", describe_shape(answer), "must name a node of this graph")
        self.nodes = checked
        self.answer = answer if answer is not None else sinks[0]
        self._cover()

    def _runners(self) -> Iterable[Runner]:
        return [node.runner for node in self.nodes]

    def _member_for(self, key: str) -> Runner | None:
        return next((node.runner for node in self.nodes if node.name == key), None)

    def _parts(self) -> list[tuple[str | None, Runner]]:
        return [(node.name, node.runner) for node in self.nodes]

    def _rebuilt(self, runners: list[Runner]) -> Graph:
        return Graph(_replaced(self.nodes, runners), answer=self.answer, id=self.id, name=self.name)

    async def _flow(self, exe: _Exec) -> Path:
        rec = exe.rec
        done: set[str] = set()
        waiting = {node.name: node for node in self.nodes}
        running: dict[asyncio.Task[str], tuple[FlowStep, str]] = {}
        failures: list[BaseException] = []
        try:
            while True:
                if not failures and not exe.paused:
                    ready = [n for n in waiting.values() if all(d == RESERVED or d in done for d in n.needs)]
                    for node in ready:
                        del waiting[node.name]
                        step_id, values = rec.open_step("graph-node", reads=[_needed_path(d) for d in node.needs])
                        try:
                            message = node.input_from(dict(zip(node.needs, values, strict=True)))
                        except Exception as exc:
                            failures.append(exc)
                            rec.close_step(step_id, [(failure(node.name), "set", failure_summary(exc))], "error")
                            break
                        task = asyncio.create_task(exe.mount(node.name, node.runner, message, step_id,
                                                               door=f"Graph node '{node.name}'"))
                        running[task] = (node, step_id)
                if not running:
                    break
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    node, step_id = running.pop(task)
                    error = task.exception()
                    if isinstance(error, MemberPaused):
                        rec.close_step(step_id, status="paused")
                    elif error is not None:
                        failures.append(error)
                        rec.close_step(step_id, [(failure(node.name), "set", failure_summary(error))], "error")
                    else:
                        done.add(node.name)
                        rec.close_step(step_id, [(output(node.name), "set", task.result())],
                                       "replayed" if node.name in exe.replayed else "ok")
        finally:
            for task in running:
                task.cancel()
        if failures:
            raise failures[0]
        if exe.paused:
            raise MemberPaused(next(iter(exe.paused)))
        return output(self.answer)


def _replaced(steps: list[FlowStep], runners: list[Runner]) -> list[FlowStep]:
    """The same steps, each with its runner replaced (for a rebuild)."""
    return [FlowStep(name=node.name, runner=runner, needs=node.needs, map=node.map)
            for node, runner in zip(steps, runners, strict=True)]


def find_cycle(needs: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A cycle in a dependency map (``node -> what it needs``), first node repeated last; ``None`` when acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        trail.append(node)
        for need in needs.get(node, ()):
            if state.get(need) == 1:
                return [*trail[trail.index(need):], need]
            if need not in state and (found := visit(need)) is not None:
                return found
        trail.pop()
        state[node] = 2
        return None

    for start in needs:
        if start not in state and (found := visit(start)) is not None:
            return found
    return None

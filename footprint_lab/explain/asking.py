"""Ask a run why: an explainer agent that answers a question by opening the recording through tools.

Rule kept here: the explainer is told nothing of the recording up front and costs only what
it opens. Its first request holds the question, how many runs there are, its instructions
and its tools; every piece of evidence reaches it as the result of a tool call it chose
(the read-only, bounded views of :mod:`footprint_lab.explain.desk`). It is told to cite the
recording's own ids and never to guess beyond the evidence, and the answer is checked for
it: ``cited`` are the ids of the recordings the answer names that a view did show the
explainer, ``unsupported`` the id-shaped words it names that no view showed.

The explainer is a footprint_lab agent, so its own run is recorded and explainable
(``explanation.run.backtrack()``). This layer never imports a runner (ARCHITECTURE: explain
sits below core): the runner is built by ``runner_factory``, any callable taking the
``Agent`` keywords (``provider``, ``model``, ``system``, ``tools``, ``max_iterations``,
``name``) and returning an object with an async ``run``; by default the package root's
``footprint_lab.Agent``, looked up through the root, the one module that wires the layers
together. Tools are declared the same way, through ``footprint_lab.define_tool``.

Role: explain layer. Refusal raised here: :class:`~footprint_lab.explain.checks.ExplainConfigError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.engine.refusal import describe_shape
from footprint_lab.explain.checks import ExplainConfigError, recording_of, whole_number
from footprint_lab.explain.desk import LIMIT, EvidenceDesk
from footprint_lab.explain.render import mimebundle

if TYPE_CHECKING:
    from footprint_lab.engine.recording import Recording

SYSTEM = """You explain a recorded run of an LLM agent to an analyst who is questioning its answer.
You cannot see the recording. Open it with your tools: read-only views that each return a bounded
page of evidence. Start with list_calls.
Rest every statement on what a tool returned, and cite the evidence by the ids the tools show, in
square brackets: step ids of LLM calls and tool steps, and source ids of declared context.
Never guess beyond the evidence. When the views do not show something, say it is not in the
recording. The suspects ranking measures resemblance, not cause: say so when you rely on it.
When a page ends with [more=N ...], call the same tool again with more=N to read on.
Answer in a few plain sentences."""

_RUN = {"type": "integer", "minimum": 0, "description": "which run to open: 0 for the first (the default)"}
_MORE = {"type": "integer", "minimum": 0, "description": "where to continue a long view, as its last line says"}
_STEP = {"type": "string", "description": "a step id exactly as list_calls or another view shows it"}

#: name -> (description, required string parameter or None, its schema)
TOOLS: dict[str, tuple[str, str | None, dict[str, Any] | None]] = {
    "list_calls": ("The run's LLM calls in order: what each was sent (pieces per slot) and what it replied, "
                   "and which step wrote the answer.", None, None),
    "show_call": ("One LLM call's slots piece by piece: source, who landed it, its content; then its reply.",
                  "step_id", {**_STEP, "description": "the step id of an LLM call, as list_calls shows it"}),
    "custody": ("A source's chain of custody from the answer back to where it was born "
                "(ANSWER, READ, LANDED, ALLOWED, BORN), each hop proven or not.",
                "source_id", {"type": "string", "description": "a source id as the other views show it"}),
    "suspects": ("The pieces that reached the answer ranked by resemblance to it (correlation, not cause).",
                 None, None),
    "left_out": ("What was declared but did not reach the answering call (skipped or over budget), and why.",
                 None, None),
    "show_step": ("One step's reads (and who wrote what it read), its commit and its decision, if any.",
                  "step_id", _STEP),
    "search": ("Find text in the run's pieces, replies and answer; each hit names its source and calls.",
               "text", {"type": "string", "description": "the words to look for (case does not matter)"}),
}
_STEP_ID = re.compile(r"[A-Za-z0-9_.:/-]*[A-Za-z]#\d+(?:/[A-Za-z0-9_.:-]+#\d+)*")
_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/#-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_BRACKETED = re.compile(r"\[([^\[\]\n]{1,120})\]")


@dataclass(slots=True)
class Explanation:
    """The explainer's answer, the ids it cited (checked against what it opened), and its own run."""

    question: str
    answer: str | None
    cited: list[str]
    unsupported: list[str]
    opened: list[str]
    run: Any
    status: str = "finished"
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"Explanation: {len(self.cited)} id(s) cited from the evidence opened, {len(self.unsupported)} "
                f"not shown by any view; {len(self.opened)} view(s) opened.")

    def __str__(self) -> str:
        lines = [f"Q: {self.question}", f"A: {self.answer if self.answer is not None else '(no answer)'}",
                 f"Cited, and shown by a view: {', '.join(self.cited) or 'nothing'}"]
        if self.unsupported:
            lines.append(f"Named but shown by no view (treat as unsupported): {', '.join(self.unsupported)}")
        lines.append(f"Views opened: {', '.join(self.opened) or 'none'}")
        lines += self.notes
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return mimebundle(self.summary(), str(self))


def _recordings(function: str, run_or_runs: Any) -> list[Recording]:
    if isinstance(run_or_runs, list | tuple):
        if not run_or_runs:
            raise ExplainConfigError(function, "run_or_runs", "an empty list",
                                     "must be a run, its Recording, or a non-empty list of them")
        return [recording_of(item, function) for item in run_or_runs]
    return [recording_of(run_or_runs, function)]


def _default_runner(**settings: Any) -> Any:
    import footprint_lab  # the package root wires the layers; this layer never names core

    return footprint_lab.Agent(**settings)


def _tools(desk: EvidenceDesk) -> list[Any]:
    import footprint_lab

    declared = []
    for name, (description, required, schema) in TOOLS.items():
        properties: dict[str, Any] = {"run": _RUN, "more": _MORE}
        if required is not None and schema is not None:
            properties = {required: schema, **properties}
        input_schema = {"type": "object", "properties": properties, "additionalProperties": False,
                        **({"required": [required]} if required else {})}
        declared.append(footprint_lab.define_tool(name=name, description=description, input_schema=input_schema,
                                                  fn=getattr(desk, name)))
    return declared


def _opening(question: str, runs: int) -> str:
    where = "one recorded run (run=0)" if runs == 1 else f"{runs} recorded runs (run=0 to run={runs - 1})"
    return f"{question}\n\n(You can open {where}.)"


def _known_ids(recordings: Sequence[Recording]) -> set[str]:
    known: set[str] = set()
    pending = list(recordings)
    while pending:
        recording = pending.pop()
        known.update(step.step_id for step in recording.steps)
        known.update(piece.source_id for piece in recording.context_pieces)
        pending += recording.children
    return known


def _check_citations(answer: str, known: set[str], shown: str) -> tuple[list[str], list[str]]:
    """The recording ids the answer names that a view showed, and the id-shaped words no view showed."""
    shown_words = set(_WORD.findall(shown))
    bracketed = [m.strip() for m in _BRACKETED.findall(answer)]
    words = list(dict.fromkeys([*_WORD.findall(answer), *bracketed]))

    def seen(word: str) -> bool:
        return word in shown_words or (" " in word and word in shown)

    cited = [w for w in words if w in known and seen(w)]
    unsupported = [w for w in words if not seen(w) and (w in bracketed or _STEP_ID.fullmatch(w))]
    return cited, unsupported


async def ask(
    run_or_runs: Any,
    question: str,
    *,
    provider: Any,
    model: str | None = None,
    max_iterations: int = 12,
    limit: int = LIMIT,
    runner_factory: Callable[..., Any] | None = None,
) -> Explanation:
    """Answer ``question`` about one run (or a list of runs) with an explainer agent; see the module docstring.

    ``provider`` and ``model`` are the explainer's (any provider, ``mock`` included);
    ``max_iterations`` bounds its tool rounds and ``limit`` the characters each view returns.
    """
    recordings = _recordings("ask", run_or_runs)
    if not isinstance(question, str) or not question.strip():
        raise ExplainConfigError("ask", "question", describe_shape(question),
                                 "must be the question to answer, as a non-empty string")
    if not callable(getattr(provider, "complete", None)):
        raise ExplainConfigError("ask", "provider", describe_shape(provider),
                                 "must be a provider for the explainer, e.g. footprint_lab.providers.mock(...) "
                                 "or providers.openai('gpt-4o-mini')")
    whole_number("ask", "max_iterations", max_iterations, 1, 100)
    whole_number("ask", "limit", limit, 200, 100_000)
    if runner_factory is not None and not callable(runner_factory):
        raise ExplainConfigError("ask", "runner_factory", describe_shape(runner_factory),
                                 "must be a callable taking the Agent keywords and returning a runner, or None")
    desk = EvidenceDesk(recordings, limit=limit)
    build = runner_factory or _default_runner
    settings: dict[str, Any] = {"provider": provider, "system": SYSTEM, "tools": _tools(desk),
                                "max_iterations": max_iterations, "name": "explainer"}
    if model is not None:
        settings["model"] = model
    explainer = build(**settings)
    result = await explainer.run(_opening(question, len(recordings)))
    own: Recording = result.recording
    shown = "\n".join(p.content for p in own.context_pieces if p.source_kind == "tool_result")
    opened = [f"{c.name}({', '.join(f'{k}={v!r}' for k, v in c.args.items())})"
              for x in own.exchanges for c in x.response.tool_calls]
    answer = own.answer
    cited, unsupported = _check_citations(answer or "", _known_ids(recordings), shown)
    notes = [] if answer is not None else [f"The explainer's run ended {own.status} without an answer."]
    return Explanation(question, answer, cited, unsupported, opened, result, own.status, notes)

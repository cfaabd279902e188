"""The ``tool#n`` steps of an agent's loop (``core.agent``): a response's tool calls run in order, and a person's
answer landed as the result of the call that asked.

Rule kept here: every tool call is one step that opens with ``tool_start`` and closes with ``tool_end``,
whatever happens: an unknown tool, arguments that do not fit its schema, or a tool that raises all
become a tool result marked ``is_error`` that the model reads (and the step closes ``tool_error``),
never a failed run. A batch that completes is a good point to resume a failed run from. A tool's
structured result is read by the redaction policy before it becomes text, so what it holds under a
covered key is masked in that text too.

Role: core layer, mixed into ``Agent``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack, cast

from footprint_lab.core.tools import ToolContext, ToolFailure, tool_failure
from footprint_lab.core.turn import PAUSE, Turn, result_text
from footprint_lab.record.captured import Evidence
from footprint_lab.record.recorder import summarize
from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    from footprint_lab.core.tools import Tool


class ToolSteps:
    """The tool steps of an ``Agent`` (mixed in)."""

    if TYPE_CHECKING:
        _tools_by_name: dict[str, Tool]

        def _append(self, turn: Turn, message: dict[str, Any], source_kind: str, source_id: str,
                    iteration: int | None = None, **evidence: Unpack[Evidence]) -> None: ...

    def _answer(self, turn: Turn, iteration: int, call: dict[str, Any], answer: str) -> None:
        """The person's answer lands as the result of the tool call that asked."""
        rec = turn.rec
        who_ = turn.leg.who
        step_id = rec.begin("tool", iteration)
        rec.emit("tool_start", step_id, {"tool": call["name"], "tool_call_id": call["id"], "answered_by": "person",
                                         **who_})
        message = {"role": "tool", "tool_call_id": call["id"], "name": call["name"], "content": answer}
        self._append(turn, message, KIND_TOOL_RESULT, call["id"], iteration, tool=call["name"], answered_by="person")
        rec.write(PAUSE, "delete", None)
        rec.emit("tool_end", step_id, {"tool": call["name"], "tool_call_id": call["id"], "is_error": False, **who_})
        rec.end()

    async def _run_batch(self, turn: Turn, calls: Sequence[Any], iteration: int, *, asker: str | None) -> None:
        """Run one response's tool calls in order; a batch that completes is a good point to resume from.

        ``asker`` is the LLM call whose reply asked for them (each result records it as ``requested_by``).
        """
        leg = turn.leg
        leg.iteration = iteration
        for call in calls:
            leg.call = call
            await self._run_tool(turn, call, iteration, asker)
        leg.call = None
        leg.good = len(turn.history)

    async def _run_tool(self, turn: Turn, call: Any, iteration: int, requested_by: str | None) -> None:
        rec = turn.rec
        step_id = rec.begin("tool", iteration)
        rec.emit("tool_start", step_id, {"tool": call.name, "tool_call_id": call.id, "args": call.args,
                                         **turn.leg.who})
        tool = self._tools_by_name.get(call.name)
        if tool is None and turn.context is not None:
            tool = turn.context.tool(call.name)
        is_error = True
        failure: ToolFailure = {}
        if tool is None:
            content = f"Unknown tool: {call.name}"
        else:
            problem = tool.check_args(call.args)
            if problem is not None:
                content = problem
            else:
                ctx = ToolContext(run_id=turn.run_id, tool_call_id=call.id, tool_name=call.name,
                                  identity=turn.identity, memory_identity=turn.memory)
                try:
                    result = await tool.invoke(call.args, ctx)
                    rec.learn(result)  # a structured result's covered keys are read before it becomes text
                    content = result_text(result)
                    is_error = False
                except Exception as exc:
                    content = f"Error: tool '{call.name}' raised {type(exc).__name__}: {exc}"
                    failure = tool_failure(exc, rec.clean)
        message: dict[str, Any] = {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
        if is_error:
            message["is_error"] = True
        # a ToolFailure's keys are Evidence's
        evidence = cast(Evidence, {"tool": call.name, "is_error": is_error, **failure})
        if requested_by is not None:
            evidence["requested_by"] = requested_by
        self._append(turn, message, KIND_TOOL_RESULT, call.id, iteration, **evidence)
        # a short preview for live views, cut only after the policy has masked what it covers
        rec.emit("tool_end", step_id, {"tool": call.name, "tool_call_id": call.id, "is_error": is_error,
                                       "result": summarize(rec.clean(content), 200), **failure, **turn.leg.who})
        rec.end("tool_error" if is_error else "ok")

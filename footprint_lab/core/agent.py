"""``Agent`` (the ReAct loop) and ``LLMCall`` (one call, no tools), recorded step by step.

A run goes through these steps, each closed by one commit:

``seed#n``      the user's message lands in the messages slot;
``assemble#n``  per iteration: the system-slot and tools-slot pieces are admitted and landed,
                and the system prompt is written as exactly those pieces joined by a blank line;
                declared context (``context=[...]``, see :mod:`footprint_lab.context`) is
                evaluated here too: every declaration is recorded as admitted, skipped or
                dropped (``budgets=``), and messages-slot facts follow the conversation;
``call-llm#n``  reads the three slots, calls the provider, records the exchange, and appends the
                assistant turn;
``tool#n``      one per tool call: checks the arguments, runs the tool, appends its result
                (``read_skill`` loads a declared skill here, for the rest of the turn);
``final#n``     reads the last response and writes the answer (and writes the turn back to
                any declared memory).

When the iteration budget runs out while the model still asks for tools, one more
``assemble`` + ``call-llm`` is made with the tools withheld, so the model answers; the run
records that it stopped early and why.

Each piece of what the provider receives is recorded as a context piece with its source,
the step that admitted it and the step that landed it, so the recorded pieces of a slot
always add up to exactly what was sent.
"""

from __future__ import annotations

import contextlib
import json
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from time import perf_counter_ns
from typing import Any, ClassVar

from footprint_lab.context.assembly import READ_SKILL, ContextPlan
from footprint_lab.core.conversation import RunInFlightError
from footprint_lab.core.door import normalize_run_input
from footprint_lab.core.identity import Identity, coerce_identity, memory_identity
from footprint_lab.core.run import Run
from footprint_lab.core.runner import Listener, Mount, Runner, new_run_id
from footprint_lab.core.tools import Tool, ToolContext, ToolDefinitionError, result_text
from footprint_lab.engine.recorder import Recorder
from footprint_lab.engine.refusal import Refusal, describe_shape
from footprint_lab.providers.types import LLMRequest, LLMResponse, MessagesView

SYSTEM = ("slots", "system")
TOOLS = ("slots", "tools")
MESSAGES = ("messages",)
LAST_RESPONSE = ("last_response",)
ANSWER = ("answer",)


class AgentConfigError(Refusal):
    """Raised when an ``Agent`` or ``LLMCall`` is built with a setting no run could use.

    Carries ``setting`` (the keyword at fault) and ``received`` (its shape, never its value).
    """

    code = "ERR_AGENT_CONFIG"
    fields = ("setting", "received")

    def __init__(self, runner: str, setting: str, received: str, fix: str) -> None:
        super().__init__(f"{runner}: '{setting}' {fix} (received {received}).")
        self.setting = setting
        self.received = received


class DuplicateToolError(Refusal):
    """Raised when two tools of one agent share a name: the model could not tell them apart."""

    code = "ERR_DUPLICATE_TOOL"
    fields = ("tool_name",)

    def __init__(self, tool_name: str) -> None:
        super().__init__(
            f"Agent: two tools are named '{tool_name}'. A model calls tools by name, so each name "
            "must be unique within an agent. Rename one (define_tool(name=...) or @tool(name=...))."
        )
        self.tool_name = tool_name


class _Turn:
    """The live state of one execution (never stored on the agent instance)."""

    __slots__ = ("call_index", "context", "history", "history_chars", "identity", "message", "rec", "run_id",
                 "slots")

    def __init__(self, rec: Recorder, message: str, identity: Any) -> None:
        self.rec = rec
        self.run_id = rec.run_id
        self.message = message
        self.identity = identity
        self.history: list[dict[str, Any]] = []
        self.history_chars = 0
        self.call_index = 0
        # what the last assemble step put in the slots: (system text, system piece ids, tool schemas, tool piece ids)
        self.slots: tuple[str, list[int], list[dict[str, Any]], list[int]] = ("", [], [], [])
        # this run's declared context (footprint_lab.context), when the agent declares any
        self.context: Any = None


class Agent(Runner):
    """A tool-using agent: assemble the slots, call the model, run its tools, repeat.

    ``context`` takes any mix of ``footprint_lab.context`` declarations (ids unique within
    the agent); ``budgets`` caps slots in characters (``{"system": 4000}``), dropping declared
    pieces that do not fit and recording them as dropped.
    """

    kind: ClassVar[str] = "agent"

    def __init__(
        self,
        *,
        provider: Any,
        model: str = "mock-model",
        system: str = "",
        tools: Sequence[Tool] = (),
        id: str | None = None,
        name: str | None = None,
        max_iterations: int = 10,
        context: Sequence[Any] = (),
        budgets: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(id=id, name=name)
        runner = type(self).__name__
        if not callable(getattr(provider, "complete", None)):
            raise AgentConfigError(
                runner, "provider", describe_shape(provider),
                "must be a provider, e.g. footprint_lab.providers.mock(reply='...') or providers.openai(...)",
            )
        if not isinstance(model, str) or not model:
            raise AgentConfigError(runner, "model", describe_shape(model), "must be a model name string")
        if not isinstance(system, str):
            raise AgentConfigError(runner, "system", describe_shape(system), "must be a string system prompt")
        if not isinstance(max_iterations, int) or isinstance(max_iterations, bool) or not 1 <= max_iterations <= 10_000:
            raise AgentConfigError(
                runner, "max_iterations", describe_shape(max_iterations), "must be a whole number from 1 to 10000"
            )
        for name_ in ("id", "name"):
            value = id if name_ == "id" else name
            if value is not None and not isinstance(value, str):
                raise AgentConfigError(runner, name_, describe_shape(value), "must be a string or None")
        self.provider = provider
        self.model = model
        self.system = system
        self.max_iterations = max_iterations
        self.tools = self._check_tools(tools)
        self._tools_by_name = {t.name: t for t in self.tools}
        self._tool_schemas = [t.schema() for t in self.tools]
        self._tool_names = tuple(t.name for t in self.tools)
        self._context = self._plan_context(context, budgets, runner)
        self._active_run_id: str | None = None
        self._last_run_ref: Callable[[], Run | None] = _no_run

    @property
    def last_run(self) -> Run | None:
        """This instance's most recent run, while the caller still holds it (a failed run always).

        The instance does not keep a finished run's whole recording alive by itself: an agent
        that serves many requests would otherwise pin one recording per instance in memory. A
        failed run is kept, because its caller never received it.
        """
        return self._last_run_ref()

    @last_run.setter
    def last_run(self, run: Run | None) -> None:
        if run is None:
            self._last_run_ref = _no_run
        elif run.status == "failed":
            self._last_run_ref = lambda: run
        else:
            self._last_run_ref = weakref.ref(run)

    @staticmethod
    def _check_tools(tools: Iterable[Tool]) -> list[Tool]:
        checked: list[Tool] = []
        seen: set[str] = set()
        for item in tools:
            if not isinstance(item, Tool):
                raise ToolDefinitionError(
                    None, "tools",
                    f"Agent: every entry of tools must be a tool built with define_tool(...) or @tool "
                    f"(received {describe_shape(item)}).",
                )
            if item.name in seen:
                raise DuplicateToolError(item.name)
            seen.add(item.name)
            checked.append(item)
        return checked

    def _plan_context(self, context: Any, budgets: Any, runner: str) -> ContextPlan | None:
        """Check the context declarations; a skill's tools obey the same rules as the agent's own."""
        plan = ContextPlan.build(context, budgets, runner=runner)
        if plan is not None and plan.skills:
            self._check_tools([*self.tools, *(tool for _, tool, _ in plan.skill_tools.values())])
            if READ_SKILL in self._tools_by_name:
                raise DuplicateToolError(READ_SKILL)
        return plan

    # -- the doors ------------------------------------------------------------------------
    async def run(
        self,
        input: Any = None,
        /,
        *,
        on_event: Listener | None = None,
        identity: Any = None,
    ) -> Run:
        """Answer one message: ``await agent.run("...")`` or ``agent.run({"message": "..."})``."""
        bag = normalize_run_input(input, self.door, identity=identity)
        named = coerce_identity(bag.pop("identity", None), self.door)
        run_id = self._claim()
        try:
            run = await self._execute(bag, Mount(run_id=run_id, listeners=self._listeners_for(on_event),
                                                 identity=named))
            self.last_run = run
            return run
        except BaseException as exc:
            self.last_run = getattr(exc, "_footprint_run", self.last_run)
            raise
        finally:
            self._active_run_id = None

    def _claim(self) -> str:
        """Check-and-set the in-flight guard, with no ``await`` in between."""
        if self._active_run_id is not None:
            raise RunInFlightError(self.door, self.id, self._active_run_id)
        run_id = new_run_id()
        self._active_run_id = run_id
        return run_id

    # -- rebuilding for reruns (footprint_lab.explain) --------------------------------------
    def without(self, exclude: Iterable[str] | str = (), *, seed: int | None = None) -> Agent:
        """A new agent built from this one's declarations minus the ``exclude`` ids.

        An id names the system prompt (``'system-prompt'``), a tool (by its name: the tool is
        gone, so are its results) or a context declaration (an instruction citing a removed
        fact no longer cites it). ``seed`` is put on every request of the new agent. Unknown
        ids are refused with the ids this agent has. Listeners and runs are not carried over:
        the new agent is a clean rerun target.
        """
        return self._rebuild(self._named("Agent.without", exclude, self._source_ids()), (), seed)

    def with_forced(self, force: Iterable[str] | str, *, exclude: Iterable[str] | str = (),
                    seed: int | None = None) -> Agent:
        """A new agent whose ``force`` declarations are admitted on every iteration and past any budget.

        For testing missing context by restoration; see :mod:`footprint_lab.context.rebuild`
        for exactly what forcing changes. ``exclude`` and ``seed`` work as in :meth:`without`.
        """
        declared = [declaration.id for declaration, _, _ in self._context.entries] if self._context else []
        forced = self._named("Agent.with_forced", force, declared, action="force in")
        return self._rebuild(self._named("Agent.with_forced", exclude, self._source_ids()), forced, seed)

    def _rebuild(self, removed: set[str], forced: Iterable[str], seed: int | None) -> Agent:
        from footprint_lab.context.rebuild import forced_declarations, without_declarations

        settings = self._declarations()
        if "system-prompt" in removed:
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
            from footprint_lab.providers.seeded import seeded

            settings["provider"] = seeded(self.provider, seed)
        return type(self)(**settings)

    def _declarations(self) -> dict[str, Any]:
        """The keywords that rebuild this agent as it was declared."""
        plan = self._context
        return {"provider": self.provider, "model": self.model, "system": self.system, "tools": list(self.tools),
                "id": self.id, "name": self.name, "max_iterations": self.max_iterations,
                "context": [declaration for declaration, _, _ in plan.entries] if plan is not None else [],
                "budgets": dict(plan.budgets) if plan is not None else None}

    def _source_ids(self) -> list[str]:
        """Every id ``without`` accepts for this agent."""
        declared = [declaration.id for declaration, _, _ in self._context.entries] if self._context else []
        return [*(["system-prompt"] if self.system else []), *(t.name for t in self.tools), *declared]

    @staticmethod
    def _named(door: str, ids: Iterable[str] | str, known: list[str], action: str = "remove") -> set[str]:
        from footprint_lab.explain.checks import id_list
        from footprint_lab.explain.rerun import UnknownSourceError

        names = id_list(door, "exclude" if action == "remove" else "force", ids)
        unknown = [name for name in names if name not in known]
        if unknown:
            raise UnknownSourceError(door, len(unknown), known, action)
        return set(names)

    # -- one execution --------------------------------------------------------------------
    async def _execute(self, bag: dict[str, Any], mount: Mount) -> Run:
        rec = Recorder(mount.run_id, path=mount.path, listeners=mount.listeners)
        turn = _Turn(rec, bag["message"], mount.identity)
        if self._context is not None:
            namespace = memory_identity(mount.identity, mount.run_id).namespace()
            turn.context = self._context.start(rec, turn.message, turn.history, namespace)
        rec.emit("run_start", "", {"runner": self.kind, "id": self.id, "name": self.name})
        try:
            answer, stopped_early = await self._loop(turn)
        except BaseException as exc:
            rec.fail_open_step()
            error = {"type": type(exc).__name__, "code": getattr(exc, "code", None), "step_id": rec.current}
            rec.emit("error", rec.current, dict(error))
            rec.emit("run_end", "", {"status": "failed"})
            failed = self._make_run(turn, bag, "failed", None, None, error, perf_counter_ns())
            with contextlib.suppress(AttributeError):  # some built-in exceptions take no attributes
                exc._footprint_run = failed  # type: ignore[attr-defined]
            raise
        rec.emit("run_end", "", {"status": "finished"})
        return self._make_run(turn, bag, "finished", answer, stopped_early, None, perf_counter_ns())

    def _make_run(
        self, turn: _Turn, bag: dict[str, Any], status: str, answer: str | None,
        stopped_early: dict[str, Any] | None, error: dict[str, Any] | None, ended: int,
    ) -> Run:
        rec = turn.rec
        runner_info = {"kind": self.kind, "id": self.id, "name": self.name}
        identity = turn.identity

        def build() -> Any:
            from footprint_lab.engine.recording import build_recording

            return build_recording(
                rec, runner=runner_info, status=status, input=bag, answer=answer,
                identity=_identity_dict(identity), stopped_early=stopped_early, error=error, ended_ns=ended,
            )

        return Run(run_id=rec.run_id, status=status, answer=answer, build=build, stopped_early=stopped_early)

    async def _loop(self, turn: _Turn) -> tuple[str, dict[str, Any] | None]:
        rec = turn.rec
        rec.begin("seed")
        rec.write(("input", "message"), "set", turn.message)
        self._append(turn, {"role": "user", "content": turn.message}, "user", "user-message")
        rec.end()
        for iteration in range(1, self.max_iterations + 1):
            self._assemble(turn, iteration, withhold_tools=False)
            response = await self._call(turn, iteration, withheld=False)
            if not response.tool_calls:
                return self._final(turn), None
            for call in response.tool_calls:
                await self._run_tool(turn, call, iteration)
        # The budget is spent and the model still wants tools: one last call, tools withheld.
        iteration = self.max_iterations + 1
        self._assemble(turn, iteration, withhold_tools=True)
        await self._call(turn, iteration, withheld=True)
        stopped = {
            "reason": "max_iterations",
            "max_iterations": self.max_iterations,
            "detail": f"the model still asked for tools after {self.max_iterations} iterations; "
                      "one last call was made with the tools withheld so that it answered",
        }
        return self._final(turn), stopped

    def _append(self, turn: _Turn, message: dict[str, Any], source_kind: str, source_id: str,
                iteration: int | None = None, **evidence: Any) -> None:
        """Append a turn to the conversation: it lands in the messages slot in this step.

        The piece's content is what the model reads of the turn: its text, and for an
        assistant turn that calls tools, each call as ``name({json args})`` on its own line.
        """
        rec = turn.rec
        step_id = rec.current
        rec.write(MESSAGES, "append", message)
        position = len(turn.history)
        turn.history.append(message)
        turn.history_chars += len(message.get("content") or "")
        rec.messages.append(message)
        rec.message_pieces.append(len(rec.pieces))
        rec.pieces.append({
            "slot": "messages", "position": position, "source_kind": source_kind, "source_id": source_id,
            "content": turn_text(message), "trigger": "base", "verdict": "admitted",
            "reason": "conversation", "allowed_by": step_id, "landed_by": step_id, "iteration": iteration,
            **evidence,
        })

    def _assemble(self, turn: _Turn, iteration: int, *, withhold_tools: bool) -> None:
        rec = turn.rec
        step_id = rec.begin("assemble", iteration)
        pieces = rec.pieces
        system_ids: list[int] = []
        parts: list[str] = []
        if self.system:
            system_ids.append(len(pieces))
            pieces.append({
                "slot": "system", "position": 0, "source_kind": "base", "source_id": "system-prompt",
                "content": self.system, "trigger": "base", "verdict": "admitted", "reason": "always",
                "allowed_by": step_id, "landed_by": step_id, "iteration": iteration,
            })
            parts.append(self.system)
        tool_ids: list[int] = []
        schemas = [] if withhold_tools else self._tool_schemas
        for position, schema in enumerate(schemas):
            tool_ids.append(len(pieces))
            pieces.append({
                "slot": "tools", "position": position, "source_kind": "registry", "source_id": schema["name"],
                "content": schema["description"], "trigger": "base", "verdict": "admitted", "reason": "always",
                "allowed_by": step_id, "landed_by": step_id, "iteration": iteration,
            })
        if turn.context is not None:
            schemas = turn.context.land(step_id, iteration, parts=parts, system_ids=system_ids, schemas=schemas,
                                        tool_ids=tool_ids, withhold_tools=withhold_tools,
                                        history_chars=turn.history_chars)
        system_text = "\n\n".join(parts)
        rec.write(SYSTEM, "set", system_text)
        names = self._tool_names if schemas is self._tool_schemas else tuple(s["name"] for s in schemas)
        rec.write(TOOLS, "set", names)
        turn.slots = (system_text, system_ids, schemas, tool_ids)
        rec.end()

    async def _call(self, turn: _Turn, iteration: int, *, withheld: bool) -> LLMResponse:
        rec = turn.rec
        step_id = rec.begin("call-llm", iteration)
        system_text = rec.read(SYSTEM)
        rec.read(MESSAGES)
        rec.read(TOOLS)
        _, system_ids, schemas, tool_ids = turn.slots
        injected, injected_ids = turn.context.injected_messages() if turn.context is not None else ([], [])
        request = LLMRequest(
            model=self.model, system=system_text, tools=schemas, iteration=iteration, call_index=turn.call_index,
            messages=[*turn.history, *injected] if injected else MessagesView(turn.history),
            input_chars=len(system_text) + turn.history_chars + sum(len(m["content"]) for m in injected),
        )
        turn.call_index += 1
        rec.emit("llm_start", step_id, {"model": self.model, "iteration": iteration,
                                        "messages": len(request.messages), "tools": len(schemas)})
        started = perf_counter_ns()

        def on_token(text: str) -> None:
            rec.emit("token", step_id, {"text": text})

        response = await self.provider.complete(request, on_token)
        duration_ms = (perf_counter_ns() - started) / 1e6
        usage = response.usage
        rec.emit("llm_end", step_id, {
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
            "estimated": usage.estimated, "tool_calls": len(response.tool_calls), "stop_reason": response.stop_reason,
        })
        calls = [{"id": c.id, "name": c.name, "args": c.args} for c in response.tool_calls]
        # Flat, and sharing the lists the message and the event already hold: see Recorder.
        rec.exchanges.append({
            "step_id": step_id, "iteration": iteration, "model": self.model, "system": system_text,
            "message_count": len(turn.history), "injected_messages": injected, "message_pieces": tuple(injected_ids),
            "tools": schemas, "system_pieces": tuple(system_ids),
            "tool_pieces": tuple(tool_ids), "tools_withheld": withheld, "duration_ms": duration_ms,
            "content": response.content, "tool_calls": calls, "stop_reason": response.stop_reason,
            "response_model": response.model, "wire": response.wire,
            "usage": (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens,
                      usage.estimated),
        })
        message: dict[str, Any] = {"role": "assistant", "content": response.content}
        if calls:
            message["tool_calls"] = calls
        self._append(turn, message, "assistant", step_id, iteration)
        rec.write(LAST_RESPONSE, "set", response.content)
        rec.end()
        return response

    async def _run_tool(self, turn: _Turn, call: Any, iteration: int) -> None:
        rec = turn.rec
        requested_by = rec.current
        step_id = rec.begin("tool", iteration)
        rec.emit("tool_start", step_id, {"tool": call.name, "tool_call_id": call.id, "args": call.args})
        tool = self._tools_by_name.get(call.name)
        if tool is None and turn.context is not None:
            tool = turn.context.tool(call.name)
        is_error = True
        if tool is None:
            content = f"Unknown tool: {call.name}"
        else:
            problem = tool.check_args(call.args)
            if problem is not None:
                content = problem
            else:
                ctx = ToolContext(run_id=turn.run_id, tool_call_id=call.id, tool_name=call.name,
                                  identity=turn.identity)
                try:
                    content = result_text(await tool.invoke(call.args, ctx))
                    is_error = False
                except Exception as exc:
                    content = f"Error: tool '{call.name}' raised {type(exc).__name__}: {exc}"
        message: dict[str, Any] = {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
        if is_error:
            message["is_error"] = True
        self._append(turn, message, "tool_result", call.id, iteration, tool=call.name, requested_by=requested_by,
                     is_error=is_error)
        rec.emit("tool_end", step_id, {"tool": call.name, "tool_call_id": call.id, "is_error": is_error})
        rec.end("tool_error" if is_error else "ok")

    def _final(self, turn: _Turn) -> str:
        rec = turn.rec
        rec.begin("final")
        answer = rec.read(LAST_RESPONSE) or ""
        rec.write(ANSWER, "set", answer)
        if turn.context is not None:
            turn.context.after_answer(str(answer))
        rec.end()
        return str(answer)


class LLMCall(Agent):
    """One LLM call with a system prompt and the caller's message; no tools, no loop."""

    kind: ClassVar[str] = "llm_call"

    def __init__(
        self,
        *,
        provider: Any,
        model: str = "mock-model",
        system: str = "",
        id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(provider=provider, model=model, system=system, id=id, name=name, max_iterations=1)

    def _declarations(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "system": self.system, "id": self.id,
                "name": self.name}

    async def _loop(self, turn: _Turn) -> tuple[str, dict[str, Any] | None]:
        rec = turn.rec
        rec.begin("seed")
        rec.write(("input", "message"), "set", turn.message)
        self._append(turn, {"role": "user", "content": turn.message}, "user", "user-message")
        rec.end()
        self._assemble(turn, 1, withhold_tools=True)
        await self._call(turn, 1, withheld=False)
        return self._final(turn), None


def turn_text(message: dict[str, Any]) -> str:
    """What the model reads of one conversation turn, as one string."""
    text = message.get("content") or ""
    calls = message.get("tool_calls")
    if not calls:
        return text
    rendered = "\n".join(f"{c['name']}({json.dumps(c['args'], ensure_ascii=False, sort_keys=True)})" for c in calls)
    return f"{text}\n{rendered}" if text else rendered


def _no_run() -> None:
    return None


def _identity_dict(identity: Identity | None) -> dict[str, str] | None:
    return identity.as_dict() if identity is not None else None

"""``Agent`` (the ReAct loop) and ``LLMCall`` (one call, no tools), recorded step by step.

A run goes through these steps, each closed by one commit:

``seed#n``      the earlier turns of a continued conversation and the user's message land in the
                messages slot (an input guard, when set, admits or refuses the message first);
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

A tool that calls ``ask_human`` closes its ``tool`` step as ``paused`` and the run returns
paused; a resumed leg lands the person's answer as that call's result in a ``tool`` step, runs
the rest of the batch, and goes on in the next iteration. A failure after a completed tool round
is raised as ``RunCheckpointError`` with the conversation up to that round.

When the iteration budget runs out while the model still asks for tools, one more
``assemble`` + ``call-llm`` is made with the tools withheld, so the model answers; the run
records that it stopped early and why.

Each piece of what the provider receives is recorded as a context piece with its source,
the step that admitted it and the step that landed it, so the recorded pieces of a slot
always add up to exactly what was sent.

Reading order, top down: the ``run`` door, ``_drive`` (one leg: the in-flight guard, and what
the instance holds afterwards), ``_execute`` (one execution, mounted at top level or as a
member of a composition), ``_loop`` (the iterations), then each step in the order it runs (the
``tool`` steps in :mod:`footprint_lab.core._tool_steps`, the rerun doors in :mod:`footprint_lab.core._rebuild`). The
state of one execution and the ways it ends live in :mod:`footprint_lab.core.turn`; the other
conversation doors (``follow_up``, ``resume``, ``resume_on_error``) in
:mod:`footprint_lab.core.conversation`; ``LLMCall`` in :mod:`footprint_lab.core.llm_call`.
"""


from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any, ClassVar, Unpack

from footprint_lab.base.refusal import describe_shape
from footprint_lab.base.runners import register as register_runner
from footprint_lab.context.assembly import ContextPlan
from footprint_lab.context.landing import TurnContext
from footprint_lab.core._rebuild import Rebuilds
from footprint_lab.core._tool_steps import ToolSteps
from footprint_lab.core.agent_door import AgentConfigError, DuplicateToolError, checked_settings
from footprint_lab.core.conversation import Conversation
from footprint_lab.core.conversation_legs import Continuation, Leg, turn_position, who
from footprint_lab.core.door import RunInput, normalize_run_input
from footprint_lab.core.identity import Identity, IdentityInput, coerce_identity
from footprint_lab.core.member_run import run_for
from footprint_lab.core.pause import HumanQuestion
from footprint_lab.core.run import Run
from footprint_lab.core.runner import Listener, Mount, Runner, ended_status, run_coroutine_sync
from footprint_lab.core.tools import Tool, tool_list
from footprint_lab.core.turn import Slots, Turn, input_refused, turn_text
from footprint_lab.explain.checks.tool_choice import choice_margins
from footprint_lab.explain.checks.tool_lint import warn_findings
from footprint_lab.providers.types import LLMRequest, LLMResponse, MessagesView, Provider, ToolCall, provider_name
from footprint_lab.record.by_field import MESSAGE
from footprint_lab.record.captured import CapturedPiece, Carried, Evidence, History, captured_piece, flat
from footprint_lab.record.recorder import Recorder
from footprint_lab.record.schema import (
    ANSWER,
    INPUT_MESSAGE,
    KIND_ASSISTANT,
    KIND_BASE,
    KIND_REGISTRY,
    KIND_TOOL_RESULT,
    KIND_USER,
    LAST_RESPONSE,
    MEMBER_KEY,
    MESSAGES,
    READ_SKILL,
    SLOT_MESSAGES,
    SLOT_SYSTEM,
    SLOT_TOOLS,
    SYSTEM,
    SYSTEM_PROMPT,
    TOOLS,
    USER_MESSAGE,
)
from footprint_lab.redact.policy import Redaction, combine_policies

if TYPE_CHECKING:
    from footprint_lab.core.checkpoint import Checkpoint

_HISTORY_SOURCE = {"user": KIND_USER, "assistant": KIND_ASSISTANT, "tool": KIND_TOOL_RESULT}


def _history_source(message: dict[str, Any]) -> str:
    """The source kind of an earlier message a leg carries."""
    return _HISTORY_SOURCE[message["role"]]


class Agent(Conversation, Rebuilds, ToolSteps, Runner):
    """A tool-using agent: assemble the slots, call the model, run its tools, repeat.

    ``context`` takes any mix of ``footprint_lab.context`` declarations (ids unique within
    the agent); ``budgets`` caps slots in characters (``{"system": 4000}``), dropping declared
    pieces that do not fit and recording them as dropped. ``redact`` keeps what a
    :class:`~footprint_lab.Redaction` covers out of everything recorded; ``input_guard`` (a
    function of the message returning ``None`` to admit it or a reply to refuse it) screens
    each new message before the model sees it. ``seal=True`` seals every run's recording, however
    the run ends, and its checkpoints (``footprint_lab.seal``; check it with ``footprint_lab.verify``);
    ``lint_tools=True`` lints the tools once, here, and warns (``ToolLintWarning``) about what
    ``footprint_lab.lint_tools`` finds.
    """

    kind: ClassVar[str] = "agent"

    def __init__(
        self,
        *,
        provider: Provider,
        model: str | None = None,
        system: str = "",
        tools: Sequence[Tool] = (),
        id: str | None = None,
        name: str | None = None,
        max_iterations: int = 10,
        context: Sequence[Any] = (),
        budgets: Mapping[str, int] | None = None,
        redact: Redaction | None = None,
        input_guard: Callable[[str], Any] | None = None,
        seal: bool = False,
        lint_tools: bool = False,
    ) -> None:
        super().__init__(id=id, name=name)
        runner = type(self).__name__
        model = checked_settings(runner, provider=provider, model=model, system=system, max_iterations=max_iterations,
                                 id=id, name=name, redact=redact, input_guard=input_guard, seal=seal,
                                 lint_tools=lint_tools)
        self.redact = redact
        self.seal = seal
        self.input_guard = input_guard
        self.provider = provider
        self.model = model
        self.system = system
        self.max_iterations = max_iterations
        self.tools = self._check_tools(tools, runner)
        self._tools_by_name = {t.name: t for t in self.tools}
        self._tool_schemas = [t.schema() for t in self.tools]
        self._tool_names = tuple(t.name for t in self.tools)
        self.lint_tools = lint_tools
        if lint_tools and self.tools:
            warn_findings(self.tools, runner)
        self._context = self._plan_context(context, budgets, runner)
        self._active_run_id: str | None = None

    # -- the run path, top down -------------------------------------------------------------
    async def run(
        self,
        input: RunInput = None,
        /,
        *,
        on_event: Listener | None = None,
        identity: IdentityInput = None,
        continue_from: Checkpoint | Mapping[str, Any] | str | None = None,
    ) -> Run:
        """Answer one message: ``await agent.run("...")`` or ``agent.run({"message": "..."})``.

        A run starts a new conversation; ``continue_from=checkpoint`` continues a stored one
        (see also ``follow_up``, ``resume`` and ``resume_on_error``).
        """
        door = self.door
        bag = normalize_run_input(input, door, identity=identity, continue_from=continue_from)
        named = coerce_identity(bag.pop("identity", None), door)
        start, named = self._start_turn(door, bag.pop("continue_from", None), named)
        return await self._drive(bag, door=door, start=start, identity=named, on_event=on_event)

    def run_sync(self, input: RunInput = None, /, *, on_event: Listener | None = None,
                 identity: IdentityInput = None, continue_from: Checkpoint | Mapping[str, Any] | str | None = None,
                 ) -> Run:
        """:meth:`run` to completion from synchronous code, inside a running event loop or not."""
        return run_coroutine_sync(self.run(input, on_event=on_event, identity=identity, continue_from=continue_from))

    async def _drive(
        self, bag: dict[str, Any], *, door: str, start: Continuation | None, identity: Identity | None,
        on_event: Listener | None,
    ) -> Run:
        """Run one leg and hold what it leaves: the only place the instance's conversation changes.

        Every door of this agent (``run``, ``follow_up``, ``resume``, ``resume_on_error``) ends here, and
        so does each turn of a chat, on the instance the chat keeps its conversation on (``_say``).
        """
        listeners = self._listeners_for(on_event)  # refuses a listener that cannot listen, before the claim
        run_id = self._claim(door)
        try:
            mount = Mount(run_id=run_id, listeners=listeners, identity=identity)
            run = await self._execute(bag, mount, start)
        except BaseException as exc:
            # A RunCheckpointError, or a cancellation after a completed tool round, carries the last good
            # conversation (Turn.fail); any other failure leaves none.
            self._hold(ended_status(exc), getattr(exc, "_saved", None), None)
            self.last_run = getattr(exc, "_footprint_run", self.last_run)
            raise
        finally:
            self._active_run_id = None
        saved = run._conversation
        self._hold(saved.outcome, saved if saved.history is not None else None, saved.pause)
        self.last_run = run
        return run

    async def _execute(self, bag: dict[str, Any], mount: Mount, start: Continuation | None = None) -> Run:
        """One execution: at top level (from ``_drive``) or as a member (a composition mounts it here)."""
        # Whom this execution serves comes from the mount alone (member_run); never from the instance.
        serves = run_for(mount, bag, self.door)
        shared = mount.scrubber  # a composition's run: one scrubber covers every record of it
        if start is None and "resume" in mount.extra:  # a member resumed by the composition it paused
            start = self._member_resume(mount.extra["resume"], serves, shared.policy if shared is not None else None)
        elif start is None and "retry" in mount.extra:  # a member that failed, picked up by its composition
            start = self._member_retry(mount.extra["retry"], serves, shared.policy if shared is not None else None)
        policy = start.policy if start is not None else self.redact
        if shared is not None and (policy is None or shared.policy.covers(policy)):
            scrubber = shared
        else:
            policy = combine_policies(policy, shared.policy if shared is not None else None)
            scrubber = policy.for_run(start.marks if start is not None else None) if policy is not None else None
            if shared is not None and scrubber is not None:  # a policy the composition's does not cover:
                scrubber.share_learning(shared)  # still one set of learned values for the whole run
        if scrubber is not None and start is not None and start.learned:
            scrubber.teach(start.learned)  # what earlier legs learned is masked from this leg's first record
        rec = Recorder(serves.run_id, path=mount.path, listeners=mount.listeners, policy=scrubber)
        rec.learn(bag)  # the input's covered keys are read before anything is recorded (its history included)
        if MEMBER_KEY in mount.extra:  # the name a composition mounted this agent under (footprint_lab.explain)
            rec.meta[MEMBER_KEY] = mount.extra[MEMBER_KEY]
        # A member's conversation is the run it serves; a continued one keeps the run that opened it.
        first_run_id = start.first_run_id if start is not None and not mount.path else serves.run_id
        turn = Turn(rec, _turn_message(bag, start), serves.identity, Leg(start, scrubber, who(serves.identity)),
                    first_run_id, runner={"kind": self.kind, "id": self.id, "name": self.name},
                    door=type(self).__name__, sealed=self.seal)
        if self._context is not None:
            turn.context = TurnContext(self._context, rec, turn.message, turn.history, turn.memory.namespace())
        rec.emit("run_start", rec.path, {"runner": self.kind, "id": self.id, "name": self.name, **turn.leg.who})
        try:
            answer, stopped_early = await self._loop(turn)
        except HumanQuestion as asked:
            if turn.leg.call is None:  # asked outside a tool call: there is no call to answer later
                turn.fail(bag, asked)
                raise
            return turn.pause(bag, asked)
        except BaseException as exc:
            turn.fail(bag, exc)
            raise
        return turn.finish(bag, answer, stopped_early)

    async def _loop(self, turn: Turn) -> tuple[str, dict[str, Any] | None]:
        first = await self._seed(turn)
        if first is None:
            return self._final(turn), input_refused()
        for iteration in range(first, self.max_iterations + 1):
            self._assemble(turn, iteration, withhold_tools=False)
            response = await self._call(turn, iteration, withheld=False)
            if not response.tool_calls:
                return self._final(turn), None
            await self._run_batch(turn, response.tool_calls, iteration, asker=turn.rec.current)
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

    # -- the steps, in the order they run -------------------------------------------------
    async def _seed(self, turn: Turn) -> int | None:
        """Land the conversation so far and the new message; the iteration to go on from (``None``: refused).

        A resumed leg lands the earlier turns, then (for a paused run) the person's answer as the
        paused call's result and the rest of its batch, and goes on in the next iteration.
        """
        rec = turn.rec
        start = turn.leg.start
        rec.begin("seed")
        if start is not None:
            rec.meta["continues"] = {"run_id": start.from_run, "how": start.how, "first_run_id": turn.first_run_id}
            # each earlier message's piece (and recorded form) is the one the legs before made for it, if any
            held = start.carried if start.carried is not None else History()
            shared = start.carried = held.carry(start.history, rec.current, _history_source, turn_text)
            rec.carry(Carried(shared, len(start.history), start.from_run))
            for index, message in enumerate(start.history):
                self._land(turn, message, shared.piece(index), at=index)
        if start is None or start.how in ("follow_up", "continue_from"):
            rec.write(INPUT_MESSAGE, "set", turn.message)
            reply = await self._guard(turn)
            if reply is not None:
                rec.write(LAST_RESPONSE, "set", reply)
                rec.end()
                turn.context = None  # a refused message is admitted nowhere, declared memory included
                return None
            self._append(turn, {"role": "user", "content": turn.message}, KIND_USER, USER_MESSAGE)
            rec.end()
            return 1
        rec.end()
        rounds, turn.call_index, open_calls = turn_position(turn.history)
        if start.pause is not None:
            self._answer(turn, rounds, open_calls[0], start.answer or "")
            # the call that asked for this batch is in the earlier run's recording, not this one
            await self._run_batch(turn, [ToolCall(c["id"], c["name"], c["args"]) for c in open_calls[1:]], rounds,
                                  asker=None)
        else:
            turn.leg.good = len(turn.history)
        return rounds + 1

    async def _guard(self, turn: Turn) -> str | None:
        """The input guard's verdict on the new message, as a decision: ``None`` admits, a reply refuses."""
        guard = self.input_guard
        if guard is None:
            return None
        reply = guard(turn.message)
        if inspect.isawaitable(reply):
            reply = await reply
        if reply is not None and (not isinstance(reply, str) or not reply.strip()):
            raise AgentConfigError(type(self).__name__, "input_guard", f"a guard that returned {describe_shape(reply)}",
                                   "must return None to admit the message, or a non-empty reply to refuse it")
        verdict = "admitted" if reply is None else "refused"
        turn.rec.decide("input-guard", [("input_guard", {"message": turn.message}, verdict)], verdict)
        return reply

    def _append(self, turn: Turn, message: dict[str, Any], source_kind: str, source_id: str,
                iteration: int | None = None, **evidence: Unpack[Evidence]) -> None:
        """Append a turn to the conversation: it lands in the messages slot in this step.

        The piece's content is what the model reads of the turn: its text, and for an
        assistant turn that calls tools, each call as ``name({json args})`` on its own line.
        """
        self._land(turn, message, captured_piece(
            SLOT_MESSAGES, source_kind, source_id, turn_text(message), step=turn.rec.current, iteration=iteration,
            position=len(turn.history), reason="conversation", **evidence))

    @staticmethod
    def _land(turn: Turn, message: dict[str, Any], piece: CapturedPiece, at: int | None = None) -> None:
        """Append ``message`` to the conversation, landed as ``piece``; ``at`` is the piece's index when the caller
        holds that number already (a carried piece's position), so that no new one is made for it."""
        rec = turn.rec
        rec.write(MESSAGES, "append", message, MESSAGE)
        turn.history.append(message)
        turn.history_chars += len(message.get("content") or "")
        rec.messages.append(message)
        index = len(rec.pieces)
        rec.message_pieces.append(at if at == index else index)
        rec.pieces.append(piece)

    def _assemble(self, turn: Turn, iteration: int, *, withhold_tools: bool) -> None:
        rec = turn.rec
        step_id = rec.begin("assemble", iteration)
        pieces = rec.pieces
        system_ids: list[int] = []
        parts: list[str] = []
        if self.system:
            system_ids.append(len(pieces))
            pieces.append(captured_piece(SLOT_SYSTEM, KIND_BASE, SYSTEM_PROMPT, self.system, step=step_id,
                                         iteration=iteration, position=0))
            parts.append(self.system)
        tool_ids: list[int] = []
        schemas = [] if withhold_tools else self._tool_schemas
        for position, schema in enumerate(schemas):
            tool_ids.append(len(pieces))
            pieces.append(captured_piece(SLOT_TOOLS, KIND_REGISTRY, schema["name"], schema["description"], step=step_id,
                                         iteration=iteration, position=position))
        if turn.context is not None:
            schemas = turn.context.land(step_id, iteration, parts=parts, system_ids=system_ids, schemas=schemas,
                                        tool_ids=tool_ids, withhold_tools=withhold_tools,
                                        history_chars=turn.history_chars)
        system_text = "\n\n".join(parts)
        rec.write(SYSTEM, "set", system_text)
        names = self._tool_names if schemas is self._tool_schemas else tuple(s["name"] for s in schemas)
        rec.write(TOOLS, "set", names)
        turn.slots = Slots(system_text, system_ids, schemas, tool_ids)
        rec.end()

    async def _call(self, turn: Turn, iteration: int, *, withheld: bool) -> LLMResponse:
        rec = turn.rec
        step_id = rec.begin("call-llm", iteration)
        system_text = rec.read(SYSTEM)
        rec.read(MESSAGES)
        rec.read(TOOLS)
        slots = turn.slots
        injected, injected_ids = turn.context.injected_messages() if turn.context is not None else ((), ())
        request = LLMRequest(
            model=self.model, system=system_text, tools=slots.schemas, iteration=iteration, call_index=turn.call_index,
            messages=MessagesView(turn.history, tail=injected),
            input_chars=len(system_text) + turn.history_chars + sum(len(m["content"]) for m in injected),
        )
        turn.call_index += 1
        rec.emit("llm_start", step_id, {"model": self.model, "iteration": iteration,
                                        "messages": len(request.messages), "tools": len(slots.schemas)})
        started = perf_counter_ns()

        on_token, flush_tokens = rec.token_stream(step_id)
        response = (await self.provider.complete(request, on_token)).made_sound(provider_name(self.provider))
        flush_tokens()
        duration_ms = (perf_counter_ns() - started) / 1e6
        usage = response.usage
        rec.emit("llm_end", step_id, {
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens,
            "estimated": usage.estimated, "tool_calls": len(response.tool_calls), "stop_reason": response.stop_reason,
        })
        calls = [{"id": c.id, "name": c.name, "args": c.args} for c in response.tool_calls]
        # One flat tuple of plain values (record.captured.flat): the tools list is held once by the
        # recorder (Recorder.share) and the tool calls by the reply message, the next in the
        # transcript ("reply"), so the collector stops tracking the record.
        rec.exchanges.append(flat({
            "step_id": step_id, "iteration": iteration, "model": self.model, "system": system_text,
            "message_count": len(turn.history), "injected_messages": injected, "message_pieces": injected_ids,
            "tools": rec.share(slots.schemas), "system_pieces": tuple(slots.system_ids),
            "tool_pieces": tuple(slots.tool_ids), "tools_withheld": withheld, "duration_ms": duration_ms,
            "content": response.content, "reply": len(turn.history), "stop_reason": response.stop_reason,
            "response_model": response.model, "wire": response.wire,
            "tool_margins": _margins(response, calls, slots.schemas),
            "usage": (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,  # as UsageCounts names
                      usage.cache_write_tokens, usage.estimated),
        }))
        message: dict[str, Any] = {"role": "assistant", "content": response.content}
        if calls:
            message["tool_calls"] = calls
        self._append(turn, message, KIND_ASSISTANT, step_id, iteration)
        rec.write(LAST_RESPONSE, "set", response.content)
        rec.end()
        return response

    def _final(self, turn: Turn) -> str:
        rec = turn.rec
        rec.begin("final")
        answer = rec.read(LAST_RESPONSE) or ""
        rec.write(ANSWER, "set", answer)
        if turn.context is not None:
            turn.context.after_answer(str(answer))
        rec.end()
        return str(answer)

    # -- what the instance keeps, and what is checked when it is built -----------------------
    @staticmethod
    def _check_tools(tools: Any, runner: str) -> list[Tool]:
        """The tools as a list of ``Tool``, each name once (a model calls tools by name)."""
        checked = tool_list(tools, runner)
        seen: set[str] = set()
        for item in checked:
            if item.name in seen:
                raise DuplicateToolError(item.name)
            seen.add(item.name)
        return checked

    def _plan_context(self, context: Any, budgets: Any, runner: str) -> ContextPlan | None:
        """Check the context declarations where they meet the tools: declaration ids, tool names and the ids the
        runner gives its own pieces name one source each; a skill's tools obey the same rules as the agent's own."""
        plan = ContextPlan.build(context, budgets, runner=runner, tools=self._tool_names)
        if plan is not None and plan.skills:
            self._check_tools([*self.tools, *(tool for _, tool, _ in plan.skill_tools.values())], runner)
            if READ_SKILL in self._tools_by_name:
                raise DuplicateToolError(READ_SKILL)
        return plan

    # -- what a rerun rebuilds it from (the rerun doors: core._rebuild.Rebuilds) -------------------
    def _declarations(self) -> dict[str, Any]:
        """The keywords that rebuild this agent as it was declared."""
        plan = self._context
        return {"provider": self.provider, "model": self.model, "system": self.system, "tools": list(self.tools),
                "id": self.id, "name": self.name, "max_iterations": self.max_iterations, "redact": self.redact,
                "input_guard": self.input_guard, "seal": self.seal,
                "context": [declaration for declaration, _, _ in plan.entries] if plan is not None else [],
                "budgets": dict(plan.budgets) if plan is not None else None}


def _turn_message(bag: dict[str, Any], start: Continuation | None) -> str:
    """The message a turn answers: the new one, or for a resumed leg the last one its conversation had."""
    message = bag.get("message")
    if message is None and start is not None:
        return str(next((m["content"] for m in reversed(start.history) if m["role"] == "user"), ""))
    return str(message)


def _margins(response: LLMResponse, calls: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """How close each tool choice was, when the provider reported log-probabilities (``explain.checks.tool_choice``)."""
    if not response.logprobs or not calls:
        return ()

    return choice_margins(response.logprobs, calls, [tool["name"] for tool in tools])


register_runner("agent", Agent)

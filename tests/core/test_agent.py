"""The Agent loop and LLMCall: slots, tools, budget, and what reaches the provider."""

from __future__ import annotations

import asyncio

import pytest

from footprint_lab import Agent, LLMCall, Recording, Run, define_tool, tool
from footprint_lab.errors import AgentConfigError, DuplicateToolError, RunInFlightError, ToolDefinitionError
from footprint_lab.providers import LLMRequest, mock


def recording_provider(replies):
    """A mock that also keeps every request it was given."""
    seen: list[LLMRequest] = []

    def respond(request: LLMRequest):
        seen.append(request)
        return replies[request.call_index]

    return mock(respond=respond), seen


async def test_final_answer_and_run_fields():
    run = await Agent(provider=mock(reply="Paris"), system="Answer briefly.").run("Capital of France?")
    assert run.answer == "Paris"
    assert str(run) == "Paris"
    assert run.status == "finished"
    assert run.run_id.startswith("run-")
    assert run.recording.answer == "Paris"
    assert run.recording.runner.kind == "agent"


async def test_react_loop_runs_tools_and_feeds_results_back():
    calls = []

    @tool
    def weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: the city name
        """
        calls.append(city)
        return f"sunny in {city}"

    provider, seen = recording_provider([{"tool": "weather", "args": {"city": "Oslo"}}, "It is sunny."])
    run = await Agent(provider=provider, tools=[weather]).run("Weather in Oslo?")
    assert calls == ["Oslo"]
    assert run.answer == "It is sunny."
    second = seen[1].messages
    assert [m["role"] for m in second] == ["user", "assistant", "tool"]
    assert second[2]["content"] == "sunny in Oslo"
    assert second[2]["tool_call_id"] == second[1]["tool_calls"][0]["id"]
    assert seen[0].tools[0]["name"] == "weather"
    assert seen[0].tools[0]["input_schema"]["properties"]["city"] == {"type": "string", "description": "the city name"}


async def test_system_prompt_on_the_wire_is_the_joined_system_pieces():
    provider, seen = recording_provider([{"tool": "noop", "args": {}}, {"tool": "noop", "args": {}}, "done"])
    noop = define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: "ok")
    run = await Agent(provider=provider, system="Rule one.\n\nRule two.", tools=[noop]).run("go")
    recording = run.recording
    assert len(recording.exchanges) == len(seen) == 3
    for request, exchange in zip(seen, recording.exchanges, strict=True):
        slots = recording.exchange_pieces(exchange)
        joined = "\n\n".join(recording.context_pieces[i].content for i in slots["system"])
        assert joined == request.system == exchange.system
        assert recording.request_messages(exchange) == request.messages
        assert [recording.context_pieces[i].source_id for i in slots["tools"]] == [t["name"] for t in request.tools]


async def test_tool_that_raises_becomes_an_error_result_and_the_run_goes_on():
    def boom() -> str:
        raise ValueError("disk on fire")

    broken = define_tool(name="broken", description="fails", input_schema={"type": "object"}, fn=boom)
    provider, seen = recording_provider([{"tool": "broken", "args": {}}, "recovered"])
    run = await Agent(provider=provider, tools=[broken]).run("go")
    assert run.answer == "recovered"
    result = seen[1].messages[-1]
    assert result["is_error"] is True
    assert "ValueError" in result["content"] and "disk on fire" in result["content"]
    tool_step = next(s for s in run.recording.steps if s.stage == "tool")
    assert tool_step.status == "tool_error"


async def test_unknown_tool_becomes_a_result_the_model_reads():
    provider, seen = recording_provider([{"tool": "teleport", "args": {}}, "ok"])
    run = await Agent(provider=provider).run("go")
    assert run.answer == "ok"
    assert seen[1].messages[-1]["content"] == "Unknown tool: teleport"


async def test_bad_arguments_teach_the_model_and_the_function_never_runs():
    ran = []
    add = define_tool(
        name="add", description="adds",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        fn=lambda a: ran.append(a) or a + 1,
    )
    provider, seen = recording_provider([{"tool": "add", "args": {"a": "one"}}, {"tool": "add", "args": {}}, "ok"])
    await Agent(provider=provider, tools=[add]).run("go")
    assert ran == []
    first, second = seen[2].messages[2]["content"], seen[2].messages[4]["content"]
    assert "Invalid arguments for tool 'add'" in first and "must be integer" in first
    assert "must contain ['a'] properties" in second
    assert "matching this schema" in first


async def test_arguments_are_recorded_as_the_model_sent_them():
    noop = define_tool(name="noop", description="x", fn=lambda x=3: "ok",
                       input_schema={"type": "object", "properties": {"x": {"type": "integer", "default": 3}}})
    run = await Agent(provider=mock(replies=[{"tool": "noop", "args": {}}, "ok"]), tools=[noop]).run("go")
    assert run.recording.exchanges[0].response.tool_calls[0].args == {}


async def test_async_tools_and_ctx():
    seen = []

    @tool
    async def whoami(ctx, note: str = "") -> dict:
        """Reports the run it serves."""
        seen.append(ctx)
        return {"run": ctx.run_id}

    run = await Agent(provider=mock(replies=[{"tool": "whoami", "args": {}}, "ok"]), tools=[whoami]).run("go")
    assert seen[0].run_id == run.run_id
    assert seen[0].tool_name == "whoami"
    assert seen[0].tool_call_id == run.recording.exchanges[0].response.tool_calls[0].id
    assert seen[0].identity is None
    assert "ctx" not in whoami.input_schema["properties"]


async def test_ctx_identity_only_when_the_caller_named_one():
    seen = []
    probe = define_tool(name="probe", description="x", input_schema={"type": "object"},
                        fn=lambda ctx: seen.append(ctx.identity) or "ok")
    agent = Agent(provider=mock(replies=[{"tool": "probe", "args": {}}, "ok"]), tools=[probe])
    await agent.run("go")
    await agent.run("go", identity={"tenant": "acme", "principal": "ana"})
    assert seen[0] is None
    assert seen[1].tenant == "acme" and seen[1].principal == "ana"


async def test_budget_exhausted_makes_one_last_call_without_tools():
    provider, seen = recording_provider([{"tool": "noop", "args": {}}] * 3 + ["forced answer"])
    noop = define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: "ok")
    run = await Agent(provider=provider, tools=[noop], max_iterations=3).run("go")
    assert run.answer == "forced answer"
    assert len(seen) == 4
    assert seen[-1].tools == [] and all(r.tools for r in seen[:-1])
    assert run.stopped_early["reason"] == "max_iterations"
    assert run.recording.stopped_early["max_iterations"] == 3
    assert run.recording.exchanges[-1].tools_withheld is True


async def test_llm_call_sends_one_call_with_no_tools():
    provider, seen = recording_provider(["summary"])
    run = await LLMCall(provider=provider, system="Summarize.").run("long text")
    assert run.answer == "summary"
    assert len(seen) == 1 and seen[0].tools == [] and seen[0].system == "Summarize."
    assert [m["content"] for m in seen[0].messages] == ["long text"]
    assert run.recording.runner.kind == "llm_call"


def test_duplicate_tool_names_are_refused_at_build():
    a = define_tool(name="same", description="a", input_schema={"type": "object"}, fn=lambda: 1)
    b = define_tool(name="same", description="b", input_schema={"type": "object"}, fn=lambda: 2)
    with pytest.raises(DuplicateToolError) as caught:
        Agent(provider=mock(reply="x"), tools=[a, b])
    assert caught.value.code == "ERR_DUPLICATE_TOOL" and caught.value.tool_name == "same"


def test_ctx_must_come_first():
    def misplaced(city: str, ctx) -> str:
        return city

    with pytest.raises(ToolDefinitionError) as caught:
        tool(misplaced)
    assert caught.value.problem == "ctx"


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [({"provider": "openai"}, "provider"), ({"max_iterations": 0}, "max_iterations"), ({"system": 5}, "system"),
     ({"model": ""}, "model")],
)
def test_agent_settings_are_checked_at_build(kwargs, setting):
    with pytest.raises(AgentConfigError) as caught:
        Agent(**{"provider": mock(reply="x"), **kwargs})
    assert caught.value.setting == setting and caught.value.code == "ERR_AGENT_CONFIG"


async def test_overlapping_runs_on_one_agent_are_refused():
    gate = asyncio.Event()

    async def slow(request):
        await gate.wait()
        return "done"

    agent = Agent(provider=mock(respond=slow), id="support-bot")
    first = asyncio.ensure_future(agent.run("one"))
    await asyncio.sleep(0)
    with pytest.raises(RunInFlightError) as caught:
        await agent.run("two")
    gate.set()
    done = await first
    assert caught.value.code == "ERR_RUN_IN_FLIGHT"
    assert caught.value.agent_id == "support-bot"
    assert caught.value.active_run_id == done.run_id
    text = str(caught.value)
    # the three ways to run two turns, each spelled out
    assert "Await the turn in flight" in text and "second Agent" in text and "asyncio.Queue" in text
    assert done.run_id in text and "Agent.run" in text


async def test_a_cancelled_run_releases_the_in_flight_guard():
    gate = asyncio.Event()

    async def hang(request):
        if request.call_index == 0 and not gate.is_set():
            await asyncio.sleep(3600)
        return "answered"

    agent = Agent(provider=mock(respond=hang))
    task = asyncio.ensure_future(agent.run("one"))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    cancelled = agent.last_run
    assert cancelled is not None and cancelled.status == "cancelled"
    assert cancelled.recording.error["type"] == "CancelledError"
    gate.set()
    second = await agent.run("two")
    assert second.answer == "answered" and agent.last_run is second


async def test_gather_of_two_runs_lets_exactly_one_succeed():
    agent = Agent(provider=mock(reply="ok"))
    results = await asyncio.gather(agent.run("a"), agent.run("b"), return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["Run", "RunInFlightError"]


async def test_a_failing_run_releases_the_in_flight_guard():
    def explode(request):
        raise ConnectionError("provider down")

    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        if calls["n"] == 1:
            return explode(request)
        return "back"

    agent = Agent(provider=mock(respond=flaky))
    with pytest.raises(ConnectionError):
        await agent.run("one")
    assert agent.last_run is not None and agent.last_run.status == "failed"
    assert agent.last_run.recording.error["type"] == "ConnectionError"
    assert (await agent.run("two")).answer == "back"


def test_run_sync_works_in_a_script():
    assert Agent(provider=mock(reply="sync")).run_sync("go").answer == "sync"


async def test_run_sync_works_inside_a_running_loop():
    # As in a Jupyter cell: an event loop is already running in this thread.
    assert Agent(provider=mock(reply="from a kernel")).run_sync("go").answer == "from a kernel"


def test_run_sync_keeps_one_loop_per_thread_and_a_tool_may_call_run_sync_again():
    inner = Agent(provider=mock(reply="inner answer"))
    loops: list[asyncio.AbstractEventLoop] = []

    @tool
    def ask_inner() -> str:
        """Ask the inner agent, synchronously."""
        loops.append(asyncio.get_running_loop())
        return inner.run_sync("go").answer or ""

    outer = Agent(provider=mock(replies=[{"tool": "ask_inner", "args": {}}, "outer answer"]), tools=[ask_inner])
    assert outer.run_sync("go").answer == "outer answer"
    assert outer.run_sync("go").answer == "outer answer"
    assert loops[0] is loops[1]  # the same loop served both calls from this thread


async def test_run_sync_inside_a_kernel_may_nest_in_a_tool():
    inner = Agent(provider=mock(reply="inner answer"))

    @tool
    def ask_inner() -> str:
        """Ask the inner agent, synchronously, from the private loop run_sync uses in a kernel."""
        return inner.run_sync("go").answer or ""

    outer = Agent(provider=mock(replies=[{"tool": "ask_inner", "args": {}}, "outer answer"]), tools=[ask_inner])
    run = outer.run_sync("go")
    assert run.answer == "outer answer"
    assert run.recording.messages[2]["content"] == "inner answer"


async def test_repr_and_str_of_a_run_leave_its_recording_unbuilt():
    # asyncio and IPython call repr on every finished run: it must not build the whole recording.
    run = await Agent(provider=mock(reply="The answer.")).run("go")
    assert str(run) == "The answer."
    assert "The answer." in repr(run)
    assert run._recording is None
    assert repr(run) == repr(Run.from_recording(run.recording))


async def test_recording_round_trips_through_json_exactly():
    noop = define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: {"n": 1.5})
    agent = Agent(provider=mock(replies=[{"tool": "noop", "args": {"k": [1, "a"]}}, "done"]), tools=[noop],
                  system="S")
    run = await agent.run({"message": "go", "extra": {"when": (1, 2)}})
    recording = run.recording
    again = Recording.model_validate_json(recording.model_dump_json())
    assert again == recording
    assert again.model_dump_json() == recording.model_dump_json()


async def test_mock_usage_is_estimated_at_four_chars_a_token():
    run = await Agent(provider=mock(reply="abcdefgh"), system="1234").run("12345678")
    usage = run.recording.exchanges[0].response.usage
    assert usage.estimated is True
    assert usage.input_tokens == 3  # 4 + 8 characters
    assert usage.output_tokens == 2


async def test_each_reported_token_count_is_recorded_under_its_own_name():
    from footprint_lab.providers.types import LLMResponse, Usage

    counts = Usage(7, 5, cache_read_tokens=3, cache_write_tokens=2)
    run = await Agent(provider=mock(respond=lambda request: LLMResponse(content="done", usage=counts))).run("go")
    recorded = run.recording.exchanges[0].response.usage
    assert (recorded.input_tokens, recorded.output_tokens, recorded.cache_read_tokens,
            recorded.cache_write_tokens, recorded.estimated) == (7, 5, 3, 2, False)
    saved = Recording.model_validate_json(run.recording.model_dump_json()).exchanges[0].response.usage
    assert saved == recorded


async def test_every_conversation_turn_is_a_piece_of_the_messages_slot():
    noop = define_tool(name="lookup", description="x", input_schema={"type": "object"}, fn=lambda **kw: "found")
    run = await Agent(provider=mock(replies=[{"tool": "lookup", "args": {"id": "A-1"}}, "done"]),
                      tools=[noop]).run("find A-1")
    recording = run.recording
    last = recording.exchanges[-1]
    pieces = [recording.context_pieces[i] for i in recording.exchange_pieces(last)["messages"]]
    assert [(p.source_kind, p.content) for p in pieces] == [
        ("user", "find A-1"), ("assistant", 'lookup({"id": "A-1"})'), ("tool_result", "found")]
    assert pieces[1].landed_by == recording.exchanges[0].step_id
    assert pieces[2].detail["requested_by"] == recording.exchanges[0].step_id
    assert pieces[2].source_id == recording.exchanges[0].response.tool_calls[0].id
    assert len(pieces) == len(recording.request_messages(last))

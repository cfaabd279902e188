"""A real Agent over each real wire: a tool round trip, recorded exactly as sent and received."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from provider_cases import FIXTURES, MODELS, SECRET
from wire_server import Reply, WireServer, json_reply, stream_reply

from footprint_lab import Agent, LLMCall, define_tool
from footprint_lab.context import define_fact, define_skill, define_steering
from footprint_lab.core.agent import turn_text
from footprint_lab.errors import RunCheckpointError
from footprint_lab.providers.errors import ProviderAuthError

KINDS = ("openai", "anthropic", "ollama")
EXTENSION = {"openai": "sse", "anthropic": "sse", "ollama": "ndjson"}


def add_tool() -> Any:
    return define_tool(
        name="add", description="Add two integers.",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "required": ["a", "b"]},
        fn=lambda a, b: a + b,
    )


def script_round_trip(server: WireServer, kind: str) -> None:
    server.queue(stream_reply(f"{kind}_stream_tools.{EXTENSION[kind]}"),
                 stream_reply(f"{kind}_stream_text.{EXTENSION[kind]}"))


def tool_results_sent(kind: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (call id or tool name, result) pairs a second request carried, read in its own wire format."""
    if kind == "anthropic":
        turn = body["messages"][-1]
        assert turn["role"] == "user"  # both results in one user turn
        return [(block["tool_use_id"], block["content"]) for block in turn["content"]]
    key = "tool_call_id" if kind == "openai" else "tool_name"
    return [(m[key], m["content"]) for m in body["messages"] if m["role"] == "tool"]


EXPECTED_RESULTS = {
    "openai": [("call_Sa1", "5"), ("call_Sb2", "30")],
    "anthropic": [("toolu_01T1x1", "5"), ("toolu_01T2y2", "30")],
    "ollama": [("add", "5"), ("add", "30")],
}


@pytest.mark.parametrize("kind", KINDS)
async def test_an_agent_runs_a_tool_round_trip_over_the_wire(build: Any, server: WireServer, kind: str) -> None:
    script_round_trip(server, kind)
    agent = Agent(provider=build(kind), tools=[add_tool()], system="Use the add tool.")
    run = await agent.run("Add 2+3 and 10+20.")
    assert run.answer == "The sum is 5."

    first, second = (r.body for r in server.received)
    assert tool_results_sent(kind, second) == EXPECTED_RESULTS[kind]
    assert first["model"] == second["model"] == MODELS[kind]

    recording = run.recording
    assert [x.model for x in recording.exchanges] == [MODELS[kind], MODELS[kind]]
    for exchange, sent in zip(recording.exchanges, server.received, strict=True):
        assert exchange.wire is not None
        assert exchange.wire["request"]["body"] == sent.body  # recorded exactly as sent
        assert exchange.wire["response"]["status"] == 200
    assert [c.args for c in recording.exchanges[0].response.tool_calls] == [{"a": 2, "b": 3}, {"a": 10, "b": 20}]
    assert recording.exchanges[1].response.usage.output_tokens > 0
    assert SECRET not in recording.model_dump_json()


@pytest.mark.parametrize("kind", KINDS)
async def test_streamed_text_becomes_token_events_of_the_llm_step(build: Any, server: WireServer, kind: str) -> None:
    script_round_trip(server, kind)
    live: list[Any] = []
    agent = Agent(provider=build(kind), tools=[add_tool()])
    run = await agent.run("Add 2+3 and 10+20.", on_event=live.append)
    tokens = [(e.step_id, e.payload["text"]) for e in run.recording.events if e.type == "token"]
    final_step = run.recording.exchanges[1].step_id
    assert [text for step, text in tokens if step == final_step] == ["The", " sum", " is 5."]
    first_step_text = "".join(text for step, text in tokens if step != final_step)
    assert first_step_text == ("" if kind == "openai" else "Adding both.")
    assert [e.payload["text"] for e in live if e.type == "token"] == [text for _, text in tokens]


async def test_a_provider_failure_fails_the_run_with_its_typed_error(build: Any, server: WireServer) -> None:
    server.queue(stream_reply("openai_stream_tools.sse"),
                 Reply(status=401, body={"error": {"message": "bad key", "type": "invalid_request_error",
                                                   "code": "invalid_api_key"}}))
    agent = Agent(provider=build("openai"), tools=[add_tool()])
    with pytest.raises(RunCheckpointError) as failed:  # after a completed tool round the work is kept
        await agent.run("Add 2+3 and 10+20.")
    assert isinstance(failed.value.cause, ProviderAuthError)
    assert failed.value.resumable is False  # a rejected key fails the same way until it is fixed
    assert agent.last_run is not None
    recording = agent.last_run.recording
    assert recording.status == "failed"
    assert recording.error is not None and recording.error["code"] == "ERR_PROVIDER_AUTH"
    assert len(recording.exchanges) == 1  # the completed round is on the record


async def test_one_loop_reuses_one_connection(build: Any, server: WireServer) -> None:
    server.fallback = json_reply("ollama_reply.json")
    provider = build("ollama", stream=False)
    agent = Agent(provider=provider)
    for _ in range(3):
        await agent.run("Capital of France?")
    assert len({r.client_port for r in server.received}) == 1


async def test_run_sync_inside_a_running_loop_gets_its_own_client(build: Any, server: WireServer) -> None:
    # Inside Jupyter, run_sync drives the run on a private loop kept in a worker thread; the
    # provider must not hand that loop the client (and connections) of the kernel's loop, and
    # the private loop keeps its own connection from one run_sync to the next.
    server.fallback = stream_reply("anthropic_stream_text.sse")
    agent = Agent(provider=build("anthropic"))
    assert (await agent.run("first")).answer == "The sum is 5."
    assert agent.run_sync("second").answer == "The sum is 5."
    assert agent.run_sync("third").answer == "The sum is 5."
    assert (await agent.run("fourth")).answer == "The sum is 5."
    ports = [r.client_port for r in server.received]
    assert ports[0] == ports[3]  # the kernel loop's connection came back into use
    assert ports[1] == ports[2] != ports[0]  # the private loop's own connection, reused


async def test_concurrent_runs_share_one_bounded_pool(build: Any, server: WireServer) -> None:
    server.fallback = stream_reply("openai_stream_text.sse")
    provider = build("openai", max_connections=4, max_concurrency=24)
    agents = [Agent(provider=provider) for _ in range(24)]
    runs = await asyncio.gather(*(agent.run(f"question {n}") for n, agent in enumerate(agents)))
    assert {run.answer for run in runs} == {"The sum is 5."}
    assert len(server.received) == 24
    assert len({r.client_port for r in server.received}) <= 4


async def test_the_recording_round_trips_through_json_with_its_wire(build: Any, server: WireServer) -> None:
    script_round_trip(server, "anthropic")
    run = await Agent(provider=build("anthropic"), tools=[add_tool()]).run("Add 2+3 and 10+20.")
    data = json.loads(run.recording.model_dump_json())
    events = data["exchanges"][0]["wire"]["response"]["body"]
    assert [e["event"] for e in events][:2] == ["message_start", "content_block_start"]
    assert data["exchanges"][0]["response"]["usage"]["cache_write_tokens"] == 120


def test_run_sync_from_plain_code_reuses_its_threads_loop_and_closes_it_with_the_thread(server: WireServer) -> None:
    # run_sync from a script keeps one loop per thread: its connection serves the next run_sync,
    # and when the thread ends the loop closes it (a leaked socket would surface as an
    # unraisable ResourceWarning here).
    import gc
    import threading

    from footprint_lab.providers import ollama

    server.fallback = stream_reply("ollama_stream_text.ndjson")
    agent = Agent(provider=ollama("llama3.2", base_url=server.url))
    answers: list[str | None] = []
    script = threading.Thread(target=lambda: answers.extend(agent.run_sync("go").answer for _ in range(3)))
    script.start()
    script.join()
    gc.collect()
    assert answers == ["The sum is 5."] * 3
    assert len({r.client_port for r in server.received}) == 1
    assert agent.run_sync("again").answer == "The sum is 5."  # this thread's loop opens its own
    assert len({r.client_port for r in server.received}) == 2


#: Each wire's whole (non-streamed) reply asking for the billing skill.
READ_SKILL_REPLY = {
    "openai": {"id": "chatcmpl-1", "object": "chat.completion", "model": MODELS["openai"], "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_rs1", "type": "function",
             "function": {"name": "read_skill", "arguments": "{\"skill\": \"billing\"}"}}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 9}},
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "model": MODELS["anthropic"],
                  "content": [{"type": "tool_use", "id": "toolu_rs1", "name": "read_skill",
                               "input": {"skill": "billing"}}],
                  "stop_reason": "tool_use", "usage": {"input_tokens": 50, "output_tokens": 9}},
    "ollama": {"model": MODELS["ollama"], "done": True, "done_reason": "stop", "prompt_eval_count": 50,
               "eval_count": 9, "message": {"role": "assistant", "content": "", "tool_calls": [
                   {"function": {"name": "read_skill", "arguments": {"skill": "billing"}}}]}},
}


def wire_slots(kind: str, body: dict[str, Any]) -> tuple[str, list[str], Any]:
    """The system text, the tool names and the last message, read from a request body in its own format."""
    if kind == "anthropic":
        return body.get("system", ""), [t["name"] for t in body.get("tools", [])], body["messages"][-1]
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    return system, [t["function"]["name"] for t in body.get("tools", [])], messages[-1]


@pytest.mark.parametrize("kind", KINDS)
async def test_each_slot_on_the_wire_is_exactly_its_recorded_pieces(build: Any, server: WireServer, kind: str) -> None:
    server.queue(Reply(body=READ_SKILL_REPLY[kind]), json_reply(f"{kind}_reply.json"))
    agent = Agent(provider=build(kind, stream=False), system="You are terse.", tools=[add_tool()], context=[
        define_steering(id="tone", prompt="Never guess."),
        define_fact(id="plan", data={"tier": "pro"}),
        define_fact(id="second", data="Look again.", active_when=lambda view: view.iteration > 1),
        define_fact(id="remind", data="Answer in English.", slot="messages", role="user"),
        define_skill(id="billing", description="Refunds and invoices", body="Refund playbook."),
    ])
    run = await agent.run("Refund my order.")
    recording = run.recording
    pieces = recording.context_pieces
    assert len(server.received) == len(recording.exchanges) == 2
    for exchange, sent in zip(recording.exchanges, server.received, strict=True):
        slots = recording.exchange_pieces(exchange)
        system, tools, last = wire_slots(kind, sent.body)
        assert system == exchange.system == "\n\n".join(pieces[i].content for i in slots["system"])
        assert tools == [pieces[i].detail.get("tool", pieces[i].source_id) for i in slots["tools"]]
        assert last == {"role": "user", "content": "Answer in English."}
        assert [pieces[i].content for i in slots["messages"]] == [
            turn_text(m) for m in recording.request_messages(exchange)]
        assert exchange.wire is not None and exchange.wire["request"]["body"] == sent.body
    first, second = (x.system for x in recording.exchanges)
    assert first == 'You are terse.\n\nNever guess.\n\n{"tier": "pro"}'
    assert second == first + "\n\nLook again.\n\nRefund playbook."


@pytest.mark.parametrize("kind", KINDS)
async def test_an_llm_call_with_context_sends_its_system_text_exactly(build: Any, server: WireServer,
                                                                     kind: str) -> None:
    server.queue(json_reply(f"{kind}_reply.json"))
    call = LLMCall(provider=build(kind, stream=False), system="Summarize.",
                   context=[define_fact(id="audience", data="The reader is a CFO.")])
    run = await call.run("Q3 was flat.")
    system, tools, last = wire_slots(kind, server.received[0].body)
    assert system == run.recording.exchanges[0].system == "Summarize.\n\nThe reader is a CFO."
    assert tools == [] and last == {"role": "user", "content": "Q3 was flat."}


async def test_credential_headers_given_by_hand_are_sent_but_never_recorded(build: Any, server: WireServer) -> None:
    gateway_key = "gw-SECRET-77aa88bb99cc"
    server.queue(Reply(status=401, body={"error": {"message": f"bad gateway key {gateway_key}", "type": "auth"}}),
                 json_reply("openai_reply.json"))
    headers = {"api-key": gateway_key, "X-Gateway-Token": gateway_key, "X-Team": "blue"}
    provider = build("openai", stream=False, headers=headers)
    agent = Agent(provider=provider)
    with pytest.raises(ProviderAuthError) as caught:
        await agent.run("first")
    assert agent.last_run is not None
    failed = agent.last_run.recording.model_dump_json()
    run = await agent.run("second")
    for received in server.received:  # sent every time ...
        assert received.headers["api-key"] == gateway_key and received.headers["x-team"] == "blue"
    recorded = run.recording.exchanges[0].wire
    assert recorded is not None
    assert recorded["request"]["headers"]["x-team"] == "blue"  # ... a plain header is recorded ...
    assert "bad gateway key" in json.dumps(caught.value.wire)  # the error body is kept for whoever looks ...
    for text in (run.recording.model_dump_json(), failed, json.dumps(caught.value.wire), str(caught.value),
                 repr(provider)):
        assert gateway_key not in text and SECRET not in text  # ... without any credential, even echoed back


@pytest.mark.parametrize("kind", KINDS)
async def test_the_last_call_after_the_budget_withholds_the_tools_on_every_wire(build: Any, server: WireServer,
                                                                               kind: str) -> None:
    server.queue(json_reply(FIXTURES[kind]["tools"]), json_reply(FIXTURES[kind]["reply"]))
    run = await Agent(provider=build(kind, stream=False), tools=[add_tool()], max_iterations=1).run("Add them.")
    assert run.answer == "Paris is the capital of France." and run.stopped_early["reason"] == "max_iterations"
    last = run.recording.exchanges[-1]
    assert last.tools_withheld is True and last.tools == []
    body = server.received[1].body
    assert [result for _, result in tool_results_sent(kind, body)] == ["5", "30"]
    if kind == "anthropic":
        # the Messages API refuses tool blocks in a request without tools: the tools used are named,
        # without their schemas, and the model may not call any of them
        assert body["tool_choice"] == {"type": "none"}
        [named] = body["tools"]
        assert (named["name"], named["input_schema"]) == ("add", {"type": "object", "properties": {}})
    else:
        assert "tools" not in body and "tool_choice" not in body
    assert last.wire is not None and last.wire["request"]["body"] == body

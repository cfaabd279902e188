"""Each wire format, over real sockets: plain replies, tool calls, streams, usage, the recorded exchange."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_cases import ADD_TOOL, FIXTURES, SECRET, make_request
from wire_server import Reply, WireServer, fixture_json, fixture_text, json_reply, sse_events, stream_reply

from footprint_lab.providers.types import LLMResponse, ToolCall, Usage

KINDS = ("openai", "anthropic", "ollama")

EXPECTED_USAGE = {
    ("openai", "reply"): Usage(21, 8),
    ("anthropic", "reply"): Usage(21, 9),
    ("ollama", "reply"): Usage(26, 8),
    ("openai", "tools"): Usage(80, 40, cache_read_tokens=64),
    ("anthropic", "tools"): Usage(40 + 300 + 1200, 75, cache_read_tokens=1200, cache_write_tokens=300),
    ("ollama", "tools"): Usage(122, 33),
    ("openai", "stream_text"): Usage(57, 5),
    ("anthropic", "stream_text"): Usage(25 + 1800, 6, cache_read_tokens=1800),
    ("ollama", "stream_text"): Usage(26, 6),
    ("openai", "stream_tools"): Usage(92, 48, cache_read_tokens=64),
    ("anthropic", "stream_tools"): Usage(472 + 120, 89, cache_write_tokens=120),
    ("ollama", "stream_tools"): Usage(122, 33),
}
TOOL_IDS = {
    ("openai", "tools"): ["call_Qa1", "call_Qb2"],
    ("anthropic", "tools"): ["toolu_01A09q90qw90lq917835lq9", "toolu_01B19r01rx01mr028946mr0"],
    ("ollama", "tools"): ["call_1_1", "call_1_2"],  # Ollama sends no ids: they are made unique per run
    ("openai", "stream_tools"): ["call_Sa1", "call_Sb2"],
    ("anthropic", "stream_tools"): ["toolu_01T1x1", "toolu_01T2y2"],
    ("ollama", "stream_tools"): ["call_1_1", "call_1_2"],
}


async def call(build: Any, server: WireServer, kind: str, scenario: str, *, tools: bool = False,
               **settings: Any) -> tuple[LLMResponse, list[str]]:
    name = FIXTURES[kind][scenario]
    streamed = scenario.startswith("stream")
    server.queue(stream_reply(name) if streamed else json_reply(name))
    provider = build(kind, stream=streamed, **settings)
    tokens: list[str] = []
    request = make_request(tools=[ADD_TOOL] if tools else [])
    return await provider.complete(request, tokens.append), tokens


@pytest.mark.parametrize("kind", KINDS)
async def test_a_plain_reply_is_read_whole(build: Any, server: WireServer, kind: str) -> None:
    reply, tokens = await call(build, server, kind, "reply")
    assert reply.content == "Paris is the capital of France."
    assert reply.tool_calls == []
    assert reply.stop_reason == "end_turn"
    assert reply.usage == EXPECTED_USAGE[kind, "reply"]
    assert reply.model == fixture_json(FIXTURES[kind]["reply"])["model"]
    assert tokens == []  # nothing streamed, so no token callbacks


@pytest.mark.parametrize("kind", KINDS)
async def test_a_streamed_reply_calls_on_token_per_delta_and_assembles(build: Any, server: WireServer,
                                                                       kind: str) -> None:
    reply, tokens = await call(build, server, kind, "stream_text")
    assert tokens == ["The", " sum", " is 5."]
    assert reply.content == "The sum is 5."
    assert reply.stop_reason == "end_turn"
    assert reply.usage == EXPECTED_USAGE[kind, "stream_text"]


@pytest.mark.parametrize("scenario", ["tools", "stream_tools"])
@pytest.mark.parametrize("kind", KINDS)
async def test_tool_calls_whole_or_streamed_are_assembled(build: Any, server: WireServer, kind: str,
                                                          scenario: str) -> None:
    reply, tokens = await call(build, server, kind, scenario, tools=True)
    ids = TOOL_IDS[kind, scenario]
    assert reply.tool_calls == [ToolCall(ids[0], "add", {"a": 2, "b": 3}), ToolCall(ids[1], "add", {"a": 10, "b": 20})]
    assert reply.stop_reason == "tool_use"
    assert reply.usage == EXPECTED_USAGE[kind, scenario]
    text = {"openai": None, "anthropic": "I'll add both pairs." if scenario == "tools" else "Adding both.",
            "ollama": None if scenario == "tools" else "Adding both."}[kind]
    assert reply.content == text
    assert "".join(tokens) == (text if scenario == "stream_tools" and text else "")


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    """One ``chat.completion.chunk`` server-sent event."""
    payload = {"id": "c", "object": "chat.completion.chunk", "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(payload)}\n\n"


async def test_openai_tool_call_deltas_are_joined_by_index_not_by_arrival(build: Any, server: WireServer) -> None:
    def piece(index: int, **function: str) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, "function": function}]}

    chunks = [
        openai_chunk({"tool_calls": [{"index": 0, "id": "call_A", "type": "function",
                                      "function": {"name": "add", "arguments": ""}}]}),
        openai_chunk({"tool_calls": [{"index": 1, "id": "call_B", "type": "function",
                                      "function": {"name": "add", "arguments": '{"a": 7'}}]}),
        openai_chunk(piece(0, arguments='{"a": 1, ')),
        openai_chunk(piece(1, arguments=', "b": 8}')),
        openai_chunk(piece(0, arguments='"b": 2}')),
        openai_chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
    ]
    server.queue(Reply(chunks=chunks, content_type="text/event-stream"))
    reply = await build("openai").complete(make_request(tools=[ADD_TOOL]))
    assert reply.tool_calls == [ToolCall("call_A", "add", {"a": 1, "b": 2}),
                                ToolCall("call_B", "add", {"a": 7, "b": 8})]


async def test_openai_streamed_tool_calls_without_ids_are_given_the_ids_a_whole_reply_gets(
    build: Any, server: WireServer,
) -> None:
    # issue 17 finding 8: a local of the same name shadowed the id helper, so this raised TypeError
    chunks = [
        openai_chunk({"tool_calls": [{"index": 0, "type": "function", "function": {"name": "add", "arguments": ""}}]}),
        openai_chunk({"tool_calls": [{"index": 1, "type": "function",
                                      "function": {"name": "add", "arguments": '{"a": 7, "b": 8}'}}]}),
        openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1, "b": 2}'}}]}),
        openai_chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
    ]
    whole = {"id": "c", "object": "chat.completion", "model": "m", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
            {"type": "function", "function": {"name": "add", "arguments": '{"a": 7, "b": 8}'}}]}}]}
    server.queue(Reply(chunks=chunks, content_type="text/event-stream"), Reply(body=whole))
    streamed = await build("openai").complete(make_request(tools=[ADD_TOOL]))
    read_whole = await build("openai", stream=False).complete(make_request(tools=[ADD_TOOL]))
    assert streamed.tool_calls == read_whole.tool_calls
    assert [call.id for call in streamed.tool_calls] == ["call_1_1", "call_1_2"]
    assert [call.args for call in streamed.tool_calls] == [{"a": 1, "b": 2}, {"a": 7, "b": 8}]


# -- what goes out on the wire ----------------------------------------------------------------
async def test_openai_request_shape(build: Any, server: WireServer) -> None:
    await call(build, server, "openai", "stream_text", tools=True, options={"temperature": 0})
    sent = server.received[0]
    assert sent.path == "/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.body["model"] == "gpt-4o-mini"
    assert sent.body["messages"] == [{"role": "system", "content": "Answer briefly."},
                                     {"role": "user", "content": "What is the capital of France?"}]
    assert sent.body["tools"] == [{"type": "function", "function": {
        "name": "add", "description": "Add two integers.", "parameters": ADD_TOOL["input_schema"]}}]
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["temperature"] == 0


async def test_anthropic_request_shape(build: Any, server: WireServer) -> None:
    await call(build, server, "anthropic", "reply", tools=True)
    sent = server.received[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == SECRET
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "claude-sonnet-4-5", "max_tokens": 4096, "system": "Answer briefly.",
        "messages": [{"role": "user", "content": "What is the capital of France?"}],
        "tools": [ADD_TOOL],
    }


async def test_ollama_request_shape_says_stream_false_and_nests_options(build: Any, server: WireServer) -> None:
    await call(build, server, "ollama", "reply", max_tokens=64, options={"num_ctx": 8192})
    sent = server.received[0]
    assert sent.path == "/api/chat"
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "llama3.2", "stream": False, "options": {"num_ctx": 8192, "num_predict": 64},
        "messages": [{"role": "system", "content": "Answer briefly."},
                     {"role": "user", "content": "What is the capital of France?"}],
    }


HISTORY = [
    {"role": "user", "content": "Add 2+3 and 10+20."},
    {"role": "assistant", "content": "Adding.", "tool_calls": [{"id": "t1", "name": "add", "args": {"a": 2, "b": 3}},
                                                              {"id": "t2", "name": "add", "args": {"a": 10, "b": 20}}]},
    {"role": "tool", "tool_call_id": "t1", "name": "add", "content": "5"},
    {"role": "tool", "tool_call_id": "t2", "name": "add", "content": "Error: overflow", "is_error": True},
]


async def test_openai_encodes_a_tool_round_as_tool_calls_and_tool_messages(build: Any, server: WireServer) -> None:
    server.queue(json_reply("openai_reply.json"))
    await build("openai", stream=False).complete(make_request(messages=HISTORY, system=""))
    assert server.received[0].body["messages"] == [
        {"role": "user", "content": "Add 2+3 and 10+20."},
        {"role": "assistant", "content": "Adding.", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}},
            {"id": "t2", "type": "function", "function": {"name": "add", "arguments": '{"a": 10, "b": 20}'}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "5"},
        {"role": "tool", "tool_call_id": "t2", "content": "Error: overflow"},
    ]


async def test_anthropic_merges_consecutive_tool_results_into_one_user_turn(build: Any, server: WireServer) -> None:
    server.queue(json_reply("anthropic_reply.json"))
    history = [*HISTORY, {"role": "user", "content": "Thanks."}]
    await build("anthropic", stream=False).complete(make_request(messages=history))
    assert server.received[0].body["messages"] == [
        {"role": "user", "content": "Add 2+3 and 10+20."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2, "b": 3}},
            {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 10, "b": 20}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "5"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "Error: overflow", "is_error": True}]},
        {"role": "user", "content": "Thanks."},
    ]


async def test_ollama_encodes_tool_calls_with_object_arguments(build: Any, server: WireServer) -> None:
    server.queue(json_reply("ollama_reply.json"))
    await build("ollama", stream=False).complete(make_request(messages=HISTORY, system=""))
    assert server.received[0].body["messages"] == [
        {"role": "user", "content": "Add 2+3 and 10+20."},
        {"role": "assistant", "content": "Adding.", "tool_calls": [
            {"function": {"name": "add", "arguments": {"a": 2, "b": 3}}},
            {"function": {"name": "add", "arguments": {"a": 10, "b": 20}}}]},
        {"role": "tool", "content": "5", "tool_name": "add"},
        {"role": "tool", "content": "Error: overflow", "tool_name": "add"},
    ]


# -- what is recorded ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
async def test_the_wire_record_is_the_request_as_sent_and_the_reply_as_received(build: Any, server: WireServer,
                                                                               kind: str) -> None:
    reply, _ = await call(build, server, kind, "reply")
    wire = reply.wire
    assert wire is not None
    sent = server.received[0]
    assert wire["request"]["body"] == sent.body
    assert wire["request"]["url"] == server.url + sent.path
    assert wire["response"]["status"] == 200
    assert wire["response"]["body"] == fixture_json(FIXTURES[kind]["reply"])
    assert wire["attempts"] == 1
    recorded_headers = {name.lower() for name in wire["request"]["headers"]}
    assert recorded_headers & {"authorization", "x-api-key"} == set()
    assert recorded_headers >= {"content-type", "user-agent"}
    assert SECRET not in json.dumps(wire)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_streamed_wire_record_keeps_every_event_in_order(build: Any, server: WireServer, kind: str) -> None:
    reply, _ = await call(build, server, kind, "stream_tools")
    events = sse_events(fixture_text(FIXTURES[kind]["stream_tools"]))
    assert reply.wire is not None
    recorded = reply.wire["response"]["body"]
    assert len(recorded) == len(events)
    first = recorded[0]
    if kind == "anthropic":
        assert first["event"] == "message_start" and first["data"]["type"] == "message_start"
    else:
        assert first["choices"][0]["delta"]["tool_calls"][0]["id"] == "call_Sa1"
        assert recorded[-1] == "[DONE]"


async def test_ollama_stream_record_keeps_every_line(build: Any, server: WireServer) -> None:
    reply, _ = await call(build, server, "ollama", "stream_text")
    assert reply.wire is not None
    assert [line["done"] for line in reply.wire["response"]["body"]] == [False, False, False, True]



async def test_an_openai_stream_ended_by_done_alone_is_refused_as_cut_not_taken_as_the_answer(
    build: Any, server: WireServer,
) -> None:
    # llama.cpp's Python server, interrupted by another request, ends the reply it cut with [DONE] alone
    from footprint_lab.providers.errors import ProviderResponseError

    server.queue(Reply(chunks=[openai_chunk({"role": "assistant"}), openai_chunk({"content": "The capital"}),
                               "data: [DONE]\n\n"], content_type="text/event-stream"))
    tokens: list[str] = []
    with pytest.raises(ProviderResponseError) as caught:
        await build("openai").complete(make_request(), tokens.append)
    error = caught.value
    assert error.retryable is True and "finish_reason" in error.missing and "cut short" in error.missing
    assert tokens == ["The capital"]  # what arrived reached the run; the error says it is not the whole reply
    assert error.wire is not None and error.wire["response"]["body"][-1] == "[DONE]"


@pytest.mark.parametrize("stream", [False, True])
async def test_token_counts_a_server_leaves_out_are_estimated_and_marked_so(build: Any, server: WireServer,
                                                                             stream: bool) -> None:
    text = "Paris is the capital of France."
    if stream:
        server.queue(Reply(chunks=[openai_chunk({"content": text}, "stop"), "data: [DONE]\n\n"],
                           content_type="text/event-stream"))
    else:
        server.queue(Reply(body={"id": "c", "object": "chat.completion", "model": "m", "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}))
    request = make_request(input_chars=40)
    reply = await build("openai", stream=stream).complete(request)
    assert reply.usage == Usage(input_tokens=10, output_tokens=8, estimated=True)
    server.queue(json_reply("openai_reply.json"))
    reported = await build("openai", stream=False).complete(request)
    assert reported.usage.estimated is False and reported.usage.output_tokens > 0


async def test_an_openai_stream_with_no_event_at_all_is_refused_naming_the_servers_log(
    build: Any, server: WireServer,
) -> None:
    # llama.cpp's Python server answers 200, then fails to stream a reply that may call a tool
    from footprint_lab.providers.errors import ProviderResponseError

    server.queue(Reply(chunks=[], content_type="text/event-stream"))
    with pytest.raises(ProviderResponseError) as caught:
        await build("openai").complete(make_request(tools=[ADD_TOOL]))
    error = caught.value
    assert error.retryable is False and "without sending one" in error.missing and len(server.received) == 1
    assert "log says why" in str(error) and "stream=False" in str(error)


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_a_reruns_own_seed_wins_over_a_seed_fixed_in_options(kind: str) -> None:
    from footprint_lab.providers import ollama, openai
    from footprint_lab.providers.types import LLMRequest

    build = openai if kind == "openai" else ollama
    provider = build("m", base_url="http://127.0.0.1:9/v1", api_key="k", options={"seed": 7, "temperature": 0.8})
    request = LLMRequest(model="", system="", messages=[{"role": "user", "content": "hi"}], tools=[], input_chars=2)
    body = provider.encode(request)
    sent = body if kind == "openai" else body["options"]
    assert sent["seed"] == 7 and sent["temperature"] == 0.8  # an unseeded call keeps the fixed seed
    request.seed = 3
    body = provider.encode(request)
    assert (body if kind == "openai" else body["options"])["seed"] == 3  # an explanation's rerun keeps its own

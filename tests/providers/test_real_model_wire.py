"""The OpenAI wire against a server nobody here wrote: llama.cpp's, on a real (tiny) model.

What a 135M-parameter model says is not the point, and no test depends on its wording:
the replies are greedy (temperature 0, a seed), short, and every assertion checks that what
footprint_lab recorded is what the server sent, and that each failure is named for what it is.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from real_model_kit import MODEL, N_CTX, ModelServers, free_port, start_server, stop_server

from footprint_lab import Agent, define_tool
from footprint_lab.providers import openai
from footprint_lab.providers.errors import ContextWindowError, ProviderConnectionError, ProviderResponseError
from footprint_lab.providers.types import LLMRequest

pytestmark = pytest.mark.real_model

GREEDY = {"temperature": 0, "seed": 7}
QUESTION = "What is the capital of France?"


def provider(url: str, **settings: Any) -> Any:
    settings.setdefault("options", GREEDY)
    settings.setdefault("max_tokens", 16)
    return openai(MODEL, base_url=url, timeout=120.0, **settings)


def request(text: str = QUESTION) -> LLMRequest:
    return LLMRequest(model="", system="Answer in one short sentence.", messages=[{"role": "user", "content": text}],
                      tools=[], input_chars=len(text))


async def test_a_whole_reply_is_recorded_as_the_server_sent_it(model_server: ModelServers) -> None:
    tokens: list[str] = []
    run = await Agent(provider=provider(model_server().url, stream=False), system="Answer briefly.").run(
        QUESTION, on_event=lambda e: tokens.append(e.payload["text"]) if e.type == "token" else None)
    exchange = run.recording.exchanges[0]
    assert exchange.wire is not None
    sent, received = exchange.wire["request"], exchange.wire["response"]
    assert received["status"] == 200 and sent["body"]["model"] == MODEL and "stream" not in sent["body"]
    body = received["body"]
    assert run.answer and run.answer == body["choices"][0]["message"]["content"]
    usage = exchange.response.usage
    assert not usage.estimated and (usage.input_tokens, usage.output_tokens) == (
        body["usage"]["prompt_tokens"], body["usage"]["completion_tokens"])
    assert 0 < usage.output_tokens <= 16 and usage.input_tokens > 0
    assert exchange.response.stop_reason == {"length": "max_tokens", "stop": "end_turn"}[body["choices"][0][
        "finish_reason"]]
    assert tokens == []  # a whole reply arrives at once


async def test_a_streamed_reply_reaches_the_run_chunk_by_chunk_and_is_recorded_whole(
    model_server: ModelServers,
) -> None:
    tokens: list[str] = []
    run = await Agent(provider=provider(model_server().url), system="Answer briefly.").run(
        QUESTION, on_event=lambda e: tokens.append(e.payload["text"]) if e.type == "token" else None)
    exchange = run.recording.exchanges[0]
    assert exchange.wire is not None
    events = exchange.wire["response"]["body"]
    assert events[-1] == "[DONE]" and all(isinstance(e, dict) for e in events[:-1])
    deltas = [c["delta"].get("content") or "" for e in events[:-1] for c in e["choices"]]
    assert run.answer and "".join(tokens) == "".join(deltas) == run.answer and len(tokens) > 1
    finish = [c["finish_reason"] for e in events[:-1] for c in e["choices"] if c.get("finish_reason")]
    assert len(finish) == 1 and exchange.response.stop_reason in ("max_tokens", "end_turn")
    # This server sends no token counts in a stream, asked or not: the recording says they are estimated.
    reported = [e["usage"] for e in events[:-1] if e.get("usage")]
    usage = exchange.response.usage
    assert usage.estimated is (not reported) and usage.output_tokens > 0
    assert exchange.wire["request"]["body"]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True])
async def test_logprobs_come_back_for_every_generated_token_with_the_alternatives_asked_for(
    model_server: ModelServers, stream: bool,
) -> None:
    reply = await provider(model_server().url, stream=stream, logprobs=5).complete(request())
    assert reply.logprobs and reply.content
    assert reply.wire is not None and reply.wire["request"]["body"]["top_logprobs"] == 5
    for choice in reply.logprobs:
        assert choice.logprob <= 0 and len(choice.top) == 5
        alternatives = [logprob for _, logprob in choice.top]
        assert alternatives == sorted(alternatives, reverse=True)
        # greedy decoding takes the likeliest token every time
        assert math.isclose(choice.logprob, alternatives[0], abs_tol=1e-6)
    if not stream:
        assert len(reply.logprobs) == reply.usage.output_tokens


@pytest.mark.parametrize("stream", [False, True])
async def test_a_conversation_over_the_window_is_refused_by_the_server_and_named_for_it(
    model_server: ModelServers, stream: bool,
) -> None:
    ran: list[str] = []
    lookup = define_tool(name="lookup", description="Look something up.", fn=lambda: ran.append("lookup") or "x",
                         input_schema={"type": "object", "properties": {}})
    tokens: list[str] = []
    agent = Agent(provider=provider(model_server().url, stream=stream), tools=[lookup])
    too_long = "word " * (N_CTX + 200)
    with pytest.raises(ContextWindowError if not stream else ProviderResponseError) as caught:
        await agent.run(too_long, on_event=lambda e: tokens.append(e.type) if e.type == "token" else None)
    error = caught.value
    assert error.retryable is False and "word word" not in str(error)  # the conversation is never quoted
    assert error.wire is not None and error.wire["attempts"] == 1  # not sent again: it would fail the same way
    if stream:
        # this server checks the window only once it has answered 200: the stream then ends empty
        assert isinstance(error, ProviderResponseError) and error.status == 200
        assert error.wire["response"]["body"] == [] and "stream=False" in str(error)
    else:
        assert isinstance(error, ContextWindowError) and (error.status, error.model) == (400, MODEL)
        assert error.wire["response"]["body"]["error"]["code"] == "context_length_exceeded"
    assert ran == [] and tokens == [] and agent.last_run is not None
    assert agent.last_run.recording.status == "failed" and agent.last_run.recording.exchanges == []
    # the server is none the worse: the next call is answered
    assert (await agent.run(QUESTION)).answer


async def test_a_provider_whose_server_went_away_says_nothing_answers_there(tmp_path: Any) -> None:
    server = start_server("stock", tmp_path)
    try:
        aimed = provider(server.url, max_tokens=2)
        assert (await aimed.complete(request())).content is not None
    finally:
        stop_server(server)
    with pytest.raises(ProviderConnectionError) as caught:
        await aimed.complete(request())
    error = caught.value
    assert (error.code, error.retryable, error.base_url) == ("ERR_PROVIDER_UNREACHABLE", True, server.url)
    nothing = openai(MODEL, base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    with pytest.raises(ProviderConnectionError):
        await Agent(provider=nothing).run(QUESTION)

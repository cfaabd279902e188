"""A JSON escape for a lone surrogate from a real wire is saved as U+FFFD (issue 17, finding 3)."""

from __future__ import annotations

from typing import Any

import pytest
from wire_server import Reply, WireServer

from footprint_lab import Agent

WHOLE = ('{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop",'
         '"message":{"role":"assistant","content":"na\\udcffve"}}]}')
CHUNK = ('data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
         '"delta":{"content":"caf\\udcff"},"finish_reason":"stop"}]}\n\n')


@pytest.mark.parametrize("stream", [False, True])
async def test_a_reply_escaping_a_lone_surrogate_is_recorded_in_a_form_that_saves(
    build: Any, server: WireServer, stream: bool,
) -> None:
    server.queue(Reply(chunks=[CHUNK, "data: [DONE]\n\n"], content_type="text/event-stream") if stream
                 else Reply(body=WHOLE))
    agent = Agent(provider=build("openai", stream=stream))
    live: list[str] = []
    run = await agent.run("hi", on_event=lambda event: live.append(event.model_dump_json()))
    recording = run.recording.model_dump_json()
    checkpoint = agent.checkpoint()
    assert checkpoint is not None
    for text in (recording, checkpoint.model_dump_json(), *live):
        text.encode("utf-8")  # what a file holds: raised before
    assert run.answer == ("caf\ufffd" if stream else "na\ufffdve")
    assert "\ufffd" in recording

"""A redaction policy over a real wire: the provider gets the real value, no record keeps it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from wire_server import WireServer, stream_reply

from footprint_lab import Agent, Redaction, define_tool

KINDS = ("openai", "anthropic", "ollama")
EXTENSION = {"openai": "sse", "anthropic": "sse", "ollama": "ndjson"}
TOKEN = "tok-" + "Zq81Lm27Pw44Xr90Kd"


@pytest.mark.parametrize("kind", KINDS)
async def test_a_covered_tool_result_is_sent_but_never_recorded(build: Any, server: WireServer, kind: str) -> None:
    server.queue(stream_reply(f"{kind}_stream_tools.{EXTENSION[kind]}"),
                 stream_reply(f"{kind}_stream_text.{EXTENSION[kind]}"))
    add = define_tool(
        name="add", description="Add two integers.",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        fn=lambda a, b: f"{a + b} (session {TOKEN})",
    )
    live: list[str] = []
    agent = Agent(provider=build(kind), tools=[add], redact=Redaction(patterns={"session": r"tok-[A-Za-z0-9]{12,}"}))
    run = await agent.run("Add 2+3 and 10+20.", on_event=lambda e: live.append(json.dumps(e.payload)))
    assert TOKEN in json.dumps(server.received[-1].body)  # the model was sent the real value
    recording = run.recording
    assert any(x.wire for x in recording.exchanges)  # the wire exchange is recorded...
    for text in (recording.model_dump_json(), run.events.to_json(), run.to_html(), "".join(live)):
        assert TOKEN not in text  # ...and covered like everything else
    assert "pattern:session" in recording.redaction["matched"]  # type: ignore[index]

"""What the model reads of a tool's result: structured values written as data, with their keys.

A user relies on this twice: the model reads a NamedTuple, a namespace or a read-only mapping the way it reads a
dict (named fields, not a bare list or a ``repr``), and a redaction policy masks a covered key inside it, which it
can only do when the key is written.
"""

from __future__ import annotations

import collections
import json
import types
from typing import Any, NamedTuple

import pytest

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.providers import mock


class Login(NamedTuple):
    user: str
    password: str


SECRET = "Kestrel-4471-Opal"
SHAPES: dict[str, Any] = {
    "NamedTuple": lambda: Login("ana", SECRET),
    "SimpleNamespace": lambda: types.SimpleNamespace(user="ana", password=SECRET),
    "MappingProxyType": lambda: types.MappingProxyType({"user": "ana", "password": SECRET}),
    "OrderedDict": lambda: collections.OrderedDict(user="ana", password=SECRET),
}


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_a_keyed_result_is_written_with_its_keys_and_its_covered_key_masked(shape: str) -> None:
    """A NamedTuple was written as ``["ana", "Kestrel-..."]`` and a namespace or mapping proxy by its ``repr``: the key
    was lost, and the password showed in the recording, its views and its events under ``keys=["password"]``."""
    tool = define_tool(name="get", description="Get the login.", fn=SHAPES[shape])
    events: list[Any] = []
    agent = Agent(provider=mock(replies=[{"tool": "get", "args": {}}, "Done."]), tools=[tool],
                  redact=Redaction(keys=["password"]))
    run = await agent.run("Log in.", on_event=events.append)
    result = next(piece.content for piece in run.recording.context_pieces if piece.source_kind == "tool_result")
    assert json.loads(result) == {"user": "ana", "password": "[redacted:password]"}
    shown = run.recording.model_dump_json() + run.context().to_string() + run.to_html() + repr(events)
    assert SECRET not in shown

    plain = Agent(provider=mock(replies=[{"tool": "get", "args": {}}, "Done."]), tools=[tool])
    read = await plain.run("Log in.")   # without a policy the model reads the value, keyed
    sent = next(piece.content for piece in read.recording.context_pieces if piece.source_kind == "tool_result")
    assert json.loads(sent) == {"user": "ana", "password": SECRET}

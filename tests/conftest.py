"""Shared test helpers."""

from __future__ import annotations

import pytest

from footprint_lab import define_tool


@pytest.fixture
def noop_tool():
    return define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")


@pytest.fixture
def compose():
    """Mount an agent as the chosen branch of a ``Conditional`` (a routing decision, then the answer).

    Returns an async function ``build(agent, message) -> (recording, member_recording, mount_step)``.
    """
    from footprint_lab import Agent, Conditional
    from footprint_lab.providers import mock

    async def build(agent, message):
        flow = Conditional([("member", lambda text: True, agent)],
                           otherwise=("other", Agent(provider=mock(reply="unused"))))
        recording = (await flow.run(message)).recording
        member = recording.children[0]
        return recording, member, member.path

    return build

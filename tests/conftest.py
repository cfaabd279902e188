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
    """Mount an agent as the one member of a hand-built composition (a routing step, then the answer).

    Returns an async function ``build(agent, message) -> (recording, member_run, mount_step)``.
    """
    from footprint_lab.core.runner import Mount
    from footprint_lab.engine import Recorder
    from footprint_lab.engine.recording import build_recording

    async def build(agent, message):
        parent = Recorder("run-composed")
        parent.begin("seed")
        parent.write(("input", "message"), "set", message)
        parent.end()
        mount = parent.begin("route")
        read = parent.read(("input", "message"))
        parent.decide("route", [("member", {"message": read}, True)], "member")
        member = await agent._execute({"message": read}, Mount(run_id="run-composed", path=mount))
        parent.write(("output", "member"), "set", member.answer)
        parent.end()
        parent.begin("final")
        parent.write(("answer",), "set", parent.read(("output", "member")))
        parent.end()
        recording = build_recording(parent, runner={"kind": "conditional"}, status="finished",
                                    input={"message": message}, answer=member.answer, ended_ns=parent.started_ns,
                                    children=[member.recording])
        return recording, member, mount

    return build

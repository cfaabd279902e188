"""A value a later member teaches the policy is swept from what earlier members recorded (issue 17).

Member one answers with a password in plain text (nothing covers it yet); member two puts it under
a covered key. Every member's recording, the composition's recording, HTML views, tree, explain
text and exported notebook must hold no trace of it, whether read at once or after the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from footprint_lab import Agent, Parallel, Redaction, Sequence, define_tool
from footprint_lab.notebook import export
from footprint_lab.providers import mock

PASSWORD = "velvet-otter-93"


def teller(stream: bool = False) -> Agent:
    return Agent(provider=mock(reply=f"The vault password is {PASSWORD}.", stream=stream), name="teller")


def locksmith() -> Agent:
    unlock = define_tool(name="unlock", description="Unlock the vault.",
                         input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                         fn=lambda password: {"opened": True, "password": password})
    replies = [{"tool": "unlock", "args": {"password": PASSWORD}}, "The vault is open."]
    return Agent(provider=mock(replies=replies), tools=[unlock], redact=Redaction(keys=["password"]),
                 name="locksmith")


def surfaces(run: Any, tmp_path: Path) -> dict[str, str]:
    recording = run.recording
    out = {
        "recording": recording.model_dump_json(),
        "html": run.to_html(),
        "events": run.events.to_json(),
        "tree": run.tree(steps=True).to_frame().to_json(),
        "backtrack": str(run.backtrack()),
        "suspects": run.suspects().to_json(),
        "notebook": export(run, tmp_path / "shared.ipynb", title="Vault").read_text(),
    }
    stack = list(recording.children)
    while stack:
        child = stack.pop()
        stack.extend(child.children)
        out[f"member {child.meta.get('member')}"] = child.model_dump_json()
        out[f"member {child.meta.get('member')} pieces"] = json.dumps([p.content for p in child.context_pieces])
    return out


def composed(shape: str, stream: bool) -> Any:
    if shape == "sequence":
        return Sequence({"teller": teller(stream), "locksmith": locksmith(), "again": teller(stream)})
    if shape == "parallel":
        return Parallel({"teller": teller(stream), "locksmith": locksmith()},
                        merge=lambda answers: " / ".join(answers.values()))
    inner = Sequence({"teller": teller(stream)})
    return Sequence({"inner": inner, "locksmith": locksmith()})


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("shape", ["sequence", "parallel", "nested"])
async def test_a_value_a_later_member_covers_leaves_no_trace_of_an_earlier_one(
    shape: str, stream: bool, tmp_path: Path,
) -> None:
    run = await composed(shape, stream).run("Open the vault.")
    assert run.status == "finished"
    leaked = [where for where, text in surfaces(run, tmp_path).items() if PASSWORD in text]
    assert leaked == []
    assert "[redacted:password]" in run.recording.model_dump_json()


async def test_a_member_covered_by_a_policy_the_composition_lacks_shares_what_it_learns(tmp_path: Path) -> None:
    # the locksmith's policy is set after the composition was built, so the composition's own does not cover it:
    # it runs under a scrubber of its own, which must still learn into the run's one set of values
    smith = Agent(provider=mock(replies=[{"tool": "unlock", "args": {"pin": PASSWORD}}, "open"]),
                  tools=[define_tool(name="unlock", description="Unlock.",
                                     input_schema={"type": "object", "properties": {"pin": {"type": "string"}}},
                                     fn=lambda pin: "ok")], name="locksmith")
    first = teller()
    first.redact = Redaction(keys=["password"])
    flow = Sequence({"teller": first, "locksmith": smith, "again": teller()})
    smith.redact = Redaction(keys=["pin"])
    assert flow.redact is not None and flow.redact.keys == ("password",)
    run = await flow.run("Open the vault.")
    leaked = [where for where, text in surfaces(run, tmp_path).items() if PASSWORD in text]
    assert leaked == []

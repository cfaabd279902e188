"""Properties of a paused composition's checkpoint: exact JSON round trips, and tampering that is refused
by name before anything runs, or harmless."""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

from flow_kit import approver, nested_flow
from hypothesis import given
from hypothesis import strategies as st
from test_checkpoint_properties import PROPERTY, SENTINEL, mutate

from footprint_lab import Identity, Parallel
from footprint_lab.base.refusal import Refusal
from footprint_lab.core.member_run import open_run_count
from footprint_lab.flow import FlowCheckpoint


def side_by_side() -> Parallel:
    return Parallel({"left": approver(name="left"), "right": approver(name="right")},
                    merge=lambda a: a["left"] + " / " + a["right"])


BUILDERS = {"nested": nested_flow, "side_by_side": side_by_side}


@cache
def base_checkpoints() -> dict[str, dict[str, Any]]:
    nested = asyncio.run(nested_flow().run("refund please", identity=Identity(principal="ana")))
    both = asyncio.run(side_by_side().run("go"))
    return {"nested": nested.checkpoint.model_dump(mode="json"),
            "side_by_side": both.checkpoint.model_dump(mode="json")}


@PROPERTY
@given(message=st.text(min_size=1, max_size=30).filter(str.strip), answer=st.text(max_size=30),
       who=st.none() | st.builds(Identity, principal=st.text(min_size=1, max_size=8).filter(str.strip)))
def test_a_flow_checkpoint_survives_json_round_trips_byte_for_byte(message: str, answer: str,
                                                                   who: Identity | None) -> None:
    paused = asyncio.run(nested_flow().run(message, identity=who))
    text = paused.checkpoint.model_dump_json()
    again = FlowCheckpoint.model_validate_json(text)
    assert again == paused.checkpoint and again.model_dump_json() == text
    done = asyncio.run(nested_flow().resume(text, answer))
    assert done.status == "finished" and done.answer.endswith(f" | approved: {answer}")


@PROPERTY
@given(data=st.data(), base=st.sampled_from(sorted(BUILDERS)))
def test_a_mutated_flow_checkpoint_is_refused_by_name_or_resumes(data: Any, base: str) -> None:
    mutated = mutate(base_checkpoints()[base], data.draw)
    events: list[Any] = []
    try:
        run = asyncio.run(BUILDERS[base]().resume(mutated, "yes", on_event=events.append))
    except Refusal as refused:
        assert refused.code.startswith("ERR_")
        assert SENTINEL not in str(refused)
        assert open_run_count() == 0
        assert events == [], type(refused)  # refused before anything ran
        return
    assert open_run_count() == 0
    assert run.status in ("finished", "paused")
    if run.status == "finished":
        assert "approved: yes" in (run.answer or "")

"""``Run.timeline()``: a run's steps as a waterfall, each bar at its step's start and as long as it took."""

from __future__ import annotations

import re
from typing import Any

import pytest
from markup_kit import assert_inert, parse

from footprint_lab import Agent, Redaction, Run, define_tool
from footprint_lab.core.timeline import TIMELINE_COLUMNS
from footprint_lab.examples.pipelines import refund_pipeline, review_panel
from footprint_lab.examples.support_desk import build_desk, support_eval
from footprint_lab.lab.views.timeline import TIMELINE_ROWS
from footprint_lab.providers import mock
from footprint_lab.record.recording import Event, LLMExchange, Recording, RunnerInfo, Step

HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)" x="</details></td></table>'


def desk_run() -> Run:
    return build_desk().run_sync(support_eval(3).inputs[0])


def bars(html: str) -> dict[str, tuple[float, float]]:
    """Each row's bar, by step id: (left, width) in percent of the scale, as the inline style places it."""
    placed = {}
    for step, left, width in re.findall(
            r'<tr data-fl-step="([^"]+)"[^>]*>.*?margin-left:([\d.]+)%;width:([\d.]+)%', html, flags=re.S):
        placed[step] = (float(left), float(width))
    return placed


def row_of(html: str, step: str) -> str:
    found = re.search(rf'<tr data-fl-step="{re.escape(step)}"[^>]*>.*?</tr>', html, flags=re.S)
    assert found is not None, step
    return found.group()


def cells(html: str, step: str) -> list[str]:
    """The texts a step's row shows, in order (what a reader of the row finds, cell by cell)."""
    return [text.strip(" ↳") for text in parse(row_of(html, step)).text if text.strip(" ↳")]


def test_each_step_is_a_row_at_its_recorded_start_and_duration_in_time_order() -> None:
    run = desk_run()
    frame = run.timeline().to_frame()
    steps = run.recording.steps
    assert list(frame.columns) == TIMELINE_COLUMNS
    assert frame["step"].tolist() == [step.step_id for step in steps]
    assert frame["start_ms"].tolist() == [round(step.started_ms, 3) for step in steps]
    assert frame["duration_ms"].tolist() == [round(step.duration_ms, 3) for step in steps]
    assert frame["start_ms"].is_monotonic_increasing
    assert frame["kind"].tolist() == ["step", "step", "llm", "tool", "step", "llm", "step"]
    assert frame.loc[frame["kind"] == "tool", "label"].tolist() == ["lookup_order"]
    assert frame.loc[frame["kind"] == "llm", "label"].unique().tolist() == ["mock-model"]
    assert not frame.isna().any().any()
    assert str(frame["depth"].dtype) == "int64" and str(frame["start_ms"].dtype) == "float64"


def test_a_bar_is_placed_at_its_start_and_sized_by_its_duration_on_the_runs_scale() -> None:
    run = desk_run()
    timeline = run.timeline()
    html = timeline.to_html()
    placed = bars(html)
    span = timeline.span_ms
    assert span >= run.recording.duration_ms
    for row in timeline.rows:
        left, width = placed[row.step]
        assert left == pytest.approx(100 * row.start_ms / span, abs=0.01)
        assert width == pytest.approx(100 * row.duration_ms / span, abs=0.01)
    call = timeline.rows[2]
    assert cells(html, "call-llm#3") == ["call-llm#3", "mock-model", "LLM call", "✓ ok", f"{call.start_ms:.3f}",
                                         f"{call.duration_ms:.3f}"]
    assert cells(html, "tool#4")[:4] == ["tool#4", "lookup_order", "tool call", "✓ ok"]
    assert "in ms from the run's start" in parse(html).words()  # the legend says what a position means


def test_a_compositions_members_follow_the_step_that_ran_them_one_level_deeper() -> None:
    run = refund_pipeline().run_sync("Please refund order A-1001.")
    root = run.recording
    frame = run.timeline().to_frame()
    steps = frame["step"].tolist()
    for child in root.children:
        mount = steps.index(child.path)
        own = [step.step_id for step in child.steps]
        assert steps[mount + 1: mount + 1 + len(own)] == own
        assert frame.loc[mount, "kind"] == "member" and frame.loc[mount, "label"] == child.runner.name
        rows = frame[frame["member"] == child.path]
        assert set(rows["depth"]) == {1}
        offset = (child.started_at - root.started_at) * 1000
        assert rows["start_ms"].tolist() == [round(offset + step.started_ms, 3) for step in child.steps]
    html = run.timeline().to_html()
    assert "↳ " in parse(html).words() and "member's own start" in html


def test_parallel_members_both_sit_inside_the_runs_span() -> None:
    run = review_panel().run_sync("Refund order A-1001?")
    timeline = run.timeline()
    frame = timeline.to_frame()
    assert sorted(set(frame["member"])) == ["", "merge#4", "parallel-branch#2", "parallel-branch#3"]
    assert (frame["start_ms"] >= 0).all() and (frame["start_ms"] + frame["duration_ms"] <= timeline.span_ms).all()
    assert frame.loc[frame["step"] == "merge#4/call-llm#3", "kind"].item() == "llm"


def test_a_failed_tool_step_is_marked_in_words_and_in_red() -> None:
    def broken(order_id: str) -> str:
        raise RuntimeError("the order system is down")

    tool = define_tool(name="lookup", description="Look an order up.", fn=broken,
                       input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})
    run = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order_id": "A-1"}}, "Sorry."]),
                tools=[tool]).run_sync("Where is A-1?")
    timeline = run.timeline()
    failed = [row for row in timeline.rows if row.failed]
    assert [(row.step, row.kind, row.status) for row in failed] == [("tool#4", "tool", "tool_error")]
    html = timeline.to_html()
    row = row_of(html, "tool#4")
    assert 'class="fl-failed"' in row and "✗ tool_error" in cells(html, "tool#4")
    assert "outline:2px solid var(--fl-red" in row
    assert "1 failed" in parse(html).words()


def test_a_model_call_that_failed_is_an_llm_call_marked_failed() -> None:
    agent = build_desk()
    with pytest.raises(TimeoutError):
        agent.run_sync("Please refund order A-5: placed by phone.")  # the desk's model times out on these
    assert agent.last_run is not None and agent.last_run.status == "failed"
    timeline = agent.last_run.timeline()
    last = timeline.rows[-1]
    assert (last.step, last.kind, last.status, last.failed) == ("call-llm#3", "llm", "error", True)
    assert "✗ error" in cells(timeline.to_html(), "call-llm#3")


def many_steps(count: int) -> Recording:
    recording = desk_run().recording
    steps = [Step(step_id=f"tool#{n}", stage="tool", iteration=n, status="ok", started_ms=float(n),
                  duration_ms=0.5) for n in range(1, count + 1)]
    return recording.model_copy(update={"steps": steps, "duration_ms": float(count + 1), "exchanges": [],
                                        "children": []})


def test_a_run_of_thousands_of_steps_draws_the_first_ones_and_counts_the_rest() -> None:
    run = Run.from_recording(many_steps(5000))
    timeline = run.timeline()
    assert len(timeline.to_frame()) == 5000
    html = timeline.to_html()
    assert html.count("<tr data-fl-step=") == TIMELINE_ROWS
    assert f"… and {5000 - TIMELINE_ROWS:,} more steps not drawn" in parse(html).words()
    assert len(html) < 400_000


def hostile_recording() -> Recording:
    recording = desk_run().recording
    steps = [step.model_copy(update={"step_id": f"{HOSTILE}#{n}", "stage": HOSTILE, "status": HOSTILE})
             for n, step in enumerate(recording.steps, start=1)]
    exchange: LLMExchange = recording.exchanges[0].model_copy(update={"step_id": steps[2].step_id, "model": HOSTILE})
    event = Event(seq=999, run_id=recording.run_id, type="tool_start", step_id=steps[3].step_id,
                  payload={"tool": HOSTILE})
    return recording.model_copy(update={"steps": steps, "exchanges": [exchange], "events": [event],
                                        "runner": RunnerInfo(kind=HOSTILE, name=HOSTILE), "run_id": HOSTILE})


def test_every_value_a_timeline_draws_is_escaped_attributes_included() -> None:
    timeline = Run.from_recording(hostile_recording()).timeline()
    html = timeline.to_html()
    parsed = assert_inert(html)
    assert "<script" not in html and '" onmouseover=' not in html
    opened = sum(tag == "table" for tag, _ in parsed.tags)
    assert opened == 1 and html.count("</table>") == 1  # a value's "</table>" closed nothing
    assert HOSTILE in parsed.words().replace("↳ ", "")  # and it reads as typed
    assert {row.kind for row in timeline.rows} >= {"llm", "tool"}


def test_a_secret_under_a_redaction_policy_never_reaches_the_timeline() -> None:
    secret = "tok-" + "Zq81Lm27Pw44Xr90Kd"

    def lookup(order_id: str) -> str:
        return f"shipped (session {secret})"

    tool = define_tool(name="lookup", description="Look an order up.", fn=lookup,
                       input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})
    agent = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order_id": secret}}, f"Done {secret}"]),
                  tools=[tool], redact=Redaction(patterns={"session": r"tok-[A-Za-z0-9]{12,}"}))
    run = agent.run_sync(f"Where is {secret}?")
    timeline = run.timeline()
    shown: list[Any] = [timeline.to_html(), str(timeline), repr(timeline), timeline.to_frame().to_csv(),
                        timeline._repr_mimebundle_()]
    assert all(secret not in str(text) for text in shown)


def test_a_timeline_displays_itself_with_no_javascript() -> None:
    timeline = desk_run().timeline()
    data = timeline._repr_mimebundle_()
    assert set(data) == {"text/plain", "text/html"}
    unscoped = [re.sub(r"fl[0-9a-f]{6}", "fl", html) for html in (data["text/html"], timeline._repr_html_())]
    assert unscoped[0] == unscoped[1]
    assert "<script" not in data["text/html"] and "call-llm#3 [llm] ok" in data["text/plain"]

"""Two runs compared piece by piece (compare_runs), and which difference brings the good answer back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footprint_lab import Agent, LLMCall, Sequence
from footprint_lab.context import define_fact
from footprint_lab.errors import ExplainConfigError, NothingToLocalizeError, SameAnswerError
from footprint_lab.examples.scenarios import APPROVED, DECLINED, OVERRIDE, REFUND_REQUEST, lookup_order, refund_model
from footprint_lab.explain import compare_runs, explain_difference
from footprint_lab.explain.compare import Label
from footprint_lab.otel import from_spans, to_spans
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.record.recording_door import load_recording

HOSTILE = '<img src=x onerror="alert(1)"> & \'quotes\''
REFUSAL = "No refunds for this customer, ever."


def refunds_model(request: LLMRequest) -> Any:
    """The refund model, which declines once it has looked the order up when a house rule says so."""
    if REFUSAL in request.system and any(m.get("role") == "tool" for m in request.messages):
        return DECLINED
    return refund_model(request)


def agent(facts: dict[str, str], *, skipped: tuple[str, ...] = (), tools: bool = True) -> Agent:
    context = [define_fact(id=name, data=text, active_when=(lambda state: False) if name in skipped else None)
               for name, text in facts.items()]
    return Agent(provider=mock(respond=refunds_model), system="You decide refunds.",
                 tools=[lookup_order] if tools else [], context=context, name="refunds")


GOOD = {"customer": "Dana Reyes, plan Plus", "vip-override": OVERRIDE, "note-1": "first note"}


async def pair(bad_facts: dict[str, str], **bad: Any) -> tuple[Any, Any]:
    good = await agent(GOOD).run(REFUND_REQUEST)
    return good, await agent(bad_facts, **bad).run(REFUND_REQUEST)


def changes(found: Any) -> set[tuple[str, str]]:
    return {(row["change"], row["what"]) for row in found.rows() if row.get("call_b") == found.calls[-1].step_b}


async def test_each_piece_added_removed_or_changed_is_named_with_a_word_diff_and_where_it_came_from():
    good, bad = await pair({"customer": "Dana Reyes, plan Basic", "vip-override": OVERRIDE, "note-2": "second note"},
                           skipped=("vip-override",))
    found = compare_runs(good, bad)
    assert changes(found) >= {("changed", "fact 'customer'"), ("removed", "fact 'vip-override'"),
                              ("removed", "fact 'note-1'"), ("added", "fact 'note-2'"), ("reply", "the call's reply")}
    by_what = {c.what: c for c in found.calls[-1].pieces}
    assert by_what["fact 'customer'"].words == [("=", "Dana Reyes, plan "), ("-", "Plus"), ("+", "Basic")]
    # where it came from: the other run's record of it (skipped by its trigger), or nothing at all
    assert "in b: skipped" in by_what["fact 'vip-override'"].why
    assert "in b: not declared" in by_what["fact 'note-1'"].why and "in a: not declared" in by_what["fact 'note-2'"].why
    frame = found.to_frame()
    answer = frame[frame.change == "answer"].iloc[0]
    assert (answer.a, answer.b) == (APPROVED, DECLINED)
    assert frame[frame.what == "fact 'customer'"]["diff"].iloc[0] == "Dana Reyes, plan [-Plus-]{+Basic+}"
    assert (frame.tokens_a > 0).all() and found.tokens[0] > found.tokens[1]  # the good run was sent more
    assert compare_runs(good, good).differing == [] and compare_runs(good, good).to_frame().empty


async def test_calls_align_by_step_then_by_content_and_a_call_with_no_partner_is_its_own_difference():
    with_tool = await agent(GOOD).run(REFUND_REQUEST)
    without_tool = await agent(GOOD, tools=False).run(REFUND_REQUEST)  # one call, no lookup first
    found = compare_runs(with_tool, without_tool)
    assert [(p.step_a is not None, p.step_b is not None) for p in found.calls] == [(True, True), (True, False)]
    first = found.calls[0]
    assert first.tool_calls_a == ['lookup_order({"order_id": "A-1001"})'] and first.tool_calls_b == []
    assert ("removed", "tool 'lookup_order'") in {(c.change, c.what) for c in first.pieces}
    assert "call only in a" in set(found.to_frame().change)


def _loaded(run: Any) -> Any:
    return load_recording(json.dumps(run.recording.model_dump(mode="json")))


def _imported(run: Any) -> Any:
    return from_spans(to_spans(run))[0]


@pytest.mark.parametrize("kind", [_loaded, _imported], ids=["loaded", "imported"])
async def test_loaded_and_imported_runs_compare_as_the_native_ones_do(kind):
    good, bad = await pair({"customer": "Dana Reyes, plan Basic", "note-2": "second note"})
    native = compare_runs(good, bad)
    found = compare_runs(kind(good), kind(bad))
    assert changes(found) == changes(native)
    assert found.answer_a == APPROVED and found.answer_b == DECLINED


async def test_members_of_a_composition_are_compared_by_their_path():
    def flow(reply: str) -> Sequence:
        return Sequence({"triage": LLMCall(provider=mock(reply="refund")),
                         "decide": LLMCall(provider=mock(reply=reply), system=f"Policy: {reply}")}, name="support")

    found = compare_runs(await flow("approve").run(REFUND_REQUEST), await flow("decline").run(REFUND_REQUEST))
    frame = found.to_frame()
    assert set(frame[frame.change == "reply"].member) == {"decide"}
    assert set(frame.member) - {""} == {"decide"}  # the triage member was given and said the same


@pytest.mark.parametrize(("bad_facts", "cause"), [
    ({**GOOD, "vip-override": "The customer holds no override."}, "restore fact 'vip-override'"),
    ({"customer": GOOD["customer"], "note-1": "first note"}, "put back fact 'vip-override'"),
    ({**GOOD, "house-rule": REFUSAL}, "take out fact 'house-rule'"),
], ids=["changed", "removed", "added"])
async def test_a_replay_confirms_the_one_difference_that_brings_the_good_answer_back(bad_facts, cause):
    noise = {f"extra-{k}": f"extra note {k}" for k in range(5)}
    good, bad = await pair({**bad_facts, **noise, "note-1": "another note"})
    found = await explain_difference(good, bad, replay=mock(respond=refunds_model), progress=False)
    assert found.confirmed == [cause]
    others = [d for d in found.tested if d.name != cause]
    assert len(others) >= 6 and {d.verdict for d in others} == {"not_confirmed"}
    assert found.reruns <= found.budget
    frame = found.to_frame()
    assert frame.set_index("difference").verdict[cause] == "confirmed"
    assert "Difference explained by replay" in found.summary() and cause in str(found)


async def test_a_difference_that_only_breaks_the_bad_answer_is_not_what_changed_it():
    """A rerun flips when it gives the GOOD answer: a change to a third answer is counted apart, never a flip."""

    def model(request: LLMRequest) -> Any:  # with no override, it declines only when the house rule says so
        answer = refunds_model(request)
        if answer == DECLINED and "garble" not in request.system:
            return "I cannot decide."
        return answer

    good = await Agent(provider=mock(respond=model), system="You decide refunds.", tools=[lookup_order],
                       context=[define_fact(id="vip-override", data=OVERRIDE)]).run(REFUND_REQUEST)
    bad = await Agent(provider=mock(respond=model), system="You decide refunds.", tools=[lookup_order],
                      context=[define_fact(id="vip-override", data="No override."),
                               define_fact(id="garbler", data="garble")]).run(REFUND_REQUEST)
    found = await explain_difference(good, bad, replay=mock(respond=model), progress=False)
    by_name = {d.name: d for d in found.tested}
    assert found.confirmed == ["restore fact 'vip-override'"]
    garbler = by_name["take out fact 'garbler'"]  # taking it out changes the bad answer, to a third one
    assert garbler.verdict == "not_confirmed" and garbler.flips == 0 and garbler.other == garbler.reruns > 0


async def test_a_rerun_forces_in_what_the_bad_run_skipped_and_names_what_it_cannot_carry():
    bad_facts = {**GOOD, "customer": "Dana Reyes, plan Basic"}
    good, bad = await pair(bad_facts, skipped=("vip-override",))
    bad_agent = agent(bad_facts, skipped=("vip-override",))
    found = await explain_difference(good, bad, rerun=bad_agent, progress=False)
    assert found.confirmed == ["put back fact 'vip-override'"]
    untested = dict(found.untested)
    assert "a rerun cannot restore another run's text" in untested["restore fact 'customer'"]
    assert "not tested (named below)" in found.summary()


async def test_an_earlier_calls_difference_is_named_untested_by_a_replay():
    good = await agent(GOOD).run(REFUND_REQUEST)
    bad = await agent({**GOOD, "vip-override": "No override."}).run(REFUND_REQUEST)
    found = await explain_difference(good, bad, replay=mock(respond=refunds_model), progress=False)
    assert found.confirmed == ["restore fact 'vip-override'"]
    assert not found.untested  # the same difference in the earlier call is the one tested in the answering call


async def test_refusals_come_before_anything_runs():
    good, bad = await pair({**GOOD, "vip-override": "No override."})
    calls: list[Any] = []

    def watched(request: LLMRequest) -> Any:
        calls.append(request)
        return refunds_model(request)

    with pytest.raises(SameAnswerError) as same:
        await explain_difference(good, good, replay=mock(respond=watched))
    assert same.value.code == "ERR_SAME_ANSWER" and APPROVED not in str(same.value)
    with pytest.raises(SameAnswerError):  # the comparator decides what "the same" is
        await explain_difference(good, bad, replay=mock(respond=watched), comparator=lambda a, b: False)
    with pytest.raises(ExplainConfigError):
        await explain_difference(good, bad, replay=mock(respond=watched), rerun=agent(GOOD))
    with pytest.raises(ExplainConfigError):
        await explain_difference(good, bad)  # neither way to carry a difference in
    with pytest.raises(ExplainConfigError):
        await explain_difference(good, "not a run", replay=mock(respond=watched))
    assert calls == []
    # a label comparator tells the answers apart by their first word
    found = await explain_difference(good, bad, replay=mock(respond=watched),
                                     comparator=Label(["APPROVED", "DECLINED"]), progress=False)
    assert found.confirmed == ["restore fact 'vip-override'"]


async def test_a_bad_run_with_no_answer_is_refused():
    good = await agent(GOOD).run(REFUND_REQUEST)
    bad = good.recording.model_copy(update={"answer": None, "status": "failed"})
    with pytest.raises(NothingToLocalizeError):
        await explain_difference(good, bad, replay=mock(respond=refunds_model))


async def test_the_views_escape_every_recorded_text_and_stay_small():
    good, bad = await pair({**GOOD, "vip-override": HOSTILE, "note-1": HOSTILE + " again"})
    found = compare_runs(good, bad)
    explained = await explain_difference(good, bad, replay=mock(respond=refunds_model), progress=False)
    for shown in (found._repr_mimebundle_()["text/html"], explained._repr_mimebundle_()["text/html"]):
        assert "<img" not in shown and "onerror=\"" not in shown and "<script" not in shown
    html = found._repr_mimebundle_()["text/html"]
    assert "&lt;img" in html and "<del" in html and "<ins" in html and "[-" in html and "{+" in html


async def test_a_long_run_view_draws_a_bounded_part_and_says_where_the_rest_is():
    many_good = {f"fact-{k}": f"value {k} " * 40 for k in range(120)}
    many_bad = {f"fact-{k}": f"other {k} " * 40 for k in range(120)}
    good = await agent({**GOOD, **many_good}).run(REFUND_REQUEST)
    bad = await agent({**GOOD, "vip-override": "No.", **many_bad}).run(REFUND_REQUEST)
    found = compare_runs(good, bad)
    html = found._repr_mimebundle_()["text/html"]
    assert len(found.rows()) > 200 and len(html) < 200_000
    assert "more difference(s) not drawn: difference.to_frame() lists every one" in html


#: a page as JupyterLab's light and dark themes draw it
THEMES = {"light": '<body data-jp-theme-light="true" style="background:#ffffff;color:rgba(0,0,0,0.87)">',
          "dark": '<body data-jp-theme-light="false" style="background:#111111;color:rgba(255,255,255,0.87)">'}
STRIP = """() => {
  document.querySelectorAll('style, link[rel=stylesheet]').forEach((sheet) => sheet.remove());
  document.querySelectorAll('[style]').forEach((element) => element.removeAttribute('style'));
}"""


@pytest.mark.browser
@pytest.mark.parametrize("look", list(THEMES))
@pytest.mark.parametrize("state", ["normal", "scripts-off", "stripped"])
def test_the_views_read_in_chromium_in_both_themes_with_scripts_off_and_styles_stripped(tmp_path, look, state):
    import asyncio

    from browser_kit import ARTIFACTS, chromium, screenshot

    async def views() -> list[str]:
        good, bad = await pair({**GOOD, "vip-override": HOSTILE, "customer": "Dana Reyes, plan Basic"})
        explained = await explain_difference(good, bad, replay=mock(respond=refunds_model), progress=False)
        return [compare_runs(good, bad)._repr_mimebundle_()["text/html"],
                explained._repr_mimebundle_()["text/html"]]

    difference, explanation = asyncio.run(views())
    shots = ARTIFACTS / "difference"
    shots.mkdir(parents=True, exist_ok=True)
    with chromium(javascript=state != "scripts-off", offline=True) as context:
        for name, html, phrases in (
                ("compare", difference, ["Dana Reyes, plan [-Plus-]{+Basic+}", "changed", "fact 'customer'",
                                         "answer", APPROVED, DECLINED, 'onerror="alert(1)">']),
                ("explain", explanation, ["restore fact 'vip-override'", "CONFIRMED", "NOT CONFIRMED"])):
            path = tmp_path / f"{name}-{look}-{state}.html"
            path.write_text(f'<!DOCTYPE html><meta charset="utf-8">{THEMES[look]}{html}</body>', encoding="utf-8")
            page = context.new_page()
            page.emulate_media(color_scheme="dark" if look == "dark" else "light")
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            if state == "stripped":
                page.evaluate(STRIP)
            text = page.inner_text("body")
            screenshot(page, shots / f"{name}-{look}-{state}.png")
            for phrase in phrases:
                assert phrase in text, (name, phrase, text[:2000])
            assert page.locator("img, script").count() == 0  # the hostile text is text, never an element
            assert "NaN" not in text and "None" not in text
            page.close()

"""A run set shows itself as a table: failures first, sorted and filtered in Python, safe, bounded, priced.

What an analyst relies on: the failed runs are on top; what a model or a user wrote cannot become
markup; nothing reads ``NaN`` or ``None``; a set of thousands draws a few dozen rows and says how
many more there are; a secret a redaction policy covers is not in the table; a cost is said only
when every model's price is known; and the table reads in JupyterLab's light and dark themes.
"""

from __future__ import annotations

import asyncio
import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from browser_kit import chromium, screenshot
from test_views_sanitized_browser import CONTRASTS, STRIP, THEMES

from footprint_lab import Agent, Redaction
from footprint_lab.batch import BatchConfigError, RunSet
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMResponse, Usage

#: the cells whose content does not fit them, or that stand outside the view's box (hidden behind its scroll);
#: an input's or an answer's text may be cut with an ellipsis (its whole text is on hover), nothing else
CLIPPED = """() => [...document.querySelectorAll('.fl-runs td:not(.fl-text), .fl-runs th')]
  .filter((cell) => (cell.innerText.trim().length > 2 && cell.clientWidth < 40)
                    || cell.scrollWidth > cell.clientWidth + 1
                    || [...cell.children].some((inner) => inner.scrollWidth > inner.clientWidth + 1)
                    || cell.getBoundingClientRect().right
                       > cell.closest('.fl-scroll').getBoundingClientRect().right + 1)
  .map((cell) => cell.innerText.slice(0, 30))"""
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)" x=\''
SECRET = "sk-abcdefghijklmnopqrstuvwx"


def priced(model: str, answer: str = "ok") -> Agent:
    """An agent whose provider reports real usage (1,000 tokens in, 100 out) under ``model``."""
    usage = Usage(input_tokens=1_000, output_tokens=100)
    return Agent(provider=mock(respond=lambda request: LLMResponse(content=answer, model=model, usage=usage,
                                                                   stop_reason="end_turn")), model=model)


def now_and_then(fail_on: int):
    """A factory whose ``fail_on``-th runner cannot be built: that input is a failed run of the set."""
    calls = {"n": 0}

    def build() -> Agent:
        calls["n"] += 1
        if calls["n"] == fail_on:
            raise ConnectionError("no model today")
        return priced("gpt-4o-mini", "APPROVED: order A-1")

    return build


async def mixed() -> RunSet:
    """Five runs: two on a priced model, one failed, one with a hostile answer, one on a model with no price."""
    made = await RunSet.run(now_and_then(3), ["refund A-1", "refund A-2", "refund A-3"], concurrency=1,
                            progress=False)
    hostile = await Agent(provider=mock(reply=HOSTILE)).run(HOSTILE)
    unknown = await priced("acme-large", "DECLINED: order A-5").run("refund A-5")
    return RunSet.from_runs([*made, hostile, unknown])


class Elements(HTMLParser):
    """Every element and attribute name in a page, and the text of its cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes |= {name for name, _ in attrs}


def html_of(runs: RunSet | object) -> str:
    return runs._repr_mimebundle_()["text/html"]  # type: ignore[attr-defined]


# -- order, filter, sort -------------------------------------------------------------------------
async def test_failed_runs_come_first_then_the_sets_order():
    first = await RunSet.run(lambda: priced("gpt-4o-mini"), ["a", "b"], progress=False)
    second = await RunSet.run(now_and_then(2), ["c", "d", "e"], concurrency=1, progress=False)
    runs = RunSet.from_runs([*first, *second])
    table = runs.table()
    assert [row.status for row in table.rows] == ["failed", "finished", "finished", "finished", "finished"]
    assert [row.position for row in table.rows] == [3, 0, 1, 2, 4]
    assert table.rows[0].error == "ConnectionError"
    page = html_of(runs)
    assert page.index("✗ failed") < page.index("✓ finished")
    assert "error: ConnectionError" in page
    assert "1 failed · 4 finished" in page


async def test_sort_and_filter_give_another_table():
    runs = RunSet.from_runs([await priced("gpt-4o-mini", "x" * n).run(f"q{n}") for n in (3, 1, 2)]
                            + [await Agent(provider=mock(reply="long " * 40)).run("q-mock")])
    by_tokens = runs.table(sort="tokens")
    tokens = [row.tokens for row in by_tokens.rows]
    assert tokens == sorted(tokens, reverse=True) and by_tokens.descending
    by_cost = runs.table(sort="cost", descending=False)
    assert by_cost.rows[0].cost == 0 and by_cost.rows[-1].cost > 0
    assert [row.position for row in runs.table(sort="position", descending=True).rows] == [3, 2, 1, 0]
    kept = runs.table(where=lambda r: r.input in ("q1", "q2"))
    assert {row.input for row in kept.rows} == {"q1", "q2"} and kept.selected == 2 and kept.total == 4
    assert "2 of 4 runs" in html_of(kept)
    assert runs.table(status="failed").rows == []
    assert "cost ↑" in html_of(by_cost) and 'aria-sort="ascending"' in html_of(by_cost)


@pytest.mark.parametrize(("keywords", "setting", "said"), [
    ({"sort": "tokns"}, "sort", "did you mean 'tokens'?"),
    ({"sort": 3}, "sort", "an int"),
    ({"status": "faild"}, "status", "did you mean 'failed'?"),
    ({"status": 7}, "status", "an int"),
    ({"limit": 0}, "limit", "from 1 to 10000"),
    ({"descending": "yes"}, "descending", "True, False or None"),
    ({"where": "failed"}, "where", "selects runs"),
    ({"localized": "frame"}, "localized", "RunSet.localize returns"),
])
async def test_a_table_setting_it_cannot_use_is_refused_by_name(keywords, setting, said):
    runs = RunSet.from_runs([await priced("gpt-4o-mini").run("hello")])
    with pytest.raises(BatchConfigError) as refused:
        runs.table(**keywords)
    assert refused.value.code == "ERR_BATCH_CONFIG" and refused.value.setting == setting
    assert said in str(refused.value)
    assert "tokns" not in str(refused.value) and "faild" not in str(refused.value)


# -- what a table may never show -----------------------------------------------------------------
async def test_a_hostile_answer_and_input_stay_text_in_cells_and_tooltips():
    runs = RunSet.from_runs([await Agent(provider=mock(reply=HOSTILE)).run(HOSTILE)])
    page = html_of(runs)
    parsed = Elements()
    parsed.feed(page)
    assert "script" not in parsed.tags and "onmouseover" not in parsed.attributes and "x" not in parsed.attributes
    assert "<script>" not in page and '" onmouseover=' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;alert(2)" in page
    assert 'title="&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;alert(2)&quot; x=&#x27;"' in page


async def test_no_value_reads_nan_or_none():
    runs = await mixed()
    page = html_of(runs)
    text = runs._repr_mimebundle_()["text/plain"]
    for shown in (page, text):
        assert "NaN" not in shown and "None" not in shown and "nan" not in shown.replace("nano", "")
    assert runs.frame(cost=True).cost.isna().sum() == 1  # the frame keeps pandas' own empty value


async def test_a_redaction_policy_keeps_the_secret_out_of_the_table():
    def leaky() -> Agent:
        return Agent(provider=mock(reply=f"your key {SECRET} was rotated"),
                     redact=Redaction(patterns=[r"sk-[A-Za-z0-9]{20,}"]))

    runs = await RunSet.run(leaky, [f"rotate {SECRET}", f"and {SECRET} too"], progress=False)
    bundle = runs._repr_mimebundle_()
    assert SECRET not in json.dumps(bundle) and "[redacted:" in bundle["text/html"]
    assert SECRET[3:15] not in json.dumps(bundle)


# -- a large set ---------------------------------------------------------------------------------
async def test_a_large_set_draws_fifty_rows_and_says_how_many_more():
    runs = await RunSet.run(lambda: Agent(provider=mock(reply="ok")), [f"question {n}" for n in range(130)],
                            progress=False)
    page = html_of(runs)
    assert page.count("<tr data-fl-run=") == 50
    assert "…and 80 more runs not drawn" in page and "runs.frame(cost=True)" in page
    assert len(page) < 60_000
    assert runs.table(limit=5).more == 125 and runs.table(limit=200).more == 0
    assert "130 runs" in page and "130 finished" in page


async def test_a_saved_set_reads_only_the_recordings_of_the_rows_it_draws(tmp_path: Path):
    made = await RunSet.run(lambda: priced("gpt-4o-mini"), [f"q{n}" for n in range(8)], progress=False)
    folder = made.save(tmp_path / "set")
    index = json.loads((folder / "runset.json").read_text(encoding="utf-8"))
    for row in index["rows"][3:]:
        (folder / "recordings" / row[-1]).unlink()
    loaded = RunSet.load(folder)
    table = loaded.table(limit=3)
    assert [row.cost for row in table.rows] == [pytest.approx(1_000 * 0.15e-6 + 100 * 0.6e-6)] * 3
    assert table.cost is None and "5 saved runs not read yet" in table.cost_note
    assert table.tokens == 8 * 1_100


# -- cost and culprit ----------------------------------------------------------------------------
async def test_the_cost_column_says_each_cost_or_that_the_price_is_unknown():
    runs = await mixed()
    table = runs.table(sort="position", descending=False)
    one = 1_000 * 0.15e-6 + 100 * 0.6e-6
    assert [row.cost for row in table.rows[:2]] == [pytest.approx(one)] * 2
    assert table.rows[-1].cost is None and "no known price for acme-large" in table.rows[-1].cost_note
    assert table.cost is None and "Cost unknown for 1 run" in table.cost_note
    page = html_of(table)
    assert "$0.00021" in page and "no price" in page and 'title="no known price for acme-large' in page
    frame = runs.frame(cost=True)
    assert list(frame.columns)[-1] == "cost" and frame.cost.iloc[0] == pytest.approx(one)
    assert list(runs.frame().columns) == ["run_id", "input", "answer", "status", "error", "tokens", "duration_ms",
                                          "members"]


async def test_a_priced_set_says_its_total():
    runs = await RunSet.run(lambda: priced("claude-sonnet-4-5"), ["a", "b", "c"], progress=False)
    table = runs.table()
    assert table.cost == pytest.approx(3 * (1_000 * 3e-6 + 100 * 15e-6))
    assert "$0.0135" in html_of(runs) and "3,300 tokens" in html_of(runs)


async def test_localize_fills_the_culprit_column():
    agent = planted_fact_agent()
    runs = RunSet.from_runs([await agent.run(REFUND_REQUEST), await Agent(provider=mock(reply="ok")).run("hi")])
    assert ">culprit</th>" not in html_of(runs)  # not localized: no column
    await runs.localize(rerun=agent, where=[runs[0].run_id], samples=1, top=2, progress=False)
    table = runs.table(sort="culprit")
    assert table.rows[0].culprit == "vip-override" and table.rows[1].culprit is None
    page = html_of(table)
    assert ">culprit ↑</th>" in page and ">vip-override</td>" in page


async def test_a_localize_frame_given_names_each_runs_culprits():
    runs = RunSet.from_runs([await priced("gpt-4o-mini").run(q) for q in ("a", "b", "c")])
    ids = [run.run_id for run in runs]
    frame = pd.DataFrame({"run_id": [ids[0], ids[0], ids[1], ids[2]], "source_id": ["fact-1", "fact-2", "x", "y"],
                          "source_kind": ["fact"] * 4, "member": [None, None, "review", None],
                          "verdict": ["confirmed", "confirmed", "confirmed", "undecided"]})
    table = runs.table(localized=frame, sort="position", descending=False)
    assert [row.culprit for row in table.rows] == ["fact-1, fact-2", "review/x", "UNDECIDED: y"]


# -- in a browser ------------------------------------------------------------------------------
@pytest.mark.browser
@pytest.mark.parametrize("look", list(THEMES))
def test_the_table_reads_at_4_5_to_1_and_fits_in_the_light_and_the_dark_theme(tmp_path: Path, look: str):
    async def made() -> str:
        runs = await mixed()
        agent = planted_fact_agent()
        planted = RunSet.from_runs([*runs, await agent.run(REFUND_REQUEST), await agent.run("x" * 3_000)])
        await planted.localize(rerun=agent, where=[planted[5].run_id], samples=1, top=2, progress=False)
        return html_of(planted)

    html = asyncio.run(made())
    page_file = tmp_path / f"runset-{look}.html"
    page_file.write_text(f'<!DOCTYPE html><meta charset="utf-8">{THEMES[look]}{html}</body>', encoding="utf-8")
    shots = Path("/tmp/shots")
    shots.mkdir(parents=True, exist_ok=True)
    with chromium(offline=True, javascript=False) as context:
        for width in (1280, 720):
            page = context.new_page()
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(page_file.as_uri())
            page.wait_for_load_state("load")
            screenshot(page, shots / f"runset_{look}{'' if width == 1280 else '_narrow'}.png")
            low = [item for item in page.evaluate(CONTRASTS) if item["ratio"] < 4.5]
            assert low == [], (look, width, low[:8])
            wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert wide <= 0, (look, width, wide)
            assert page.evaluate(CLIPPED) == [], (look, width)
            heights = page.evaluate("() => [...document.querySelectorAll('.fl-runs tr')].map((r) => r.offsetHeight)")
            assert max(heights) < 30, (look, width, heights)  # one line a row
            text = page.inner_text("body")
            assert "✗ failed" in text and "vip-override" in text and "no price" in text
            page.evaluate(STRIP)
            stripped = page.inner_text("body")
            assert "✗ failed\t" in stripped and "\tno price" in stripped and "NaN" not in stripped
            screenshot(page, shots / f"runset_{look}_stripped.png") if width == 1280 else None
            page.close()

"""The timeline and the chat of a call, in Chromium: readable in JupyterLab's light and dark themes, never wider
than the page, the raw request one click away, and still saying everything with every style stripped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from browser_kit import ARTIFACTS, chromium, keep_evidence, screenshot
from test_views_sanitized_browser import CONTRASTS, STRIP, THEMES, reads

from footprint_lab import Agent, define_tool
from footprint_lab.examples.pipelines import refund_pipeline
from footprint_lab.examples.support_desk import build_desk, support_eval
from footprint_lab.providers import mock

pytestmark = pytest.mark.browser

#: where the screenshots go besides the test artifacts (FOOTPRINT_SHOTS to choose)
SHOTS = Path(os.environ.get("FOOTPRINT_SHOTS", str(ARTIFACTS / "timeline-messages")))
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


def _failing_desk_html() -> str:
    def lookup(order_id: str) -> str:
        raise TimeoutError("the order system did not answer")

    tool = define_tool(name="lookup_order", description="Look up an order by its id.", fn=lookup,
                       input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})
    replies = [{"tool": "lookup_order", "args": {"order_id": "A-1"}}, "ESCALATED: the order system is down."]
    return Agent(provider=mock(replies=replies), tools=[tool], name="desk").run_sync("Refund A-1?").timeline().to_html()


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, list[str]]]:
    desk = build_desk().run_sync(support_eval(3).inputs[0])
    pipeline = refund_pipeline().run_sync("Hi, I'm Dana. Please refund order A-1001, it arrived late.")
    long_run = Agent(provider=mock(reply="Noted.")).run_sync("History: " + "a long line of history " * 120)
    return {
        "timeline_desk": (desk.timeline().to_html(), ["call-llm#3\tmock-model\tLLM call\t✓ ok",
                                                      "tool#4\tlookup_order\ttool call\t✓ ok"]),
        "timeline_pipeline": (pipeline.timeline().to_html(),
                              ["sequence-step#3\trefunds\tmember run", "↳ sequence-step#3/tool#4"]),
        "timeline_failed": (_failing_desk_html(), ["tool#4\tlookup_order\ttool call\t✗ tool_error", "1 failed"]),
        "messages_desk": (desk.messages().to_html(),
                          ["user piece user-message (user)", "tool result piece call_1_1 (tool_result)",
                           "result of lookup_order for call call_1_1"]),
        "messages_pipeline": (pipeline.messages("sequence-step#2/call-llm#3").to_html(),
                              ["in member triage sequence-step#2"]),
        "messages_long": (long_run.messages().to_html(), ["show all"]),
    }


def _page(context: Any, name: str, html: str, look: str) -> Any:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}_{look}.html"
    path.write_text(f'<!DOCTYPE html><meta charset="utf-8">{THEMES[look]}{html}</body>', encoding="utf-8")
    page = context.new_page()
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page


@pytest.mark.parametrize("look", list(THEMES))
def test_both_views_read_at_4_5_to_1_and_fit_the_page_in_each_theme(views, look: str) -> None:
    with chromium(offline=True, javascript=False) as context:
        for name, (html, _) in views.items():
            page = _page(context, name, html, look)
            try:
                for summary in page.locator("summary").all():  # every part one click away, opened and measured too
                    summary.click()
                screenshot(page, SHOTS / f"{name}_{look}.png")
                low = [item for item in page.evaluate(CONTRASTS) if item["ratio"] < 4.5]
                assert low == [], (name, look, low[:8])
                assert page.evaluate(OVERFLOW) <= 0, (name, look, "wider than the page")
                page.set_viewport_size({"width": 560, "height": 900})  # a narrow notebook column
                assert page.evaluate(OVERFLOW) <= 0, (name, look, "wider than a narrow page")
            except AssertionError as failure:
                raise AssertionError(f"{failure}; {keep_evidence(page, f'{name}-{look}', [])}") from None
            finally:
                page.close()


def test_the_raw_request_opens_with_one_click_and_shows_the_json_sent(views) -> None:
    with chromium(offline=True, javascript=False) as context:
        page = _page(context, "messages_desk_raw", views["messages_desk"][0], "light")
        raw = page.locator("details.fl-raw-request")
        assert not raw.evaluate("element => element.open") and not raw.locator("pre").is_visible()
        raw.locator("summary").click()
        assert raw.evaluate("element => element.open") and raw.locator("pre").is_visible()
        shown = raw.locator("pre").inner_text()
        assert '"messages": [' in shown and '"role": "tool"' in shown and '"lookup_order"' in shown
        screenshot(page, SHOTS / "messages_raw_request_light.png")
        page.close()


def test_with_every_style_stripped_each_row_and_message_still_says_what_it_is(views) -> None:
    with chromium(offline=True, javascript=False) as context:
        for name, (html, phrases) in views.items():
            page = _page(context, f"{name}_stripped", html, "light")
            page.evaluate(STRIP)
            text = page.inner_text("body")
            screenshot(page, SHOTS / f"{name}_stripped.png")
            for phrase in phrases:
                assert reads(text, phrase), (name, phrase, text[:2000])
            assert "NaN" not in text and "None" not in text
            page.close()

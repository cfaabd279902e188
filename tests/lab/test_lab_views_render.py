"""Each explanation object renders itself through the lab's views: a replay shows its answers as a table.

An object below the lab asks the display registry for its view by kind; an object whose kind no
view drew fell back to its plain text in a ``<pre>``. A replay is drawn like the other explanations:
its summary, then one row per answer (the recorded one, each replay's, each unchanged replay's),
every answer escaped.
"""

from __future__ import annotations

from golden_kit import dom

from footprint_lab.examples.scenarios import DECLINED, REFUND_REQUEST, planted_fact_agent, refund_model
from footprint_lab.explain import replay
from footprint_lab.providers import LLMRequest, mock


async def test_a_replay_displays_its_answers_as_a_table_each_escaped():
    run = await planted_fact_agent().run(REFUND_REQUEST)

    def marked(request: LLMRequest) -> object:
        answer = refund_model(request)
        return f"{answer} <b>bold</b>" if answer == DECLINED else answer

    found = await replay(run, mock(respond=marked), without=["vip-override"], samples=2)
    bundle = found._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"} and "Replay of call" in bundle["text/plain"]
    view = dom(bundle["text/html"])
    assert view.elements()[0].attrs["id"].startswith("fl")  # a view in its own scope, not the plain fallback
    rows = [[cell.text() for cell in row.find_all("td")] for row in view.find_all("tr")[1:]]
    assert [(which, verdict) for which, _, verdict in rows] == [
        ("recorded", ""), ("replay 1", "changed"), ("replay 2", "changed"),
        ("unchanged 1", "same"), ("unchanged 2", "same")]
    assert rows[1][1] == f"{DECLINED} <b>bold</b>" and "<b>bold</b>" not in bundle["text/html"]
    assert found.summary() in view.text()

"""The tool-catalog lint: the same findings for every shape a catalog comes in, each with its fix."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import footprint_lab
from footprint_lab import Agent, define_tool, lint_tools
from footprint_lab.errors import AgentConfigError, ToolCatalogError
from footprint_lab.explain.checks.tool_lint import ToolLintWarning, prose_enum
from footprint_lab.notebook.cli import main
from footprint_lab.providers import mock

ORDER_ID = {"order_id": {"type": "string", "description": "The order's id, e.g. A-1001."}}
PLAIN = [
    {"name": "get_order_status", "description": "Returns the live status of an order.",
     "inputSchema": {"type": "object", "properties": ORDER_ID}},
    {"name": "get_order_history", "description": "Returns the time-series status of an order.",
     "inputSchema": {"type": "object", "properties": ORDER_ID}},
    {"name": "refund", "inputSchema": {"type": "object", "properties": {
        "reason": {"type": "string", "description": "Why: one of 'damaged', 'late' or 'wrong_item'."},
        "amount": {"type": "number"}}}},
    {"name": "escalate", "description": "Hand the case to a person. Use when the customer asks for a manager.",
     "inputSchema": {"type": "object", "properties": {
         "priority": {"type": "string", "description": "low, normal or urgent", "enum": ["low", "normal", "urgent"]}}}},
]


def openai_shape() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t["name"], **({"description": t["description"]} if "description"
             in t else {}), "parameters": t["inputSchema"]}} for t in PLAIN]


def anthropic_shape() -> list[dict[str, Any]]:
    return [{"name": t["name"], **({"description": t["description"]} if "description" in t else {}),
             "input_schema": t["inputSchema"]} for t in PLAIN]


def mcp_shape() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"tools": PLAIN}}


def rows(frame: Any) -> set[tuple[str, str, str, Any]]:
    return {(r.severity, r.check, r.tool, r.other if isinstance(r.other, str) else
             r.parameter if isinstance(r.parameter, str) else None) for r in frame.itertuples()}


def test_the_acceptance_catalog_gives_each_finding_with_its_fix() -> None:
    frame = lint_tools(PLAIN)
    found = rows(frame)
    assert ("warning", "confusable", "get_order_status", "get_order_history") in found
    assert ("warning", "what-not-when", "get_order_status", None) in found
    assert ("warning", "what-not-when", "get_order_history", None) in found
    assert ("error", "missing-description", "refund", None) in found
    assert ("warning", "enum-in-prose", "refund", "reason") in found
    assert ("warning", "undocumented-parameter", "refund", "amount") in found
    assert not any(tool == "escalate" for _, _, tool, _ in found)  # says when; its enum is declared
    assert frame.severity.iloc[0] == "error"
    enum = frame[frame.check == "enum-in-prose"].fix.iloc[0]
    assert '["damaged", "late", "wrong_item"]' in enum
    pair = frame[frame.check == "confusable"].iloc[0]
    assert pair.score >= pair.threshold and pair.margin == pytest.approx(pair.score - pair.threshold, abs=1e-3)
    assert "live" in pair.message and "time" in pair.message and pair.fix


@pytest.mark.parametrize("shape", [openai_shape, anthropic_shape, mcp_shape])
def test_every_shape_gives_the_same_findings(shape: Any, tmp_path: Path) -> None:
    expected = lint_tools(PLAIN)
    assert lint_tools(shape()).equals(expected)
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(shape()))
    assert lint_tools(path).equals(expected)


def test_footprint_lab_tools_are_read_as_they_are() -> None:
    tools = [define_tool(name=t["name"], description=t.get("description", ""), input_schema=t["inputSchema"],
                         fn=lambda **_: "ok") for t in PLAIN]
    assert rows(lint_tools(tools)) == rows(lint_tools(PLAIN))


def test_names_differing_by_an_affix_and_a_pluggable_embedding() -> None:
    catalog = [{"name": "search_products", "description": "Search the catalog. Use when a product is named."},
               {"name": "search_products_v2", "description": "Look items up by price. Use for a price range."}]
    assert ("warning", "affix-name", "search_products_v2", "search_products") in rows(lint_tools(catalog))
    same = lint_tools(catalog, embed=lambda texts: [[1.0, 0.0] for _ in texts])
    assert ("warning", "confusable", "search_products", "search_products_v2") in rows(same)
    apart = lint_tools(catalog, embed=lambda texts: [[1.0, 0.0], [0.0, 1.0]])
    assert "confusable" not in set(apart.check)


def test_prose_enums_are_read_from_common_phrasings() -> None:
    assert prose_enum("Sort order: either asc or desc.") == ["asc", "desc"]
    assert prose_enum("Must be one of: red, green, blue") == ["red", "green", "blue"]
    assert prose_enum("The customer's full name.") == []


def test_an_unreadable_catalog_is_refused_by_entry() -> None:
    with pytest.raises(ToolCatalogError) as refused:
        lint_tools([{"description": "no name"}])
    assert refused.value.code == "ERR_TOOL_CATALOG" and "entry 0" in str(refused.value)
    with pytest.raises(ToolCatalogError):
        lint_tools({"not": "tools"})
    with pytest.raises(ToolCatalogError):
        lint_tools(PLAIN, threshold=2)


@pytest.mark.parametrize(("encoded", "said"), [
    (lambda text: text.encode("latin-1"), "the first bad byte is at offset"),
    (lambda text: text.encode("utf-16"), "UTF-16 byte-order mark"),
    (lambda text: text.encode("cp1252"), "the first bad byte is at offset"),
    (lambda text: b"\xff" * 3 + text.encode(), "the first bad byte is at offset 0"),
], ids=["latin-1", "utf-16", "cp1252", "stray bytes first"])
def test_a_catalog_file_that_is_not_utf8_is_refused_by_name(tmp_path: Path, capsys: Any, encoded: Any,
                                                            said: str) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes(encoded(json.dumps([{"name": "café_lookup", "description": "Find a café by its name, près de"
                                                                               " vous."}], ensure_ascii=False)))
    with pytest.raises(ToolCatalogError) as refused:
        lint_tools(path)
    assert refused.value.code == "ERR_TOOL_CATALOG" and refused.value.entry == "the catalog file"
    assert said in str(refused.value) and "Save it as UTF-8" in str(refused.value)
    assert "café" not in str(refused.value) and "caf" not in refused.value.received  # shape only, never the text
    assert main(["lint-tools", str(path)]) == 2
    assert "ERR_TOOL_CATALOG" in capsys.readouterr().err


def test_a_utf8_catalog_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes(json.dumps(PLAIN, ensure_ascii=False).encode("utf-8-sig"))
    assert lint_tools(path).equals(lint_tools(PLAIN))


def test_the_console_script_exits_non_zero_on_errors(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text(json.dumps(openai_shape()))
    assert main(["lint-tools", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "missing-description" in out and "confusable" in out
    good = tmp_path / "good.json"
    good.write_text(json.dumps(mcp_shape()["result"]["tools"][3:]))
    assert main(["lint-tools", str(good)]) == 0


def test_an_agent_with_lint_tools_warns_once_at_build_time() -> None:
    tools = [define_tool(name=t["name"], description=t.get("description", ""), input_schema=t["inputSchema"],
                         fn=lambda **_: "ok") for t in PLAIN[:2]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = Agent(provider=mock(reply="ok"), tools=tools, lint_tools=True)
        agent.run_sync("status of A-1?")
    linted = [w for w in caught if issubclass(w.category, ToolLintWarning)]
    assert len(linted) == 1 and "get_order_status" in str(linted[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Agent(provider=mock(reply="ok"), tools=tools)
    with pytest.raises(AgentConfigError):
        Agent(provider=mock(reply="ok"), lint_tools="yes")
    assert footprint_lab.lint_tools is lint_tools


def test_the_answer_view_says_when_a_tool_was_chosen_between_twins() -> None:
    from footprint_lab.lab.views.answer import answer_view

    tools = [define_tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"],
                         fn=lambda **_: "shipped") for t in PLAIN[:2]]
    tools.append(define_tool(name="escalate", description=PLAIN[3]["description"],
                             input_schema=PLAIN[3]["inputSchema"], fn=lambda **_: "ok"))
    script = [{"tool": "get_order_status", "args": {"order_id": "A-1"}}, {"tool": "escalate",
              "args": {"priority": "low"}}, "A-1 shipped."]
    run = Agent(provider=mock(replies=script), tools=tools).run_sync("status of A-1?")
    html = answer_view(run.recording)
    assert html.count("data-fl-twins") == 1  # escalate has no twin
    assert "<code>get_order_status</code> chose between twins: <code>get_order_history</code>" in html

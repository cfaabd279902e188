"""``%load_ext footprint_lab`` in a real kernel: the magics, the last run, refusals by name, and a clean unload."""

from __future__ import annotations

from functools import cache

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from footprint_lab.record.recording import RECORDING_MIME

CELLS = [
    # 0: what the shell holds before the extension
    # IPython 9 registers its own %load_ext / %unload_ext lazily and swaps them in on first use,
    # so they are used once (on an empty extension) before the snapshot.
    "import sys, types\n"
    "probe = types.ModuleType('probe_ext')\n"
    "probe.load_ipython_extension = probe.unload_ipython_extension = lambda ip: None\n"
    "sys.modules['probe_ext'] = probe\n"
    "%load_ext probe_ext\n%unload_ext probe_ext\n"
    "ip = get_ipython()\n"
    # magics by name and function (IPython may rebind its own magics' methods between cells)
    "table = lambda kind: {n: getattr(f, '__qualname__', f) for n, f in ip.magics_manager.magics[kind].items()}\n"
    "before = (ip.custom_exceptions, ip.CustomTB, table('line'), table('cell'),\n"
    "          list(ip.events.callbacks['post_run_cell']))",
    "%load_ext footprint_lab",
    "from footprint_lab.examples.scenarios import planted_fact_agent\n"
    "agent = planted_fact_agent()\n"
    "run = agent.run_sync('Please refund order A-1001.')",
    "%fp_why",  # 3: the last run, without naming it
    "%fp_context run --call 0 --left-out",  # 4
    "%fp_tree --steps",  # 5
    "%fp_suspects run",  # 6
    "%%fp_run agent\nPlease refund order A-1001.",  # 7
    "print(_fp.answer)",  # 8
    "%fp_why no_such_run",  # 9: refused with the names that exist
    "for name in ('fp_why', 'fp_context', 'fp_tree', 'fp_suspects'):\n"
    "    print(ip.find_line_magic(name).__doc__)\n"
    "print(ip.find_cell_magic('fp_run').__doc__)",  # 10: what %fp_why? shows
    "%unload_ext footprint_lab",  # 11
    "after = (ip.custom_exceptions, ip.CustomTB, table('line'), table('cell'),\n"
    "         list(ip.events.callbacks['post_run_cell']))\n"
    "print([a == b for a, b in zip(before, after)])",  # 12
]


@cache
def executed() -> nbformat.NotebookNode:
    notebook = new_notebook(cells=[new_code_cell(source) for source in CELLS])
    NotebookClient(notebook, timeout=180, kernel_name="python3", allow_errors=True).execute()
    return notebook


def outputs(cell: int) -> list[nbformat.NotebookNode]:
    return list(executed().cells[cell].outputs)


def data(cell: int) -> dict:
    found: dict = {}
    for output in outputs(cell):
        found.update(output.get("data", {}))
    return found


def printed(cell: int) -> str:
    return "".join(o.get("text", "") for o in outputs(cell) if o.output_type == "stream")


def test_fp_why_walks_back_from_the_last_run():
    html = data(3)["text/html"]
    assert 'data-fl-piece="vip-override"' in html and ">BORN</b>" in html
    assert "Backtrack from final#" in data(3)["text/plain"]


def test_fp_context_shows_the_slots_of_the_named_call_and_what_it_left_out():
    html = data(4)["text/html"]
    assert 'data-fl-call="call-llm#3"' in html and 'data-slot="system"' in html


def test_fp_tree_draws_a_figure_with_a_node_per_step():
    bundle = data(5)
    assert "application/vnd.plotly.v1+json" in bundle and "text/html" in bundle
    figure = bundle["application/vnd.plotly.v1+json"]
    nodes = sum(len(t["x"]) for t in figure["data"] if t.get("mode", "").startswith("markers"))
    assert nodes == 4  # the run, two LLM calls and one tool step


def test_fp_suspects_ranks_with_its_caveat():
    assert "correlational" in printed(6)
    table = data(6)["text/html"]
    assert "vip-override" in table and "removal_id" in table and "structural_score" not in table


def test_fp_run_runs_the_cell_and_binds_the_run():
    bundle = data(7)
    assert RECORDING_MIME in bundle and "data-fl-answer" in bundle["text/html"]
    assert printed(8).startswith("APPROVED")


def test_an_unknown_run_is_refused_with_the_names_that_exist():
    errors = [o for o in outputs(9) if o.output_type == "error"]
    cards = [o for o in outputs(9) if o.output_type == "display_data"]
    assert errors == [] and len(cards) == 1  # the card alone, no traceback repeating it
    assert cards[0].data["text/plain"].startswith("UnknownRunError [ERR_UNKNOWN_RUN]")
    html = cards[0].data["text/html"]
    assert "ERR_UNKNOWN_RUN" in html and "run" in html and "no_such_run" not in html


def test_magics_document_themselves():
    text = printed(10)
    for usage in ("%fp_why [--at AT] [run]", "%fp_context [--call CALL] [--left-out] [run]",
                  "%fp_tree [--steps] [run]", "%fp_suspects [run]", "%fp_run [--identity IDENTITY] runner"):
        assert usage in text
    assert "custody" in text and "correlational" in text


def test_unload_puts_back_everything_it_changed():
    assert printed(12).strip() == "[True, True, True, True, True]"

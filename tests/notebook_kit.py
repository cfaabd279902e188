"""Notebooks for the sharing tests: built in-process with nbformat, or executed in a real kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

from footprint_lab import Agent, Identity, tool
from footprint_lab.notebook.read import WIDGET_STATE_MIME
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME

#: secrets planted in a run, each where a policy must find it
OPENAI_KEY = "sk-abcdefghijklmnopqrstuvwx1234"
PASSWORD = "hunter2-correct-horse"
PRINCIPAL = "dana.reyes@example.com"
POLICY_KEYS = ["password", "principal"]


def displayed(run: Any) -> dict[str, Any]:
    """The output a notebook front end stores for ``display(run)`` (its recording under the recording MIME)."""
    data = run._repr_mimebundle_()
    assert RECORDING_MIME in data
    return nbformat.v4.new_output("display_data", data=json.loads(json.dumps(data)))


def leaky_run() -> Any:
    """A run that meets a key in its input, a password in a tool result, and an identity."""

    @tool
    def account(customer: str) -> dict:
        """Look a customer's account up."""
        return {"customer": customer, "password": PASSWORD, "note": f"rotate {OPENAI_KEY}"}

    agent = Agent(provider=mock(replies=[{"tool": "account", "args": {"customer": "Dana"}},
                                         f"Rotated {OPENAI_KEY}; the old password {PASSWORD} is void."]),
                  system="Help with accounts.", tools=[account])
    return agent.run_sync(f"My key {OPENAI_KEY} leaked", identity=Identity(principal=PRINCIPAL))


def notebook_with(runs: list[Any], path: Path, *, widgets: dict[str, Any] | None = None,
                  extra_cells: list[Any] | None = None) -> Path:
    """A saved notebook: one code cell per run displaying it (and printing its answer)."""
    cells = [nbformat.v4.new_markdown_cell("# Findings")]
    for run in runs:
        cell = nbformat.v4.new_code_cell("run")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{run.answer}\n"), displayed(run)]
        cells.append(cell)
    cells.extend(extra_cells or [])
    notebook = nbformat.v4.new_notebook(cells=cells)
    if widgets is not None:
        notebook.metadata["widgets"] = {WIDGET_STATE_MIME: widgets}
    nbformat.write(notebook, path)
    return path


def widget_state(**models: dict[str, Any]) -> dict[str, Any]:
    """Saved widget state as Jupyter writes it, one model per keyword (its state given)."""
    return {"version_major": 2, "version_minor": 0, "state": {
        model_id: {"model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls",
                   "model_module_version": "2.0.0", "state": state}
        for model_id, state in models.items()}}


def composed_run(*, sealed: bool = False) -> Any:
    """A composition three runs deep (a Sequence, a Parallel inside it, a Sequence inside that), sealed
    when asked: member runs whose paths nest, for the tree checks."""
    from footprint_lab import Parallel, Sequence

    def echo(tag: str, **keywords: Any) -> Agent:
        return Agent(provider=mock(respond=lambda r: f"{tag}({r.messages[-1]['content']})"), name=tag, **keywords)

    inner = Sequence({"z": echo("z")})
    fan = Parallel({"x": echo("x", seal=sealed), "y": inner}, merge=lambda answers: " | ".join(answers.values()))
    return Sequence({"a": echo("a"), "fan": fan}).run_sync("hi")


def rich_notebook(path: Path) -> Path:
    """A notebook as a team shares it: an export (a leaky agent run with a note, a sealed composition
    with its tree figure), then a cell with stream and error output, and saved widget state whose
    trait carries a recording as JSON text."""
    from footprint_lab.notebook import export

    leaky = leaky_run()
    leaky.annotate("answer", f"checked by {PRINCIPAL}")
    composed = composed_run(sealed=True)
    export([leaky, composed], path, title="Audit")
    notebook = nbformat.read(path, as_version=4)
    cell = nbformat.v4.new_code_cell("print(run.answer)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{leaky.answer}\n"),
                    nbformat.v4.new_output("error", ename="KeyError", evalue=PASSWORD, traceback=["KeyError"])]
    notebook.cells.append(cell)
    notebook.metadata["widgets"] = {WIDGET_STATE_MIME: widget_state(panel={
        "value": "<b>panel</b>", "recording": leaky.recording.model_dump_json()})}
    nbformat.write(notebook, path)
    return path


class Executed:
    """A notebook of ``cells`` run top to bottom in a real kernel (errors kept), read cell by cell."""

    def __init__(self, cells: list[str]) -> None:
        from nbclient import NotebookClient  # a kernel is started only by the tests that execute cells

        self.notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
        #: each failed cell's error as the kernel's reply gives it (``ename``, ``evalue``), by cell index
        self.failed: dict[int, Any] = {}
        NotebookClient(self.notebook, timeout=180, kernel_name="python3", allow_errors=True,
                       on_cell_error=self._failed).execute()

    def _failed(self, cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        self.failed[cell_index] = nbformat.from_dict(execute_reply["content"])

    def outputs(self, cell: int) -> list[Any]:
        return list(self.notebook.cells[cell].outputs)

    def data(self, cell: int) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for output in self.outputs(cell):
            found.update(output.get("data", {}))
        return found

    def errors(self, cell: int) -> list[Any]:
        """The error the cell failed with (its ``ename``), from the kernel's reply: a refusal or a run failure
        shows as its card alone, with no error output."""
        return [self.failed[cell]] if cell in self.failed else []

    def error_outputs(self, cell: int) -> list[Any]:
        """The cell's error outputs: a traceback printed under it."""
        return [output for output in self.outputs(cell) if output.output_type == "error"]

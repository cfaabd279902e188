"""The ``footprint-lab`` console script given hostile files and names (issue 46), run for real in a subprocess.

A FIFO or a device in a notebook's place is refused by name (exit 2), never waited on or read
whole; a page is never written over the notebook it is made from, by any spelling of its path;
an argument that reads as an option and names a file too is refused, so a notebook named
``--key=leak.ipynb`` is never left unscanned and one named ``--out=clean.ipynb`` never becomes
where another is written. ``--`` makes every name after it a file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from notebook_kit import leaky_run, notebook_with

import footprint_lab

SCRIPT = Path(sys.executable).with_name("footprint-lab")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(Path(footprint_lab.__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}
DEADLINE = 60
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def run(*args: Any, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The script's outcome; one still running at the deadline fails the test instead of blocking the suite."""
    try:
        return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=ENV,
                              timeout=DEADLINE, check=False, cwd=cwd)
    except subprocess.TimeoutExpired:
        pytest.fail(f"footprint-lab {' '.join(map(str, args))} was still running after {DEADLINE} s")


def refused(result: subprocess.CompletedProcess[str], code: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and code in result.stderr, result.stderr


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return notebook_with([leaky_run()], tmp_path_factory.mktemp("cli-hostile") / "leaky.ipynb")


# -- special files in a notebook's place ------------------------------------------------------------------
def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _dev_null(path: Path) -> None:
    path.symlink_to("/dev/null")


@needs_fifo
@pytest.mark.parametrize("plant", [_fifo, _dev_zero])
@pytest.mark.parametrize("command", [["scan"], ["scrub"], ["verify"], ["verify", "--require-seal"],
                                     ["html", "-o", "page.html"]])
def test_a_special_file_in_a_notebooks_place_is_refused_by_name(tmp_path, plant, command):
    special = tmp_path / "notebook.ipynb"
    plant(special)
    result = run(command[0], special, *command[1:], cwd=tmp_path)
    refused(result, "ERR_")
    assert str(tmp_path) not in result.stderr.replace(f"{special}: ", "")
    assert not (tmp_path / "page.html").exists()


@needs_fifo
@pytest.mark.parametrize("command", [["scrub", "{leaky}", "--out", "{out}"], ["html", "{leaky}", "-o", "{out}"]])
@pytest.mark.parametrize("plant", [_fifo, _dev_null])
def test_a_special_file_to_write_to_is_refused_by_name(tmp_path, leaky, command, plant):
    out = tmp_path / "out.ipynb"
    plant(out)
    refused(run(*(part.format(leaky=leaky, out=out) for part in command)), "ERR_NOTEBOOK_FILE")


# -- never a page over its notebook -----------------------------------------------------------------------
@pytest.mark.parametrize("spell", [
    lambda nb: nb,
    lambda nb: nb.parent / "." / nb.name,
    lambda nb: nb.parent.parent / nb.parent.name / nb.name,
    lambda nb: (nb.parent / "alias.ipynb").symlink_to(nb) or nb.parent / "alias.ipynb",
    lambda nb: os.link(nb, nb.parent / "hard.ipynb") or nb.parent / "hard.ipynb",
])
def test_html_never_writes_over_its_notebook(tmp_path, leaky, spell):
    notebook = tmp_path / "input.ipynb"
    notebook.write_bytes(leaky.read_bytes())
    refused(run("html", notebook, "-o", spell(notebook)), "ERR_NOTEBOOK_FILE")
    assert notebook.read_bytes() == leaky.read_bytes()


# -- names that read as options ---------------------------------------------------------------------------
@pytest.mark.parametrize(("command", "name"), [
    (["scan", "leaky.ipynb"], "--key=leak.ipynb"),
    (["scan", "leaky.ipynb"], "--ke=leak.ipynb"),
    (["scan", "leaky.ipynb"], "--help"),
    (["scan", "leaky.ipynb"], "--only"),
    (["scrub", "leaky.ipynb"], "--out=clean.ipynb"),
    (["verify", "leaky.ipynb"], "--require-seal"),
    (["html", "leaky.ipynb"], "-opage.html"),
])
def test_a_file_whose_name_reads_as_an_option_is_refused(tmp_path, leaky, command, name):
    (tmp_path / "leaky.ipynb").write_bytes(leaky.read_bytes())
    (tmp_path / name).write_bytes(leaky.read_bytes())
    result = run(*command, name, cwd=tmp_path)
    refused(result, "ERR_COMMAND_LINE")
    assert name not in result.stderr
    assert (tmp_path / "leaky.ipynb").read_bytes() == leaky.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["leaky.ipynb", name])
    if command[0] == "scan":  # after --, the same name is a notebook, and it is scanned
        scanned = run("scan", "--", name, cwd=tmp_path)
        assert scanned.returncode == 1 and "openai_key" in scanned.stdout, scanned.stderr



def test_the_library_to_html_never_writes_over_its_notebook_either(tmp_path, leaky):
    from footprint_lab.errors import NotebookFileError
    from footprint_lab.notebook import to_html

    notebook = tmp_path / "input.ipynb"
    notebook.write_bytes(leaky.read_bytes())
    for out in (notebook, tmp_path / "." / "input.ipynb"):
        with pytest.raises(NotebookFileError) as refused:
            to_html(notebook, out)
        assert refused.value.reason == "is-the-input"
    assert notebook.read_bytes() == leaky.read_bytes()

"""Where a piece was born is said without an absolute path: no home folder travels with a shared notebook.

A declaration records the file that declared it relative to the working directory (in a
kernel, the notebook's folder) when the file is under it, and by its name alone when it is
not. The record is made that way where it is made, so the recording, its views, its bundle
and an exported page all say the same, and none holds the folder the file lives in.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from footprint_lab import Agent
from footprint_lab.context.declarations import declared_in
from footprint_lab.notebook import export, to_html
from footprint_lab.providers import mock

DECLARING = "from footprint_lab.context import define_fact\n\nFACT = define_fact(id='plan', data='The plan is pro.')\n"


def declare(folder: Path) -> object:
    """The fact a module file in ``folder`` declares (line 3), run the way Python runs any file."""
    folder.mkdir(parents=True, exist_ok=True)
    module = folder / "declaring.py"
    module.write_text(DECLARING, encoding="utf-8")
    return runpy.run_path(str(module))["FACT"]


def everything_shown(fact: object, tmp_path: Path) -> str:
    """The recording, its display bundle and an exported page of a run given ``fact``, as one text."""
    run = Agent(provider=mock(reply="Pro."), context=[fact]).run_sync("Which plan?")
    (tmp_path / "out").mkdir(exist_ok=True)
    notebook = export([run], tmp_path / "out" / "export.ipynb", title="Paths")
    page = to_html(notebook, tmp_path / "out" / "page.html")
    return "\n".join([run.recording.model_dump_json(), json.dumps(run._repr_mimebundle_()),
                      notebook.read_text(encoding="utf-8"), page.read_text(encoding="utf-8"), str(run.backtrack())])


def test_a_file_under_the_working_directory_is_named_relative_to_it(tmp_path: Path, monkeypatch):
    project = tmp_path / "home" / "dana" / "project"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    fact = declare(project / "agents")
    assert fact.declared_at == "agents/declaring.py:3"
    shown = everything_shown(fact, tmp_path)
    assert "define_fact('plan') at agents/declaring.py:3" in shown
    assert str(tmp_path) not in shown and "dana" not in shown


@pytest.mark.parametrize("where", ["elsewhere", "above"])
def test_a_file_outside_the_working_directory_is_named_by_its_file_name_alone(tmp_path: Path, monkeypatch, where):
    home = tmp_path / "home" / "dana"
    cwd = tmp_path / "work" if where == "elsewhere" else home / "project"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    fact = declare(home / "secret-client")
    assert fact.declared_at == "declaring.py:3"
    shown = everything_shown(fact, tmp_path)
    assert "define_fact('plan') at declaring.py:3" in shown
    assert "dana" not in shown and "secret-client" not in shown and str(tmp_path) not in shown


def test_the_names_a_file_can_be_given(tmp_path: Path):
    assert declared_in(str(tmp_path / "a" / "b.py"), str(tmp_path)) == "a/b.py"
    assert declared_in("a/b.py", str(tmp_path)) == "a/b.py"                      # already relative, and under it
    assert declared_in("../b.py", str(tmp_path)) == "b.py"
    assert declared_in("/home/dana/b.py", str(tmp_path)) == "b.py"
    assert declared_in("<stdin>", str(tmp_path)) == "<stdin>"                    # code with no file
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")                            # the directory through a link
    assert declared_in(str(tmp_path / "real" / "sub" / "c.py"), str(tmp_path / "link")) == "sub/c.py"

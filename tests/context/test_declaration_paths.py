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


@pytest.mark.parametrize(("cwd", "folder", "named"), [
    ("home/dana/project", "home/dana/project/agents", "agents/declaring.py"),   # under it: relative to it
    ("work", "home/dana/secret-client", "declaring.py"),                        # elsewhere: its name alone
    ("home/dana/project", "home/dana/secret-client", "declaring.py"),           # beside it, above: the same
])
def test_the_declaring_file_is_named_relative_to_the_working_directory_or_by_its_name(
        tmp_path: Path, monkeypatch, cwd, folder, named):
    (tmp_path / cwd).mkdir(parents=True)
    monkeypatch.chdir(tmp_path / cwd)
    fact = declare(tmp_path / folder)
    assert fact.declared_at == f"{named}:3"
    shown = everything_shown(fact, tmp_path)
    assert f"define_fact('plan') at {named}:3" in shown
    assert str(tmp_path) not in shown and "dana" not in shown and "secret-client" not in shown


def test_the_names_a_file_can_be_given(tmp_path: Path):
    assert declared_in(str(tmp_path / "a" / "b.py"), str(tmp_path)) == "a/b.py"
    assert declared_in("a/b.py", str(tmp_path)) == "a/b.py"                      # already relative, and under it
    assert declared_in("../b.py", str(tmp_path)) == "b.py"
    assert declared_in("/home/dana/b.py", str(tmp_path)) == "b.py"
    assert declared_in("<stdin>", str(tmp_path)) == "<stdin>"                    # code with no file
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")                            # the directory through a link
    assert declared_in(str(tmp_path / "real" / "sub" / "c.py"), str(tmp_path / "link")) == "sub/c.py"

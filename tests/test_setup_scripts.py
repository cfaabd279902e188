"""The README's set-up commands work on a stock machine, and the built wheel works on its own.

A newcomer on Debian (or Ubuntu 23.04+, or Homebrew's Python) has ``python3`` and no ``python``,
and a system Python that refuses ``pip install`` (PEP 668). These tests clone the repository and
run ``./scripts/quickstart`` with the PATH cut down to the system's directories, so the only
interpreter it can find is that externally-managed ``python3``; then they build the wheel and load
the extension from it in a kernel of a fresh environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).parent.parent
SYSTEM_PYTHON = Path("/usr/bin/python3")


def externally_managed_system_python() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c",
         "import sys, sysconfig, os; print(sys.version_info >= (3, 11) and "
         "os.path.exists(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))"],
        capture_output=True, text=True, check=False)
    return probe.stdout.strip() == "True"


def stock_environment() -> dict[str, str]:
    """This process's environment as a newcomer's shell would have it: system PATH, no venv, no overrides."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"VIRTUAL_ENV", "FOOTPRINT_LAB_PYTHON", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX"}}
    env["PATH"] = "/usr/bin:/bin"
    return env


@pytest.fixture(scope="module")
def stock_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not externally_managed_system_python():
        pytest.skip("no externally-managed system python3 (3.11+) at /usr/bin/python3 on this machine")
    clone = tmp_path_factory.mktemp("stock") / "footprint_lab"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    return clone


def quickstart(clone: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["./scripts/quickstart"], cwd=clone, env=stock_environment(),
                          capture_output=True, text=True, timeout=900, check=False)


def test_quickstart_on_a_stock_machine_builds_its_own_environment_and_runs_the_notebook(stock_clone):
    done = quickstart(stock_clone)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"creating {stock_clone / '.venv'} with {SYSTEM_PYTHON}" in done.stderr
    executed = nbformat.read(stock_clone / "out" / "quickstart.ipynb", as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
              and o.get("ename") != "InvalidRunInputError"]
    assert errors == []
    assert (stock_clone / "out" / "quickstart.html").stat().st_size > 0
    # it ends on the one command that opens the notebooks from that environment
    assert done.stdout.rstrip().splitlines()[-1].strip() == ".venv/bin/jupyter lab notebooks/"
    assert (stock_clone / ".venv" / "bin" / "jupyter").exists()
    # nothing went into the system's Python: git sees only ignored files
    status = subprocess.run(["git", "status", "--porcelain"], cwd=stock_clone, capture_output=True, text=True)
    assert status.stdout == ""


def test_a_second_quickstart_reinstalls_nothing(stock_clone):
    installed = next((stock_clone / ".venv" / "lib").glob("python3*/site-packages"))
    before = sorted(p.name for p in installed.iterdir())
    stamp = (stock_clone / ".venv" / ".footprint-lab-installed").read_text()
    done = quickstart(stock_clone)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "nothing to install" in done.stderr
    assert "installing" not in done.stderr and "creating" not in done.stderr
    assert sorted(p.name for p in installed.iterdir()) == before
    assert (stock_clone / ".venv" / ".footprint-lab-installed").read_text() == stamp


def test_a_changed_pyproject_is_installed_again(stock_clone):
    pyproject = stock_clone / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# changed\n")
    env = stock_environment()
    # FOOTPRINT_LAB_PYTHON names an environment the user manages: the project installs there.
    env["FOOTPRINT_LAB_PYTHON"] = str(stock_clone / ".venv" / "bin" / "python")
    done = subprocess.run(["bash", "-c", "source scripts/_env.sh && fl_prepare notebook"], cwd=stock_clone,
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "using FOOTPRINT_LAB_PYTHON=" in done.stderr
    assert "installing footprint_lab[notebook]" in done.stderr


def test_no_suitable_python_is_refused_by_name_with_the_fix(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    for tool in ("dirname", "bash", "cat", "grep"):
        (empty / tool).symlink_to(f"/usr/bin/{tool}" if Path(f"/usr/bin/{tool}").exists() else f"/bin/{tool}")
    env = {**stock_environment(), "PATH": str(empty)}
    (tmp_path / "clone").mkdir()
    done = subprocess.run(["/bin/bash", "-c", f"source {ROOT / 'scripts' / '_env.sh'} && FL_VENV={tmp_path}/v "
                           "&& fl_prepare notebook"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "ERR_NO_PYTHON" in done.stderr and "Fix:" in done.stderr


def runtime_requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    return [line.split(":", 1)[1].strip() for line in lines
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def test_the_built_wheel_pulls_in_only_runtime_dependencies_and_loads_in_a_fresh_kernel(tmp_path, monkeypatch):
    import tomllib

    # run from elsewhere: `python -m` puts the working folder on sys.path, and the repository's
    # footprint_lab.egg-info there would pass for an installed footprint_lab
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    # built from a copy of the sources: a checkout's own build/ folder keeps modules since renamed or removed, and
    # setuptools would put them in the wheel
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "dist", "site", "tests",
                                                                "test-artifacts", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(source)],
                   check=True, capture_output=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("footprint_lab-*.whl"))
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(runtime_requirements(wheel)) == sorted(d.replace(" ", "") for d in declared)
    with zipfile.ZipFile(wheel) as archive:   # PEP 561: a user's type checker reads the package's annotations
        assert "footprint_lab/py.typed" in archive.namelist()

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # ipykernel is what any notebook user has; it is not one of footprint_lab's own dependencies
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel),
                    "ipykernel"], check=True, timeout=900)
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                            check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "footprint-lab" in names or "footprint_lab" in names
    assert not names & {"pytest", "nbclient", "nbconvert", "jupyterlab", "mypy", "playwright"}

    spec = tmp_path / "jupyter" / "kernels" / "footprint-wheel"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "footprint_lab wheel", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    notebook = new_notebook(cells=[
        new_code_cell("%load_ext footprint_lab"),
        new_code_cell("import footprint_lab; print(footprint_lab.__file__)"),
        new_code_cell("from footprint_lab import Agent\nfrom footprint_lab.providers import mock\n"
                      "Agent(provider=mock(reply='ok')).run_sync(['not', 'a', 'message'])"),
    ])
    workdir = tmp_path / "work"
    workdir.mkdir()
    failed: dict[int, Any] = {}
    NotebookClient(notebook, timeout=120, kernel_name="footprint-wheel", allow_errors=True,
                   on_cell_error=lambda cell, cell_index, execute_reply: failed.update(
                       {cell_index: execute_reply["content"]}),
                   resources={"metadata": {"path": str(workdir)}}).execute()
    printed = "".join(o.get("text", "") for o in notebook.cells[1].outputs if o.get("name") == "stdout")
    assert printed, notebook.cells[1].outputs
    assert printed.startswith(str(venv))
    card = [o for o in notebook.cells[2].outputs if o.output_type == "display_data"]
    assert card and "ERR_INVALID_RUN_INPUT" in card[0].data["text/html"]
    assert failed[2]["ename"] == "InvalidRunInputError"                 # the cell fails (Run all stops there)
    assert not [o for o in notebook.cells[2].outputs if o.output_type == "error"]   # with its card alone

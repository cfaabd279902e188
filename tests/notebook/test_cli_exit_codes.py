"""The ``footprint-lab`` console script's exit codes, run for real in a subprocess (issue 24).

A refused input used to end in a traceback and exit 1, which a CI job reads as "findings". Now
every subcommand exits 0 when clean, 1 on findings (a match, a broken seal, a lint error) and
2 when an input is refused (a missing, unreadable, malformed or too deeply nested file, an
output folder that does not exist, a bad option), with one line on stderr naming the refusal's
code and no traceback. Given several files, each is handled and the worst outcome wins. A bug
exits 3. Every ``--help`` lists the codes.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from notebook_kit import composed_run, leaky_run, notebook_with

import footprint_lab
from footprint_lab import Agent, seal
from footprint_lab.notebook import cli
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME

SCRIPT = Path(sys.executable).with_name("footprint-lab")
#: the subprocess imports the footprint_lab this test process imports
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(Path(footprint_lab.__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])}
SUBCOMMANDS = ("scan", "scrub", "html", "verify", "lint-tools")


def run(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=ENV, timeout=300,
                          check=False)


def refused(result: subprocess.CompletedProcess[str], *codes: str) -> None:
    """Exit 2, one stderr line per refused input, each naming its code, and no traceback."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Error:" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert [code for line, code in zip(lines, codes, strict=True) if line.startswith("footprint-lab: ")
            and code in line] == list(codes), result.stderr


def usage_refused(result: subprocess.CompletedProcess[str]) -> None:
    """Exit 2 with argparse's usage and one error line, no traceback."""
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("footprint-lab ")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cli")
    clean_run = Agent(provider=mock(reply="All orders shipped."), seal=True).run_sync("Where are my orders?")
    clean = notebook_with([clean_run], folder / "clean.ipynb")
    leaky = notebook_with([leaky_run()], folder / "leaky.ipynb")
    deep = folder / "deep.ipynb"
    assert '"metadata": {}' in clean.read_text()
    deep.write_text(clean.read_text().replace('"metadata": {}', '"metadata": {"x": ' + "[" * 5000 + "]" * 5000 + "}",
                                              1))
    broken = folder / "broken.ipynb"
    broken.write_text(clean.read_text().replace("All orders shipped.", "No order shipped."))
    newer = folder / "newer.ipynb"
    notebook = json.loads(clean.read_text())
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if RECORDING_MIME in output.get("data", {}):
                output["data"][RECORDING_MIME]["schema_version"] = 999
    newer.write_text(json.dumps(notebook))
    composed = json.loads(seal(composed_run().recording).model_dump_json())
    looped = folder / "looped.json"
    looped.write_text(json.dumps({**composed, "children": [copy.deepcopy(composed)]}))
    deep_json = folder / "deep.json"
    compact = json.dumps(composed, separators=(",", ":"))
    assert '"meta":{}' in compact
    deep_json.write_text(compact.replace('"meta":{}', '"meta":{"x":' + '{"k":' * 3000 + "0" + "}" * 3000 + "}", 1))
    good_tools = folder / "good-tools.json"
    good_tools.write_text(json.dumps([{"name": "get_weather", "description": "Returns the weather for a city. Use "
                                       "when the user asks about weather."}]))
    bad_tools = folder / "bad-tools.json"
    bad_tools.write_text(json.dumps([{"name": "lookup"}]))
    deep_tools = folder / "deep-tools.json"
    deep_tools.write_text("[" * 4000 + "]" * 4000)
    binary_tools = folder / "binary-tools.json"
    binary_tools.write_bytes(b"\xff\xfe\x00[\x80\x81")
    return {"folder": folder, "clean": clean, "leaky": leaky, "deep": deep, "broken": broken, "newer": newer,
            "looped": looped, "deep_json": deep_json, "good_tools": good_tools, "bad_tools": bad_tools,
            "deep_tools": deep_tools, "binary_tools": binary_tools, "missing": folder / "missing.ipynb"}


def test_scan_exits_0_clean_1_on_findings_and_2_when_a_notebook_is_refused(files: dict[str, Path]) -> None:
    assert run("scan", files["clean"]).returncode == 0
    found = run("scan", files["leaky"])
    assert found.returncode == 1 and "openai_key" in found.stdout and found.stderr == ""
    mixed = run("scan", files["leaky"], files["missing"], files["deep"])
    refused(mixed, "ERR_NOTEBOOK_FILE", "ERR_NOTEBOOK_FILE")
    assert "openai_key" in mixed.stdout  # the readable notebook was still scanned
    assert "no file exists there" in mixed.stderr and "deeper than 100 levels" in mixed.stderr


def test_scrub_and_html_refuse_an_output_folder_that_does_not_exist(files: dict[str, Path]) -> None:
    nowhere = files["folder"] / "no-such-folder"
    refused(run("scrub", files["leaky"], "--out", nowhere / "clean.ipynb"), "ERR_NOTEBOOK_FILE")
    result = run("html", files["clean"], "--out", nowhere / "page.html")
    refused(result, "ERR_NOTEBOOK_FILE")
    assert "'out'" in result.stderr and "does not exist" in result.stderr and "no-such-folder" not in result.stderr
    refused(run("html", files["deep"], "--out", files["folder"] / "page.html"), "ERR_NOTEBOOK_FILE")
    refused(run("html", files["clean"], "--out", files["folder"]), "ERR_NOTEBOOK_FILE")  # a folder, not a file
    assert not nowhere.exists() and not (files["folder"] / "page.html").exists()
    assert run("html", files["clean"], "--out", files["folder"] / "page.html").returncode == 0
    assert run("scrub", files["leaky"], "--out", files["folder"] / "scrubbed.ipynb").returncode == 0


def test_html_takes_its_page_as_a_short_o_too(files: dict[str, Path]) -> None:
    short, long = files["folder"] / "short.html", files["folder"] / "long.html"
    assert run("html", files["clean"], "-o", short).returncode == 0
    assert run("html", files["clean"], "--out", long).returncode == 0
    assert all("<html" in page.read_text(encoding="utf-8").lower() for page in (short, long))
    refused(run("html", files["clean"], "-o", files["folder"] / "no-such-folder" / "page.html"), "ERR_NOTEBOOK_FILE")
    usage_refused(run("html", files["clean"], "-o"))  # the flag without its path
    assert "-o OUT, --out OUT" in run("html", "--help").stdout


def test_a_bad_option_is_a_refusal_too(files: dict[str, Path]) -> None:
    usage_refused(run("scrub", files["leaky"], files["clean"], "--out", files["folder"] / "x.ipynb"))
    usage_refused(run("scan", "--only", files["clean"]))
    usage_refused(run("html", files["clean"]))  # --out is required
    refused(run("lint-tools", files["good_tools"], "--threshold", "7"), "ERR_TOOL_CATALOG")


def test_verify_exits_1_on_a_broken_seal_and_2_on_what_it_cannot_check(files: dict[str, Path]) -> None:
    assert run("verify", files["clean"]).returncode == 0
    broken = run("verify", files["broken"])
    assert broken.returncode == 1 and "seal broken" in broken.stdout and broken.stderr == ""
    newer = run("verify", files["newer"])
    assert newer.returncode == 2 and "not checked" in newer.stdout and "999" in newer.stdout
    refused(run("verify", files["looped"]), "ERR_INVALID_RECORDING")
    refused(run("verify", files["deep_json"], files["deep"]), "ERR_INVALID_RECORDING", "ERR_NOTEBOOK_FILE")
    refused(run("verify", files["broken"], files["missing"]), "ERR_NOTEBOOK_FILE")  # 2 over 1


def test_lint_tools_exits_1_on_errors_and_2_on_a_catalog_it_cannot_read(files: dict[str, Path]) -> None:
    assert run("lint-tools", files["good_tools"]).returncode == 0
    assert run("lint-tools", files["bad_tools"]).returncode == 1
    for catalog in ("deep_tools", "binary_tools", "missing"):
        refused(run("lint-tools", files[catalog]), "ERR_TOOL_CATALOG")


def test_every_help_lists_the_exit_codes() -> None:
    for args in ([], *([name] for name in SUBCOMMANDS)):
        shown = run(*args, "--help")
        assert shown.returncode == 0
        for line in ("exit codes:", "  0  clean", "  1  findings", "  2  an input was refused", "  3  footprint-lab"):
            assert line in shown.stdout, (args, line)


def test_a_bug_exits_3_not_1(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    import footprint_lab.notebook as notebook

    def broken_scan(path: Any, *, redact: Any) -> Any:
        raise KeyError("an internal slip")

    monkeypatch.setattr(notebook, "scan", broken_scan)
    assert cli.main(["scan", str(files["clean"])]) == 3
    error = capsys.readouterr().err
    assert "internal error (KeyError)" in error and "an internal slip" not in error and "Traceback" not in error

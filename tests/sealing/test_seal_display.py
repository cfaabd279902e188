"""The seal covers what a notebook displays, and is checked on the saved data (issue 27).

A sealed run shown in a notebook output carries its recording; that copy's seal now also holds
the SHA-256 of what the output displays (``text/plain``, ``text/html``, an image...). ``footprint-lab
verify`` fails (exit 1) with the cell, the output and the MIME type named when a displayed value is
edited, added or removed, and stays clean on an untouched notebook and on one nbformat re-saved
(lines split or joined, a final line break, CRLF, base64 wrapped). A scrub that masks a display
binds the masked display again, naming the policy; a display edited before the scrub stays broken.
A seal (``sha256-chain/6``) is checked on the JSON data with no model built; a copy that holds no display
(a recording put into an output by hand) is checked as a recording.
"""

from __future__ import annotations

import base64
import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_kit import OPENAI_KEY, composed_run, displayed
from paths_kit import TESTS
from test_cli_exit_codes import ENV, SCRIPT

from footprint_lab import Agent, Redaction, define_tool, load_recording, verify
from footprint_lab.notebook import export, load_runs, scrub, verify_file
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME
from footprint_lab.sealing.output_seal import bind_display, display_verdict
from footprint_lab.sealing.seal import ALGORITHM

RECORDINGS = TESTS / "recordings"


def sealed_run(answer: str = "Refund 42 approved.") -> Any:
    lookup = define_tool(name="lookup", description="Look an order up.",
                         input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                         fn=lambda order: {"order": order, "status": "delivered"})
    return Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": "42"}}, answer]), tools=[lookup],
                 seal=True).run_sync("Where is order 42?")


def notebook(path: Path, *outputs: Any) -> Path:
    cells = [nbformat.v4.new_markdown_cell("# Review")]
    for output in outputs:
        cell = nbformat.v4.new_code_cell("run")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="shown below\n"), output]
        cells.append(cell)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def cli(*args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "verify", *map(str, args)], capture_output=True, text=True, env=ENV,
                          timeout=300, check=False)


def edit(path: Path, change: Any) -> Path:
    """The notebook at ``path`` with ``change(data of cell 1's output 1)`` applied, written as raw JSON."""
    data = json.loads(path.read_text())
    change(data["cells"][1]["outputs"][1]["data"])
    path.write_text(json.dumps(data, indent=1))
    return path


def test_a_displayed_sealed_run_holds_its_display_and_verifies_clean(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run()), displayed(composed_run(sealed=True)))
    verdicts = verify_file(path)
    assert [(where, v.status, v.display) for where, v in verdicts] == [
        ("cell 1, output 1", "holds", True), ("cell 2, output 1", "holds", True)]
    result = cli(path)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.count("and so is what this output displays") == 2
    saved = json.loads(path.read_text())["cells"][1]["outputs"][1]["data"]
    assert saved[RECORDING_MIME]["seal"]["algorithm"] == ALGORITHM
    assert set(saved[RECORDING_MIME]["seal"]["display"]) == {"text/plain", "text/html"}
    assert isinstance(saved["text/html"], list)  # nbformat wrote it as lines: the digest reads them joined
    (run, _) = load_runs(path)
    assert verify(run).holds  # the loaded copy's seal, display digests included, still holds


@pytest.mark.parametrize(("mime", "change"), [
    ("text/html", lambda html: html.replace("approved", "declined")),
    ("text/html", lambda html: html + "<p>an extra line</p>"),
    ("text/html", lambda html: html.replace("<", " <", 1)),
    ("text/plain", lambda text: text.upper()),
    ("text/plain", lambda text: ""),
])
def test_an_edited_display_fails_naming_the_cell_output_and_mime_type(tmp_path: Path, mime: str, change: Any) -> None:
    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run()))

    def forge(data: dict[str, Any]) -> None:
        value = data[mime]
        data[mime] = change("".join(value) if isinstance(value, list) else value)

    edit(path, forge)
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.status, verdict.kind, verdict.field) == ("cell 1, output 1", "broken", "display", mime)
    result = cli(path)
    assert result.returncode == 1
    assert f"cell 1, output 1: seal broken at display.{mime}: is not what was displayed" in result.stdout
    assert "declined" not in result.stdout and "extra line" not in result.stdout  # the forged text is not quoted


def test_a_display_added_or_removed_fails_too(tmp_path: Path) -> None:
    added = edit(notebook(tmp_path / "a.ipynb", displayed(sealed_run())),
                 lambda data: data.update({"text/markdown": "**all fine**"}))
    ((_, verdict),) = verify_file(added)
    assert (verdict.kind, verdict.field) == ("display", "text/markdown") and "added" in verdict.problem
    removed = edit(notebook(tmp_path / "r.ipynb", displayed(sealed_run())), lambda data: data.pop("text/html"))
    ((_, verdict),) = verify_file(removed)
    assert (verdict.kind, verdict.field) == ("display", "text/html") and "removed" in verdict.problem
    assert cli(added, removed).returncode == 1


def test_an_edited_image_fails_and_a_rewrapped_one_holds(tmp_path: Path) -> None:
    run = sealed_run()
    image = base64.b64encode(bytes(range(256)) * 4).decode()
    bundle = bind_display({**run._repr_mimebundle_(), "image/png": image})
    output = nbformat.v4.new_output("display_data", data=json.loads(json.dumps(bundle)))
    path = notebook(tmp_path / "i.ipynb", output)
    assert verify_file(path)[0][1].holds
    wrapped = edit(path, lambda data: data.update({"image/png": "\n".join(image[k:k + 76]
                                                                           for k in range(0, len(image), 76)) + "\n"}))
    assert verify_file(wrapped)[0][1].holds  # base64 read without its line breaks
    forged = base64.b64encode(bytes(range(255, -1, -1)) * 4).decode()
    edit(path, lambda data: data.update({"image/png": forged}))
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.kind, verdict.field) == ("cell 1, output 1", "display", "image/png")


def test_a_notebook_resaved_by_nbformat_stays_clean(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run()), displayed(composed_run(sealed=True)))
    nbformat.write(nbformat.read(path, as_version=4), path)  # read and written again
    assert all(v.holds and v.display for _, v in verify_file(path))

    def normalised(data: dict[str, Any]) -> None:
        html, plain = data["text/html"], data["text/plain"]
        # lines joined into one string, or one string split into lines
        data["text/html"] = "".join(html) if isinstance(html, list) else html.splitlines(keepends=True)
        text = "".join(plain) if isinstance(plain, list) else plain
        data["text/plain"] = text.replace("\n", "\r\n") + "\n"  # CRLF, and a final line break

    edit(path, normalised)
    assert all(v.holds for _, v in verify_file(path))
    assert cli(path).returncode == 0


def test_verify_reads_the_new_chain_on_the_data_and_names_a_broken_record_the_long_way(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run()))
    data = json.loads(path.read_text())["cells"][1]["outputs"][1]["data"]
    assert verify(data[RECORDING_MIME]).holds
    member = json.loads(json.dumps(composed_run(sealed=True)._repr_mimebundle_()))[RECORDING_MIME]
    assert verify(member).holds  # members checked too
    forged = copy.deepcopy(data)
    forged[RECORDING_MIME]["answer"] = "Refund 43 approved."
    assert not verify(forged[RECORDING_MIME]).holds
    edit(path, lambda out: out[RECORDING_MIME].update(answer="Refund 43 approved."))
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "header", "answer")
    assert display_verdict(data) is None


def test_a_saved_recording_verifies_on_its_data_and_in_an_output_that_holds_no_display(tmp_path: Path) -> None:
    saved = json.loads((RECORDINGS / "planted_fact.json").read_text())
    assert saved["seal"]["algorithm"] == ALGORITHM
    assert verify(load_recording(json.dumps(saved))).holds
    saved["answer"] = "something else"
    verdict = verify(load_recording(json.dumps(saved)))
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "header", "answer")
    output = nbformat.v4.new_output("display_data", data={"text/plain": "an old run",
                                                          RECORDING_MIME: json.loads((RECORDINGS / "planted_fact.json")
                                                                                     .read_text())})
    ((_, verdict),) = verify_file(notebook(tmp_path / "old.ipynb", output))
    assert verdict.holds and not verdict.display and "displays" not in str(verdict)  # shown before displays were held


def test_export_holds_its_displays_and_a_scrub_binds_what_it_masked(tmp_path: Path) -> None:
    path = export([sealed_run(f"Rotate {OPENAI_KEY} today.")], tmp_path / "e.ipynb", title="Review")
    assert [(v.status, v.display) for _, v in verify_file(path)] == [("holds", True)]
    scrub(path, redact=Redaction(builtins=["openai_key"]))
    assert OPENAI_KEY not in path.read_text()
    ((_, verdict),) = verify_file(path)
    assert verdict.holds and verdict.display and verdict.scrubbed == ("openai_key",)
    cleaned = export([sealed_run(f"Rotate {OPENAI_KEY} today.")], tmp_path / "r.ipynb", title="Review",
                     redact=Redaction(builtins=["openai_key"]))
    assert all(v.holds and v.display for _, v in verify_file(cleaned))


def test_a_display_edited_before_a_scrub_stays_broken(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run(f"Rotate {OPENAI_KEY} today.")))
    edit(path, lambda data: data.update({"text/plain": f"All clear, nothing to rotate {OPENAI_KEY}"}))
    scrub(path, redact=Redaction(builtins=["openai_key"]))
    ((_, verdict),) = verify_file(path)
    # the scrub masked the key in the view too, so the first MIME type named may be either; both differ
    assert (verdict.status, verdict.kind) == ("broken", "display") and verdict.field in ("text/html", "text/plain")
    assert cli(path).returncode == 1


def test_a_run_displayed_in_a_real_kernel_holds_its_display(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    source = ("from footprint_lab import Agent\nfrom footprint_lab.providers import mock\n"
              "run = Agent(provider=mock(reply='Refund 42 approved.'), seal=True).run_sync('Where is order 42?')\nrun")
    notebook_node = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Review"),
                                                    nbformat.v4.new_code_cell(source)])
    NotebookClient(notebook_node, timeout=300, kernel_name="python3").execute()
    path = tmp_path / "executed.ipynb"
    nbformat.write(notebook_node, path)
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.status, verdict.display) == ("cell 1, output 0", "holds", True)
    data = json.loads(path.read_text())
    shown = data["cells"][1]["outputs"][0]["data"]
    shown["text/html"] = "".join(shown["text/html"]).replace("approved", "declined")
    path.write_text(json.dumps(data))
    result = cli(path)
    assert result.returncode == 1 and "cell 1, output 0: seal broken at display.text/html" in result.stdout


def test_a_recording_stored_as_json_text_is_held_to_its_display_too(tmp_path: Path) -> None:
    # nbformat lets a JSON MIME type be stored as a string, and the recording door reads one: stored so,
    # the copy's display digests must still be checked, or turning the object into text would switch them off
    path = edit(notebook(tmp_path / "n.ipynb", displayed(sealed_run())),
                lambda data: data.update({RECORDING_MIME: json.dumps(data[RECORDING_MIME])}))
    ((_, verdict),) = verify_file(path)
    assert verdict.holds and verdict.display
    forged = edit(path, lambda data: data.update({"text/plain": "Refund 4200 approved, no review needed."}))
    ((where, verdict),) = verify_file(forged)
    assert (where, verdict.status, verdict.kind, verdict.field) == ("cell 1, output 1", "broken", "display",
                                                                    "text/plain")
    assert cli(forged).returncode == 1


@pytest.mark.parametrize("change", [
    lambda recording: recording.update({"reviewed_by": "compliance: approved"}),  # not a field a recording has
    lambda recording: recording.update({"annotations": [{"target": "answer"}]}),  # a note the schema refuses
    lambda recording: recording.update({"annotations": None}),  # no list at all, though nothing falsy is a note
    lambda recording: recording.update({"annotations": {}}),
    lambda recording: recording.update({"children": None}),
])
def test_data_the_recording_door_refuses_is_never_said_to_hold(tmp_path: Path, change: Any) -> None:
    # what the seal leaves out (a key it does not know, the notes) is still held to the schema: the check on
    # the saved data must not say "holds" where loading the recording refuses it
    path = edit(notebook(tmp_path / "n.ipynb", displayed(sealed_run())), lambda data: change(data[RECORDING_MIME]))
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.kind) == ("broken", "recording")
    assert cli(path).returncode == 1
    with pytest.warns(UserWarning):
        assert load_runs(path) == []  # the same data the views would refuse, skipped with a warning


# -- a display that shows a seal nothing backs (issue 46) -------------------------------------------
def forged_approval(data: dict[str, Any], *, keep: tuple[str, ...] = ("text/html", "text/plain")) -> None:
    """The forger's edit: DECLINED made APPROVED where ``keep`` says, the recording deleted."""
    for mime in keep:
        value = data[mime]
        data[mime] = ("".join(value) if isinstance(value, list) else value).replace("DECLINED", "APPROVED")
    data.pop(RECORDING_MIME)


@pytest.mark.parametrize("edited", [("text/html", "text/plain"), ("text/html",), ("text/plain",), ()],
                         ids=["html-and-text", "html-only", "text-only", "nothing-edited"])
def test_a_sealed_display_whose_recording_is_deleted_is_broken_and_fails_verify(tmp_path: Path,
                                                                                edited: tuple[str, ...]) -> None:
    path = edit(notebook(tmp_path / "n.ipynb", displayed(sealed_run("Refund 42 DECLINED."))),
                lambda data: forged_approval(data, keep=edited))
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.status, verdict.kind, verdict.field) == ("cell 1, output 1", "broken", "display",
                                                                    "text/html")
    assert "carries no recording" in verdict.problem
    for flags in ([], ["--require-seal"]):
        result = cli(*flags, path)
        assert result.returncode == 1 and "cell 1, output 1: seal broken at display.text/html" in result.stdout
        assert "APPROVED" not in result.stdout


@pytest.mark.parametrize("strip", ["metadata", "badge-attribute", "badge-markup"])
def test_a_seal_claimed_in_any_markup_or_without_metadata_is_still_seen(tmp_path: Path, strip: str) -> None:
    def forge(output: dict[str, Any]) -> None:
        forged_approval(output["data"])
        html = output["data"]["text/html"]
        if strip == "metadata":
            output["metadata"] = {}
        elif strip == "badge-attribute":  # the words stay: a reader still sees them
            output["data"]["text/html"] = html.replace("data-fl-seal=", "data-x=")
        else:  # the words alone, marked up anew
            output["data"]["text/html"] = (html.replace("data-fl-seal=", "data-x=")
                                           .replace("sealed · verified", "<b>Sealed</b> &middot;\n <i>verified</i>"))

    data = json.loads(notebook(tmp_path / "n.ipynb", displayed(sealed_run("Refund 42 DECLINED."))).read_text())
    forge(data["cells"][1]["outputs"][1])
    path = tmp_path / "forged.ipynb"
    path.write_text(json.dumps(data))
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "display", "text/html")


def test_a_forged_display_is_broken_wherever_it_is_moved_or_copied(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run("Refund 42 DECLINED.")),
                    displayed(sealed_run("Refund 7 DECLINED.")))
    data = json.loads(path.read_text())
    genuine = data["cells"][1]["outputs"][1]
    forged = copy.deepcopy(genuine)
    forged_approval(forged["data"])
    data["cells"][2]["outputs"].insert(0, forged)  # moved into another cell, before that cell's own output
    data["cells"][1]["outputs"].append(copy.deepcopy(forged))  # and copied beside the genuine one
    data["cells"][2]["outputs"].append(copy.deepcopy(genuine))  # a genuine copy shown twice still holds
    path.write_text(json.dumps(data))
    verdicts = {where: (verdict.status, verdict.kind) for where, verdict in verify_file(path)}
    assert verdicts == {"cell 1, output 1": ("holds", None), "cell 1, output 2": ("broken", "display"),
                        "cell 2, output 0": ("broken", "display"), "cell 2, output 2": ("holds", None),
                        "cell 2, output 3": ("holds", None)}


@pytest.mark.parametrize("kind", ["stream", "error", None])
def test_a_recording_in_an_output_that_no_longer_displays_its_data_is_broken(tmp_path: Path, kind: Any) -> None:
    def retype(output: dict[str, Any]) -> None:
        if kind is None:
            output.pop("output_type")
        else:
            output.update(output_type=kind, name="stdout", text="Refund 42 APPROVED.\n")

    data = json.loads(notebook(tmp_path / "n.ipynb", displayed(sealed_run("Refund 42 DECLINED."))).read_text())
    retype(data["cells"][1]["outputs"][1])
    path = tmp_path / "retyped.ipynb"
    path.write_text(json.dumps(data))
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.status, verdict.kind, verdict.field) == ("cell 1, output 1", "broken", "display",
                                                                    "output_type")
    assert cli(path).returncode == 1


def test_an_execute_result_holds_like_a_display(tmp_path: Path) -> None:
    output = displayed(sealed_run())
    result = nbformat.v4.new_output("execute_result", data=output["data"], execution_count=1)
    ((_, verdict),) = verify_file(notebook(tmp_path / "n.ipynb", result))
    assert verdict.holds and verdict.display


@pytest.mark.parametrize("unseal", ["seal-removed", "seal-display-removed"])
def test_a_display_whose_seal_was_taken_from_its_recording_is_broken(tmp_path: Path, unseal: str) -> None:
    def forge(data: dict[str, Any]) -> None:
        data["text/html"] = "".join(data["text/html"]).replace("DECLINED", "APPROVED")
        if unseal == "seal-removed":
            data[RECORDING_MIME].pop("seal")
            data[RECORDING_MIME]["answer"] = "Refund 42 APPROVED."
        else:
            data[RECORDING_MIME]["seal"].pop("display")

    path = edit(notebook(tmp_path / "n.ipynb", displayed(sealed_run("Refund 42 DECLINED."))), forge)
    ((_, verdict),) = verify_file(path)
    assert verdict.status == "broken"
    assert (verdict.kind, verdict.field) == (("display", "text/html") if unseal == "seal-removed" else ("seal", "head"))
    assert cli("--require-seal", path).returncode == 1


def test_what_is_shown_without_a_seal_claim_is_left_alone(tmp_path: Path) -> None:
    unsealed = Agent(provider=mock(reply="Refund 42 approved.")).run_sync("Where is order 42?")
    plain = nbformat.v4.new_output("display_data", data={"text/html": "<p>The seal on the envelope was verified "
                                                                      "by hand.</p>", "text/plain": "ok"})
    printed = nbformat.v4.new_output("stream", name="stdout", text="sealed and verified by the clerk\n")
    verdicts = verify_file(notebook(tmp_path / "n.ipynb", displayed(unsealed), plain, printed))
    assert [(where, verdict.status) for where, verdict in verdicts] == [("cell 1, output 1", "unsealed")]


def test_the_offline_page_does_not_draw_a_forged_seal(tmp_path: Path) -> None:
    from footprint_lab.notebook import to_html

    path = notebook(tmp_path / "n.ipynb", displayed(sealed_run("Refund 42 DECLINED.")),
                    displayed(sealed_run("Refund 7 DECLINED.")))
    data = json.loads(path.read_text())
    forged_approval(data["cells"][1]["outputs"][1]["data"])
    retyped = data["cells"][2]["outputs"][1]
    retyped.update(output_type="stream", name="stdout", text="Refund 7 APPROVED. sealed · verified\n")
    path.write_text(json.dumps(data))
    page = to_html(path, tmp_path / "page.html").read_text()
    assert "APPROVED" not in page and "sealed · verified" not in page
    assert page.count("not shown: seal broken at display.") == 2


def test_the_lab_badge_is_what_the_claim_check_reads() -> None:
    from footprint_lab.lab.views.answer import seal_badge
    from footprint_lab.notebook.seal_claims import seal_claim

    run = sealed_run()
    assert seal_claim({"data": {"text/html": seal_badge(run.recording)}}) == "text/html"
    badge = seal_badge(run.recording).replace("data-fl-seal=", "data-x=")
    assert seal_claim({"data": {"text/html": badge}}) == "text/html"  # the words alone still claim it


def test_a_sealed_run_too_large_to_carry_its_recording_claims_no_seal_its_output_cannot_back(tmp_path: Path) -> None:
    """A genuine view that leaves its recording out (over the output budget; a slots view) says only that the run
    was sealed, with no seal mark: verify finds nothing to hold it to, and nothing broken."""
    from footprint_lab.lab.views import run_bundle, slots_view

    run = sealed_run()
    carried = run_bundle(run.recording)
    assert RECORDING_MIME in carried and "sealed · verified" in carried["text/html"]
    left_out = run_bundle(run.recording, budget=1_000)
    assert RECORDING_MIME not in left_out
    for html in (left_out["text/html"], slots_view(run.recording, run.recording.exchanges[0])):
        assert "sealed · recording not kept in this output" in html
        assert "sealed · verified" not in html and "data-fl-seal" not in html
    shown = nbformat.v4.new_output("display_data", data=left_out)
    path = notebook(tmp_path / "n.ipynb", shown)
    assert all(verdict.status != "broken" for _, verdict in verify_file(path))
    assert cli(path).returncode == 0

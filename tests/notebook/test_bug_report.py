"""run.bug_report / chat.bug_report: a zip holding the masked evidence and saying what it holds, and no secret."""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from footprint_lab import Agent, Chat, Redaction, Run, define_tool
from footprint_lab.errors import BugReportError, NotebookFileError, SharingConfigError
from footprint_lab.notebook import load_runs
from footprint_lab.providers import mock
from footprint_lab.redact.base64_words import base64_texts

PASSWORD = "hunter2-Zq81"
CARD = "4111-2222-3333-4444"
TOKEN = "tok_live_9f8e7d6c"
POLICY = Redaction(keys=["password", "api_token"], patterns={"card": r"\d{4}(?:-\d{4}){3}"})


def account_agent(redact: Redaction | None = POLICY, answer: str | None = None) -> Agent:
    tool = define_tool(name="lookup_account", description="Look up the account.",
                       fn=lambda: {"password": PASSWORD, "api_token": TOKEN, "owner": "Maria Lopez"})
    reply = answer or f"Linked card {CARD}; your password is {PASSWORD} and the token {TOKEN}."
    return Agent(provider=mock(replies=[{"tool": "lookup_account", "args": {}}, reply]), tools=[tool], redact=redact,
                 system="Support desk.")


def unzipped(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as bundle:
        return {name: bundle.read(name) for name in bundle.namelist()}


def assert_free_of(files: dict[str, bytes], *values: str) -> None:
    for name, data in files.items():
        for value in values:
            for form in (value, value.replace("-", ""), json.dumps(value)[1:-1]):
                assert form.encode() not in data, f"{name} holds a redacted value"


async def test_the_bundle_holds_no_value_the_policy_covers(tmp_path: Path) -> None:
    agent = account_agent()
    run = await agent.run(f"My card is {CARD}, my password {PASSWORD}.")
    path = run.bug_report(tmp_path / "report.zip", runner=agent)
    files = unzipped(path)
    assert set(files) == {"manifest.json", "recordings/run-0.json", "report.ipynb", "view.html", "environment.json",
                          "provider.json"}
    assert_free_of(files, PASSWORD, CARD, TOKEN)
    assert b"[redacted:" in files["recordings/run-0.json"] and b"[redacted:" in files["view.html"]


async def test_the_manifest_lists_every_file_and_what_it_holds(tmp_path: Path) -> None:
    agent = account_agent()
    files = unzipped((await agent.run("Hello.")).bug_report(tmp_path / "r.zip", runner=agent))
    manifest = json.loads(files["manifest.json"])
    listed = {entry["name"]: entry for entry in manifest["files"]}
    assert set(listed) == set(files)
    assert all(entry["holds"] for entry in listed.values())
    assert all(entry["bytes"] == len(files[name]) for name, entry in listed.items() if name != "manifest.json")
    assert manifest["redaction"] == {"keys": ["api_token", "password"], "patterns": ["card"]}
    assert manifest["scan"].startswith("clean")
    environment = json.loads(files["environment.json"])
    assert environment["footprint_lab"] and environment["python"].count(".") == 2
    assert json.loads(files["provider.json"]) == {"provider": "mock", "models": ["mock-model"], "endpoints": []}


async def test_the_recording_in_the_bundle_still_explains(tmp_path: Path) -> None:
    agent = account_agent()
    run = await agent.run("Hello.")
    files = unzipped(run.bug_report(tmp_path / "r.zip", runner=agent))
    (tmp_path / "report.ipynb").write_bytes(files["report.ipynb"])
    (loaded,) = load_runs(tmp_path / "report.ipynb")
    assert loaded.answer == run.recording.answer
    assert [c.source_id for c in loaded.backtrack().candidates] == [c.source_id for c in run.backtrack().candidates]
    from footprint_lab import load_recording

    again = Run.from_recording(load_recording(files["recordings/run-0.json"].decode()))
    assert again.recording.answer == run.recording.answer


async def test_a_policy_given_to_the_report_masks_a_run_recorded_without_one(tmp_path: Path) -> None:
    run = await account_agent(redact=None).run(f"My card is {CARD}.")
    assert PASSWORD in run.recording.model_dump_json()
    files = unzipped(run.bug_report(tmp_path / "r.zip", redact=POLICY))
    assert_free_of(files, PASSWORD, CARD, TOKEN)


async def test_without_a_policy_the_manifest_says_so(tmp_path: Path) -> None:
    run = await Agent(provider=mock(reply="Hi.")).run("Hello.")
    manifest = json.loads(unzipped(run.bug_report(tmp_path / "r.zip"))["manifest.json"])
    assert manifest["redaction"] is None and manifest["scan"].startswith("no redaction policy")


async def test_a_chat_files_every_turn(tmp_path: Path) -> None:
    chat = Chat(account_agent(answer=f"Done, {PASSWORD} checked."))
    await chat.send(f"Card {CARD}.")
    await chat.send("And again?")
    files = unzipped(chat.bug_report(tmp_path / "chat.zip"))
    assert {"recordings/run-0.json", "recordings/run-1.json"} <= set(files)
    assert_free_of(files, PASSWORD, CARD, TOKEN)
    assert json.loads(files["provider.json"])["provider"] == "mock"


@pytest.mark.parametrize("redact", ["password", {"keys": ["password"]}, 3])
async def test_a_policy_that_is_not_a_redaction_is_refused(tmp_path: Path, redact: Any) -> None:
    run = await Agent(provider=mock(reply="Hi.")).run("Hello.")
    with pytest.raises(SharingConfigError):
        run.bug_report(tmp_path / "r.zip", redact=redact)
    assert not (tmp_path / "r.zip").exists()


async def test_a_path_in_a_missing_folder_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    run = await Agent(provider=mock(reply="Hi.")).run("Hello.")
    with pytest.raises(NotebookFileError):
        run.bug_report(tmp_path / "nowhere" / "r.zip")


async def test_a_credential_in_base64_inside_a_tool_result_is_not_in_the_bundle(tmp_path: Path) -> None:
    header = "Basic " + base64.b64encode(f"maria:{PASSWORD}".encode()).decode()
    tool = define_tool(name="lookup_account", description="Look up the account.",
                       fn=lambda: {"password": PASSWORD, "sent": {"Authorization": header}})
    agent = Agent(provider=mock(replies=[{"tool": "lookup_account", "args": {}}, "Checked."]), tools=[tool])
    run = await agent.run("Check my account.")  # recorded without a policy: the report's policy masks it
    files = unzipped(run.bug_report(tmp_path / "report.zip", redact=Redaction(keys=["password"])))
    assert_free_of(files, PASSWORD, header.split()[1])
    for name, data in files.items():
        assert not any(PASSWORD in text for text in base64_texts(data.decode())), name


async def test_when_masking_leaves_a_covered_value_no_bundle_is_written(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from footprint_lab.notebook import bug_bundle as _bug_report

    real = _bug_report.export
    # a masking gap, as a defect in export would leave one: the scan after it is what stops the bundle
    monkeypatch.setattr(_bug_report, "export", lambda runs, path, *, title, redact: real(runs, path, title=title))
    run = await account_agent(redact=None).run("Hello.")
    target = tmp_path / "report.zip"
    with pytest.raises(BugReportError) as refused:
        run.bug_report(target, redact=POLICY)
    assert refused.value.code == "ERR_BUG_REPORT" and refused.value.places > 0
    assert not target.exists()
    assert all(value not in str(refused.value) for value in (PASSWORD, CARD, TOKEN))

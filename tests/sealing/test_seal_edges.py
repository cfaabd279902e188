"""Edges of the seal a hostile review found: a broken seal is named at the record that changed even when
the kind is written by the standard library's encoder; copies that the saved-data check cannot place are
left to the door, so a forged text is never said to hold; a seal holding parts it does not cover is the
seal altered; a checkpoint sealed by the unreleased 0.1 is refused by name, as a recording is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_seal import lookup_tool

from footprint_lab import Agent, Checkpoint, Recording, verify
from footprint_lab.errors import RecordingVersionError
from footprint_lab.notebook import export, load_runs, verify_file
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME
from footprint_lab.record.schema import UNRELEASED_SEALS


def saved_run(first_args: dict[str, Any], second_args: dict[str, Any]) -> dict[str, Any]:
    replies = [{"tool": "lookup", "args": first_args}, {"tool": "lookup", "args": second_args}, "Both shipped."]
    run = Agent(provider=mock(replies=replies), tools=[lookup_tool()], seal=True).run_sync("Where are they?")
    return json.loads(run.recording.model_dump_json())


@pytest.mark.parametrize("big", [7, 2**70], ids=["orjson", "standard-library"])
def test_an_edit_after_floats_is_named_at_its_record_whichever_encoder_wrote_the_kind(big: int) -> None:
    """A kind holding an integer past 64 bits is written by the standard library's encoder, which spells a float
    such as 1e-05 otherwise than orjson; the locator measures with the encoder that wrote the kind."""
    data = saved_run({"order": "A-1", "weights": [1e-05] * 300}, {"order": big})
    last_end = max(n for n, event in enumerate(data["events"]) if event["type"] == "step_end")
    data["events"][last_end]["payload"]["status"] = "error"
    last_commit = len(data["commits"]) - 1
    data["commits"][last_commit]["entries"][0]["verb"] = "merge"
    verdict = verify(Recording.model_validate(data))
    assert (verdict.kind, verdict.index, verdict.field) == ("commits", last_commit, "entries")
    assert verdict.step_id == data["commits"][last_commit]["step_id"]
    data["commits"][last_commit]["entries"][0]["verb"] = "set"  # back as sealed: only the event differs now
    verdict = verify(Recording.model_validate(data))
    assert (verdict.kind, verdict.index, verdict.field) == ("events", last_end, "payload")


def shown(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    run = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": "A-1"}}, "Shipped."]),
                tools=[lookup_tool()], seal=True).run_sync("Where is A-1?")
    path = tmp_path / "shared.ipynb"
    export([run], path, title="orders")
    return path, json.loads(path.read_text())


def carried(notebook: dict[str, Any]) -> dict[str, Any]:
    (data,) = [output["data"][RECORDING_MIME] for cell in notebook["cells"] for output in cell.get("outputs", [])
               if RECORDING_MIME in output.get("data", {})]
    assert isinstance(data, dict)
    return data


def test_a_text_copied_into_a_table_is_placed_and_the_seal_names_the_edit(tmp_path: Path) -> None:
    """A ``copies`` group naming a place inside a table (where the saved form never writes one) is placed by the
    door once the tables are read back, and the seal names the edit."""
    path, notebook = shown(tmp_path)
    data = carried(notebook)
    assert isinstance(data["events"], dict)  # written as a table
    data["copies"] = [{"of": ["answer"], "at": [["events", 0, "payload", "name"]]}]
    path.write_text(json.dumps(notebook))
    ((_, verdict),) = verify_file(path)
    assert not verdict.holds and (verdict.kind, verdict.index) == ("events", 0)
    (run,) = load_runs(path)
    assert not verify(run).holds


def test_copies_that_are_no_copies_are_left_to_the_door_which_names_them(tmp_path: Path) -> None:
    path, notebook = shown(tmp_path)
    carried(notebook)["copies"] = "anything"
    path.write_text(json.dumps(notebook))
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.field) == ("broken", "copies")


@pytest.mark.parametrize("part", ["kinds", "tags"])
def test_a_seal_holding_a_part_it_does_not_cover_is_the_seal_altered(part: str) -> None:
    data = saved_run({"order": "A-1"}, {"order": "B-2"})
    data["seal"][part]["annotations"] = data["seal"][part]["header"]
    verdict = verify(Recording.model_validate(data))
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "seal", part)
    agent = Agent(provider=mock(reply="Shipped."), seal=True)
    agent.run_sync("Where is A-1?")
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and verify(checkpoint).holds
    saved = json.loads(checkpoint.model_dump_json())
    saved["seal"][part]["history"] = "0" * 64
    verdict = verify(Checkpoint.model_validate(saved))
    assert (verdict.status, verdict.field) == ("broken", part)


@pytest.mark.parametrize("algorithm", UNRELEASED_SEALS)
def test_a_checkpoint_sealed_by_an_earlier_chain_is_refused_by_name_not_called_broken(
        tmp_path: Path, algorithm: str) -> None:
    agent = Agent(provider=mock(reply="Shipped."), seal=True)
    agent.run_sync("Where is A-1?")
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and checkpoint.seal is not None
    checkpoint.seal.algorithm = algorithm
    with pytest.raises(RecordingVersionError) as refused:
        verify(checkpoint)
    assert (refused.value.field, refused.value.version) == ("seal.algorithm", algorithm)
    path = tmp_path / "checkpoint.json"
    path.write_text(checkpoint.model_dump_json())
    ((where, verdict),) = verify_file(path)
    assert (where, verdict.status, verdict.kind) == ("checkpoint", "unsupported", "checkpoint")
    assert str(verdict).startswith("not checked: the checkpoint's 'seal.algorithm'") and algorithm in str(verdict)


@pytest.mark.parametrize("logprob", [float("-inf"), float("nan")], ids=["minus-infinity", "nan"])
def test_a_log_probability_json_cannot_write_is_kept_as_a_saved_run_reads_it_back(tmp_path: Path,
                                                                                  logprob: float) -> None:
    """Minus infinity (a token given no chance) is kept as OpenAI's API spells it, -9999.0; a NaN leaves the
    response with no log-probabilities to tell a margin from. Either way the sealed run saves, loads and holds."""
    from footprint_lab import load_recording
    from footprint_lab.providers.types import NO_CHANCE, LLMResponse, TokenChoice, ToolCall

    replies = iter([LLMResponse(content=None, tool_calls=[ToolCall("c1", "lookup", {"order": "A-1"})],
                                logprobs=[TokenChoice("lookup", logprob, (("lookup", logprob), ("other", -1.0)))]),
                    "Shipped."])
    run = Agent(provider=mock(respond=lambda request: next(replies)), tools=[lookup_tool()],
                seal=True).run_sync("Where is A-1?")
    margins = run.recording.exchanges[0].response.tool_margins
    assert [margin.logprob for margin in margins] == ([NO_CHANCE] if logprob < 0 else [])
    assert verify(load_recording(run.recording.model_dump_json())).holds
    path = tmp_path / "shared.ipynb"
    export([run], path, title="margins")
    assert [verdict.status for _, verdict in verify_file(path)] == ["holds"]
    assert len(load_runs(path)) == 1


def test_a_recording_changed_by_hand_to_hold_what_json_cannot_write_is_refused_by_seal_and_broken_for_verify() -> None:
    from footprint_lab import seal
    from footprint_lab.errors import InvalidRecordingError

    recording = Recording.model_validate(saved_run({"order": "A-1"}, {"order": "B-2"}))
    assert verify(recording).holds
    recording.events[1].payload = {"raw": b"\x00\x01"}
    verdict = verify(recording)
    assert (verdict.status, verdict.kind) == ("broken", "events") and "JSON cannot write" in str(verdict)
    with pytest.raises(InvalidRecordingError) as refused:
        seal(recording)
    assert (refused.value.code, refused.value.door, refused.value.field) == ("ERR_INVALID_RECORDING", "seal", "events")


def test_a_nan_beside_an_integer_past_64_bits_is_sealed_as_a_saved_copy_reads_it() -> None:
    """Such a kind is written by the standard library's encoder, which would spell NaN where orjson and a saved
    recording have null: it writes null too, so the seal holds after a save."""
    from footprint_lab import load_recording, seal

    recording = Recording.model_validate(saved_run({"order": "A-1"}, {"order": "B-2"}))
    recording.events[1].payload = {"big": 2**70, "ratio": float("nan")}
    seal(recording)
    assert verify(recording).holds
    assert verify(load_recording(recording.model_dump_json())).holds


def test_an_edit_whose_locator_tag_happens_to_match_still_blames_the_records_not_the_seal() -> None:
    """A locator tag is 16 bits, so one edit in 65,536 keeps it. The digest still breaks, and while the seal's
    head still chains that digest the records changed: the verdict names the kind, never the seal."""
    import zlib

    replies = [{"tool": "lookup", "args": {"order_id": "A-1"}}, {"tool": "lookup", "args": {"order_id": "A-2"}}, "ok"]
    recording = Agent(provider=mock(replies=replies), tools=[lookup_tool()], seal=True).run_sync("Where?").recording
    step = recording.steps[2]
    tag = zlib.crc32(json.dumps(step.stage).encode()) & 0xFFFF
    twin = next(f"stage-{n}" for n in range(1, 10**7)
                if zlib.crc32(json.dumps(f"stage-{n}").encode()) & 0xFFFF == tag)
    step.stage = twin
    verdict = verify(recording)
    assert (verdict.status, verdict.kind, verdict.problem) == ("broken", "steps", "changed after the run was sealed")
    assert recording.seal is not None
    recording.seal.kinds["steps"] = "0" * 64  # a digest the head does not chain: the seal itself was altered
    assert (verify(recording).kind, verify(recording).field) == ("seal", "kinds.steps")


@pytest.mark.parametrize("key", ["aaa", "name2", "zzz"])
def test_a_key_added_to_a_transcript_message_is_named_at_that_message(key: str) -> None:
    """The messages are cut just after each key, so a stretch runs from one value to the next key's name: a key
    added sorting first in its message once blamed the message before it."""
    replies = [{"tool": "lookup", "args": {"order_id": "A-1"}}, "ok"]
    for n in (1, 2, 3):
        recording = Agent(provider=mock(replies=replies), tools=[lookup_tool()], seal=True).run_sync("?").recording
        recording.messages[n][key] = "added"
        verdict = verify(recording)
        assert (verdict.kind, verdict.index, verdict.field) == ("messages", n, key)

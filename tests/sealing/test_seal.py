"""Sealed recordings: seal, save, load, verify; an edit is named by kind, step and field; notes stay free."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from notebook_kit import OPENAI_KEY, leaky_run, notebook_with

import footprint_lab
from footprint_lab import Agent, LLMCall, Redaction, Sequence, define_tool, load_recording, seal, verify
from footprint_lab.errors import AgentConfigError, SealSourceError
from footprint_lab.lab.views.answer import answer_view
from footprint_lab.notebook import load_runs, scrub, verify_file
from footprint_lab.notebook.cli import main
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME, Recording


def lookup_tool() -> Any:
    return define_tool(name="lookup", description="Look an order up by its id.",
                       input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                       fn=lambda order: {"order": order, "state": "shipped"})


def sealed_run(**settings: Any) -> Any:
    replies = [{"tool": "lookup", "args": {"order": "A-1"}}, {"tool": "lookup", "args": {"order": "B-2"}},
               "Both orders shipped."]
    agent = Agent(provider=mock(replies=replies), tools=[lookup_tool()], seal=True, **settings)
    return agent.run_sync("Where are my orders?")


def test_a_sealed_run_saved_and_loaded_verifies(tmp_path: Path) -> None:
    run = sealed_run()
    assert run.recording.seal is not None
    path = tmp_path / "run.json"
    path.write_text(run.recording.model_dump_json())
    for source in (run, run.recording, path, str(path), path.read_text(), load_recording(path.read_text())):
        verdict = verify(source)
        assert verdict.holds and verdict.status == "holds" and bool(verdict)


def test_editing_one_commits_value_names_that_step_and_field(tmp_path: Path) -> None:
    run = sealed_run()
    data = json.loads(run.recording.model_dump_json())
    index = next(n for n, c in enumerate(data["commits"]) if c["step_id"].startswith("tool"))
    data["commits"][index]["entries"][0]["value"] = "cancelled"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    verdict = verify(path)
    assert verdict.status == "broken" and not verdict
    assert (verdict.kind, verdict.index, verdict.field) == ("commits", index, "entries")
    assert verdict.step_id == data["commits"][index]["step_id"]
    assert verdict.step_id in str(verdict) and "cancelled" not in str(verdict)


@pytest.mark.parametrize(("edit", "kind", "field"), [
    (lambda d: d.__setitem__("answer", "Nothing shipped."), "header", "answer"),
    (lambda d: d["context_pieces"][0].__setitem__("content", "You may refund anything."), "context_pieces",
     "content"),
    (lambda d: d["steps"][1].__setitem__("status", "ok!"), "steps", "status"),
    (lambda d: d["messages"][0].__setitem__("content", "other question"), "messages", "content"),
    (lambda d: d["events"].pop(), "events", None),
    (lambda d: d["seal"].__setitem__("head", "0" * 64), "seal", "head"),
])
def test_each_kind_of_edit_is_named(edit: Any, kind: str, field: str | None) -> None:
    data = json.loads(sealed_run().recording.model_dump_json())
    edit(data)
    verdict = verify(Recording.model_validate(data))
    assert (verdict.status, verdict.kind) == ("broken", kind)
    if field is not None:
        assert verdict.field == field


def test_an_unsealed_recording_says_so_and_notes_stay_outside_the_seal() -> None:
    plain = Agent(provider=mock(reply="hi")).run_sync("hello")
    assert verify(plain).status == "unsealed" and "not sealed" in str(verify(plain))
    run = sealed_run()
    run.annotate("answer", "checked against the warehouse", tag="ok")
    assert verify(run).holds


def test_an_llm_call_seals_and_a_rebuilt_agent_keeps_its_seal() -> None:
    call = LLMCall(provider=mock(reply="fine"), system="Be brief.", seal=True)
    assert verify(call.run_sync("hi")).holds
    agent = Agent(provider=mock(reply="ok"), system="Be brief.", tools=[lookup_tool()], seal=True)
    assert verify(agent.without("lookup").run_sync("hi")).holds


def test_redaction_happens_before_sealing() -> None:
    agent = Agent(provider=mock(replies=[f"your key {OPENAI_KEY} is rotated"]), seal=True,
                  redact=Redaction(builtins=["openai_key"]))
    run = agent.run_sync(f"rotate {OPENAI_KEY}")
    text = run.recording.model_dump_json()
    assert OPENAI_KEY not in text and verify(run).holds


def test_a_composition_with_a_sealing_member_seals_every_member() -> None:
    sealing = Agent(provider=mock(reply="draft"), name="writer", seal=True)
    other = Agent(provider=mock(reply="final"), name="editor")
    run = Sequence({"writer": sealing, "editor": other}).run_sync("write")
    recording = run.recording
    assert recording.seal is not None and all(child.seal is not None for child in recording.children)
    assert verify(run).holds
    data = json.loads(recording.model_dump_json())
    data["children"][1]["answer"] = "changed"
    verdict = verify(Recording.model_validate(data))
    assert (verdict.status, verdict.run, verdict.kind, verdict.field) == ("broken", "children.1", "header", "answer")


def test_seal_and_verify_refuse_what_is_not_a_recording(tmp_path: Path) -> None:
    with pytest.raises(SealSourceError) as refused:
        verify(42)
    assert refused.value.code == "ERR_SEAL_SOURCE"
    with pytest.raises(SealSourceError):
        verify(tmp_path / "missing.json")
    with pytest.raises(SealSourceError):
        seal({"run_id": "x"})
    with pytest.raises(AgentConfigError):
        Agent(provider=mock(reply="x"), seal="yes")


def test_a_shared_notebook_verifies_and_a_scrub_reseals_naming_the_policy(tmp_path: Path) -> None:
    run = leaky_run()
    seal(run.recording)
    path = notebook_with([run, sealed_run()], tmp_path / "shared.ipynb")
    assert all(verify(loaded).holds for loaded in load_runs(path))
    assert [v.status for _, v in verify_file(path)] == ["holds", "holds"]
    scrub(path, redact=Redaction(builtins=["openai_key"]))
    verdicts = [verdict for _, verdict in verify_file(path)]
    assert verdicts[0].holds and verdicts[0].scrubbed == ("openai_key",)
    assert verdicts[1].holds and verdicts[1].scrubbed == ()
    assert "scrubbed (openai_key)" in answer_view(load_runs(path)[0].recording)


def test_the_console_script_exits_non_zero_on_a_broken_seal(tmp_path: Path, capsys: Any) -> None:
    run = sealed_run()
    good = tmp_path / "good.json"
    good.write_text(run.recording.model_dump_json())
    notebook = notebook_with([run], tmp_path / "good.ipynb")
    assert main(["verify", str(good), str(notebook)]) == 0
    text = notebook.read_text().replace("Both orders shipped.", "No order shipped.")
    broken = tmp_path / "broken.ipynb"
    broken.write_text(text)
    assert main(["verify", str(broken)]) == 1
    assert "seal broken" in capsys.readouterr().out
    plain = tmp_path / "plain.json"
    plain.write_text(Agent(provider=mock(reply="x")).run_sync("q").recording.model_dump_json())
    assert main(["verify", str(plain)]) == 0
    assert main(["verify", "--require-seal", str(plain)]) == 1


def test_the_answer_view_shows_the_seal_escaped() -> None:
    run = sealed_run(name="<b>orders</b>")
    html = answer_view(run.recording)
    assert 'data-fl-seal="holds"' in html and "sealed · verified" in html
    data = json.loads(run.recording.model_dump_json())
    data["answer"] = "<script>alert(1)</script>"
    html = answer_view(Recording.model_validate(data))
    assert 'data-fl-seal="broken"' in html and "<script>" not in html
    assert "data-fl-seal" not in answer_view(Agent(provider=mock(reply="x")).run_sync("q").recording)


def test_the_seal_names_are_exported() -> None:
    assert footprint_lab.seal is seal and footprint_lab.verify is verify
    assert footprint_lab.Verdict.__name__ == "Verdict"


def echo_tool() -> Any:
    """A tool whose result spells the records' own field names, in no sorted order, with a huge integer."""
    return define_tool(
        name="echo", description="Echo a record back.", input_schema={"type": "object", "properties": {}},
        fn=lambda: {"zeta": 1, "step_id": "tool#99", "content": "nested", "seq": 2**70, "alpha": [3, 2, 1]})


def test_an_edit_after_data_that_spells_field_names_is_still_named_exactly() -> None:
    agent = Agent(provider=mock(replies=[{"tool": "echo", "args": {}}, "done"]), tools=[echo_tool()], seal=True)
    data = json.loads(agent.run_sync("go").recording.model_dump_json())
    last = len(data["events"]) - 1
    data["events"][last]["type"] = "edited"
    verdict = verify(Recording.model_validate(data))
    assert (verdict.kind, verdict.index, verdict.field) == ("events", last, "type")
    piece = next(n for n, p in enumerate(data["context_pieces"]) if p["source_kind"] == "tool_result")
    data = json.loads(agent.run_sync("go").recording.model_dump_json())
    data["context_pieces"][piece]["detail"]["requested_by"] = "someone else"
    verdict = verify(Recording.model_validate(data))
    assert (verdict.kind, verdict.index, verdict.field) == ("context_pieces", piece, "detail")


def test_a_seal_holds_after_keys_are_sorted_and_integers_beyond_64_bits() -> None:
    """A saved notebook writes every key sorted; the recording's free-form data already is."""
    run = Agent(provider=mock(replies=[{"tool": "echo", "args": {}}, "done"]), tools=[echo_tool()],
                seal=True).run_sync("go")
    resorted = json.dumps(json.loads(run.recording.model_dump_json()), sort_keys=True)
    assert verify(resorted).holds and verify(run).holds
    assert str(2**70) in resorted


def test_a_run_sealed_by_its_agent_is_sealed_as_it_ended_and_survives_copies() -> None:
    import copy
    import pickle

    run = sealed_run()
    recording = run.recording
    ended = recording.started_at + recording.duration_ms / 1000
    assert recording.seal is not None and recording.seal.sealed_at == pytest.approx(ended)
    assert verify(run).holds
    for other in (copy.deepcopy(recording), pickle.loads(pickle.dumps(recording)),
                  Recording.model_validate_json(recording.model_dump_json())):
        assert other == recording and verify(other).holds
    fresh = sealed_run().recording  # copied before its seal was ever read
    assert verify(copy.deepcopy(fresh)).holds and verify(pickle.loads(pickle.dumps(fresh))).holds


def ending_with(ending: str) -> Any:
    """A model that asks for one lookup, then fails (``failed``) or is cancelled (``cancelled``)."""
    import asyncio

    def respond(request: Any) -> Any:
        if request.messages[-1]["role"] == "user":
            return {"tool": "lookup", "args": {"order": "A-1"}}
        if ending == "failed":
            raise ConnectionError("the provider went away")
        raise asyncio.CancelledError

    return respond


@pytest.mark.parametrize("ending", ["failed", "cancelled"])
def test_a_run_that_fails_or_is_cancelled_is_sealed_too(ending: str) -> None:
    """A failed run's recording is evidence too: a sealing agent seals it, whatever ended the run."""
    import asyncio

    from footprint_lab.errors import RunCheckpointError

    agent = Agent(provider=mock(respond=ending_with(ending)), tools=[lookup_tool()], seal=True)
    with pytest.raises(RunCheckpointError if ending == "failed" else asyncio.CancelledError):
        agent.run_sync("Where is A-1?")
    assert agent.last_run is not None and agent.last_run.status == ending
    assert agent.last_run.recording.seal is not None and verify(agent.last_run).holds
    data = json.loads(agent.last_run.recording.model_dump_json())
    data["error"] = None
    assert verify(Recording.model_validate(data)).field == "error"


def test_a_sealed_run_saved_at_once_holds_and_its_locator_names_an_edit() -> None:
    """A sealed run saved before anything read its seal: the saved seal holds, then names the record and field
    of an edit."""
    recording = sealed_run().recording
    data = json.loads(recording.model_dump_json())
    assert recording.seal is not None and data["seal"]["head"] == recording.seal.head
    assert set(data["seal"]["tags"]) == set(data["seal"]["kinds"])
    assert verify(Recording.model_validate(data)).holds
    index = next(n for n, c in enumerate(data["commits"]) if c["step_id"].startswith("tool"))
    data["commits"][index]["entries"][0]["value"] = "cancelled"
    verdict = verify(Recording.model_validate(data))
    assert (verdict.kind, verdict.index, verdict.field) == ("commits", index, "entries")


def test_a_record_edited_after_the_run_is_caught_and_named() -> None:
    recording = sealed_run().recording
    assert recording.seal is not None and recording.seal.head  # sealed as the run ended
    recording.steps[1].status = "edited"  # a record changed in place before anything saved the seal
    for copy_ in (recording, Recording.model_validate_json(recording.model_dump_json())):
        verdict = verify(copy_)
        assert (verdict.status, verdict.kind, verdict.index, verdict.field) == ("broken", "steps", 1, "status")


@pytest.mark.parametrize("edit", [
    lambda recording: setattr(recording, "answer", "Both orders were lost."),
    lambda recording: setattr(recording.commits[1].entries[0], "value", "forged"),  # a record changed in place
])
def test_an_edit_before_anything_read_the_seal_is_never_sealed_in(edit: Any) -> None:
    """``seal=True`` seals each run as it ended: an edit made before anything read the seal breaks it, at the
    first check and in every saved copy."""
    recording = sealed_run().recording
    edit(recording)
    assert not verify(recording) and not verify(recording)
    assert not verify(Recording.model_validate_json(recording.model_dump_json()))


def test_a_sealed_run_is_freed_as_soon_as_it_is_dropped_and_its_seal_stands_on_its_own() -> None:
    """A run's seal holds values, not the recording: dropping a sealed run frees it at once, with no cyclic
    collection (a notebook that seals every run keeps only what it shows), and the seal kept on its own is whole."""
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        run = sealed_run()
        recording = run.recording
        seal_ = recording.seal
        assert seal_ is not None
        saved = recording.model_dump_json(exclude={"seal"})
        gone = weakref.ref(recording)
        del run, recording
        assert gone() is None
        assert seal_.head and len(seal_.kinds) == 10 and set(seal_.tags) == set(seal_.kinds)
        assert seal_.kinds == seal(Recording.model_validate_json(saved)).seal.kinds  # type: ignore[union-attr]
    finally:
        gc.enable()


def test_sealing_checking_and_loading_never_pause_the_garbage_collector(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The cyclic collector belongs to the user's kernel: sealing, checking and loading recordings leave it alone
    (issue 43)."""
    import gc

    from footprint_lab import load_recording
    from footprint_lab.notebook import load_runs

    paused: list[str] = []
    monkeypatch.setattr(gc, "disable", lambda: paused.append("disable"))
    monkeypatch.setattr(gc, "freeze", lambda: paused.append("freeze"))
    path = notebook_with([sealed_run()], tmp_path / "shared.ipynb")
    recording = sealed_run().recording
    assert recording.seal is not None and recording.seal.head
    assert verify(recording).holds
    assert [v.status for _, v in verify_file(path)] == ["holds"]
    assert [run.run_id for run in load_runs(path)]
    data = json.loads(recording.model_dump_json())
    assert verify(load_recording(json.dumps(data))).holds
    data["steps"][0]["status"] = "edited"
    assert not verify(Recording.model_validate(data))
    assert paused == [] and gc.isenabled()


def digests(recording: Recording) -> dict[str, str]:
    assert recording.seal is not None
    return dict(recording.seal.kinds)


def test_a_seal_worked_out_from_the_capture_is_the_seal_of_the_recordings_models() -> None:
    """The owed seal hashes each record's values made straight from the run's capture; once a view has
    made the models, or the recording has been saved and read back, the same records must hash the
    same, every kind of them: steps, reads, commits, a routing decision and its evidence, events,
    pieces, exchanges with their tool calls, and the transcript."""
    from footprint_lab import Conditional

    flow = Conditional([("refunds", lambda message: "refund" in message,
                         Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": "A-1"}}, "Refunded."]),
                               tools=[lookup_tool()]))],
                       otherwise=("other", Agent(provider=mock(reply="no"))))
    runs = [sealed_run(), sealed_run(redact=Redaction(patterns={"order": r"[AB]-\d"})),
            seal(flow.run_sync("Please refund order A-1.").recording)]
    for run in runs:
        recording = getattr(run, "recording", run)
        records = [recording, *recording.children]
        assert any(len(r.decisions) for r in records) == (run is runs[2])
        worked_out = {id(r): digests(r) for r in records}
        for r in records:  # every list made into models, as a view makes them
            for kind in ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges"):
                list(getattr(r, kind))
            assert digests(seal(r)) == worked_out[id(r)]
            assert verify(Recording.model_validate_json(r.model_dump_json())).holds


def test_captured_values_orjson_would_write_otherwise_are_sealed_as_the_recording_holds_them() -> None:
    """The seal reads a run's captured values as they were captured; a value the recording holds in another
    form than orjson writes it (a dataclass, a set, a tuple key, an enum, a date, NaN, an integer beyond 64
    bits, a subclass of str) is sealed as the recording holds it: the seal of the capture is the seal of the
    models and of the saved recording."""
    import dataclasses
    import datetime
    import enum
    import math

    class Tier(enum.Enum):
        GOLD = "gold"

    class Name(str):
        pass

    @dataclasses.dataclass
    class Order:
        id: str
        total: float

    def odd(order: str) -> dict[Any, Any]:
        return {"order": Order(order, 9.5), "tags": {"b", "a"}, (1, 2): "pair", "tier": Tier.GOLD,
                "when": datetime.date(2026, 12, 2), "ratio": math.nan, "big": 2**70, "name": Name("x")}

    tool = define_tool(name="odd", description="Returns values of many types.",
                       input_schema={"type": "object", "properties": {"order": {"type": "string"}}}, fn=odd)
    recording = Agent(provider=mock(replies=[{"tool": "odd", "args": {"order": "A-1"}}, "done"]), tools=[tool],
                      seal=True).run_sync("go").recording
    worked_out = digests(recording)
    assert "Order(id='A-1', total=9.5)" in recording.model_dump_json()  # held as its repr, as jsonable writes it
    for kind in ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges"):
        list(getattr(recording, kind))
    assert digests(seal(recording)) == worked_out
    assert verify(Recording.model_validate_json(recording.model_dump_json())).holds


def test_each_seal_keeps_its_own_record_of_what_was_set() -> None:
    first, second = seal(sealed_run().recording).seal, seal(sealed_run().recording).seal
    assert first is not None and second is not None
    assert "display" not in first.model_dump(exclude_unset=True)  # left at its default by the seal
    first.display = {"text/html": "0" * 64}  # as a notebook output's copy is given its display digests
    assert "display" in first.model_dump(exclude_unset=True)
    assert "display" not in second.model_dump(exclude_unset=True) and second.display == {}


# -- the locator tags are held by the seal too (issue 46) -------------------------------------------
def retagged(tags: dict[str, str], kind: str, how: str) -> None:
    """One kind's locator tags edited as a forger might: a stretch's CRC changed, the kind's tags dropped, or
    emptied."""
    if how == "flipped":
        raw = bytearray(base64.b64decode(tags[kind]))
        raw[0] ^= 0xFF
        tags[kind] = base64.b64encode(bytes(raw)).decode("ascii")
    elif how == "dropped":
        tags.pop(kind)
    else:
        tags[kind] = ""


@pytest.mark.parametrize("kind", ["header", "steps", "commits", "messages"])
@pytest.mark.parametrize("how", ["flipped", "dropped", "emptied"])
def test_edited_locator_tags_are_the_seal_altered_on_every_path(tmp_path: Path, kind: str, how: str) -> None:
    data = json.loads(sealed_run().recording.model_dump_json())
    assert verify(json.dumps(data)).holds
    retagged(data["seal"]["tags"], kind, how)
    verdict = verify(json.dumps(data))
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "seal", f"tags.{kind}")
    assert str(verdict).endswith("the seal itself was altered")
    path = notebook_with([], tmp_path / "n.ipynb")
    notebook = json.loads(path.read_text())
    notebook["cells"].append({"cell_type": "code", "source": "run", "metadata": {}, "execution_count": 1,
                              "outputs": [{"output_type": "display_data", "metadata": {},
                                           "data": {"text/plain": "a run", RECORDING_MIME: data}}]})
    path.write_text(json.dumps(notebook))
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.field) == ("broken", f"tags.{kind}")


def test_edited_tags_of_a_member_and_of_a_checkpoint_are_named_too() -> None:
    composed = Sequence({"first": Agent(provider=mock(reply="one"), seal=True),
                         "second": Agent(provider=mock(reply="two"))}).run_sync("go")
    data = json.loads(composed.recording.model_dump_json())
    retagged(data["children"][1]["seal"]["tags"], "header", "flipped")
    verdict = verify(json.dumps(data))
    assert (verdict.status, verdict.run, verdict.kind, verdict.field) == ("broken", "children.1", "seal",
                                                                          "tags.header")
    agent = Agent(provider=mock(reply="done"))
    agent.run_sync("hello")
    checkpoint = agent.checkpoint()
    assert checkpoint is not None
    stored = json.loads(seal(checkpoint).model_dump_json())
    (document,) = stored["seal"]["tags"]
    retagged(stored["seal"]["tags"], document, "flipped")
    verdict = verify(type(checkpoint).model_validate(stored))
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "seal", f"tags.{document}")

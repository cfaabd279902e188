"""A saved recording's records load as checked columns: no model is made until one is read, and what a
reader gets is exactly what validating each record would give (record.kinds)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from record_kit import edited_copy, paths

from footprint_lab import Agent, define_tool, load_recording, verify
from footprint_lab.errors import InvalidRecordingError
from footprint_lab.notebook.read import output_verdict
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME, Recording
from footprint_lab.record.saved_form import unpacked

KINDS = ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges")


def sealed_run(iterations: int = 3) -> Any:
    tool = define_tool(name="lookup", description="Look an order up.",
                       input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                       fn=lambda order: {"order": order, "age_days": 47})
    replies: list[Any] = [{"tool": "lookup", "args": {"order": f"A-{n}"}} for n in range(iterations)] + ["Done."]
    return Agent(provider=mock(replies=replies), tools=[tool], seal=True,
                 max_iterations=iterations + 1).run_sync("Look them up.")


def whole_floats_as_ints(value: Any) -> Any:
    """``value`` as a JavaScript writer saves it: a float with no fraction written as a whole number."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: whole_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_floats_as_ints(item) for item in value]
    return value


def test_a_long_recording_loads_and_verifies_without_making_a_record_model_and_reads_back_equal() -> None:
    run = sealed_run(100)
    loaded = load_recording(run.recording.model_dump_json())
    assert verify(loaded).holds
    held = {kind: getattr(loaded, kind) for kind in KINDS if getattr(loaded, kind)}
    assert {"steps", "reads", "commits", "events", "context_pieces", "exchanges"} <= held.keys()
    assert not any(rows.built for rows in held.values())  # loaded, checked and verified as columns
    assert loaded.exchanges[-1].response.content == "Done."
    assert loaded == run.recording and loaded.model_dump_json() == run.recording.model_dump_json()


def test_a_recording_saved_with_whole_floats_as_integers_reads_floats_and_its_seal_holds() -> None:
    """JupyterLab saves a notebook through JavaScript, which writes 2.0 as 2: the loaded records hold floats
    where their fields are floats, so the seal still holds and the JSON reads back as it was written."""
    run = sealed_run()
    data = json.loads(run.recording.model_dump_json())
    data["steps"][0]["duration_ms"] = 2.0  # a float with no fraction, so the writer below changes it
    resealed = json.loads(Recording.model_validate(data).model_dump_json())
    assert not verify(resealed).holds  # the seal covers the value: edited, it breaks
    data["seal"] = None
    rewritten = whole_floats_as_ints(data)
    assert rewritten["steps"][0]["duration_ms"] == 2 and isinstance(rewritten["steps"][0]["duration_ms"], int)
    loaded = load_recording(rewritten)
    assert isinstance(loaded.steps[0].duration_ms, float)
    sealed = json.loads(run.recording.model_dump_json())
    assert verify(whole_floats_as_ints(sealed)).holds


def test_a_notebook_output_rewritten_with_whole_floats_as_integers_still_verifies() -> None:
    bundle = json.loads(json.dumps(sealed_run()._repr_mimebundle_()))
    output = {"output_type": "display_data", "data": whole_floats_as_ints(bundle), "metadata": {}}
    assert isinstance(output["data"][RECORDING_MIME]["events"], dict)  # a table, as a notebook holds it
    verdict = output_verdict(output)
    assert verdict is not None and verdict.holds


DATA = json.loads(sealed_run(2).recording.model_dump_json())


#: every place inside a record of each kind: (index, field, and deeper keys)
PLACES = [(kind, place) for kind in KINDS for place in paths(DATA[kind]) if len(place) > 1]
ODD = st.one_of(st.none(), st.integers(-3, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                st.text(max_size=4), st.booleans(), st.just([]), st.just(["x"]), st.just({}), st.just({"k": 1.0}),
                st.just([{}]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(place=st.sampled_from(PLACES), value=ODD, remove=st.booleans(), packed=st.booleans())
def test_an_edited_record_reads_as_validating_it_alone_would_or_is_refused_by_name(
    place: tuple[str, tuple[Any, ...]], value: Any, remove: bool, packed: bool,
) -> None:
    kind, where = place
    data = edited_copy(DATA, (kind, *where), value, remove=remove)
    model = Recording.model_fields[kind].annotation
    try:
        expected = TypeAdapter(model).validate_python(copy.deepcopy(unpacked(data)[kind]))
    except ValidationError:
        expected = None
    saved = data
    if packed and expected is not None:  # as a notebook output holds it: tables, defaults left out
        saved = json.loads(json.dumps(Recording.model_validate(data)._repr_mimebundle_()[RECORDING_MIME]))
    try:
        loaded = load_recording(json.dumps(saved))
    except InvalidRecordingError as refusal:
        assert expected is None or refusal.field  # refused by the door's own checks, or by the record's field
        if expected is None:
            assert refusal.field.startswith(f"{kind}.{where[0]}")
        return
    assert expected is not None
    adapter = TypeAdapter(model)
    assert adapter.dump_json(list(getattr(loaded, kind))) == adapter.dump_json(expected)


@pytest.mark.parametrize("kind", KINDS[:2] + KINDS[4:6])
def test_a_saved_table_whose_column_does_not_validate_is_refused_at_its_record_and_field(kind: str) -> None:
    bundle = json.loads(json.dumps(sealed_run()._repr_mimebundle_()))
    table = bundle[RECORDING_MIME][kind]
    assert isinstance(table, dict)
    at = 1 if table["columns"][0] != "index" else 2
    table["rows"][1][at] = {"not": "a value this field holds"}
    with pytest.raises(InvalidRecordingError) as refused:
        load_recording(bundle[RECORDING_MIME])
    assert refused.value.field == f"{kind}.1.{table['columns'][at]}"


def test_loaded_records_share_nothing_with_the_data_read_nor_with_each_other() -> None:
    """Loading makes the recording its own lists and mappings: an edit to one loaded record (a what-if in a notebook)
    changes no other record, no other load and not the data it was read from; the file still verifies."""
    bundle = json.loads(json.dumps(sealed_run()._repr_mimebundle_()))
    saved = bundle[RECORDING_MIME]
    assert "injected_messages" not in saved["exchanges"][0]  # left out at its default in a notebook's saved form
    events = saved["events"]  # one payload written once for every row (a table's "same")
    at = events["columns"].index("payload")
    events["columns"].pop(at)
    for row in events["rows"]:
        row.pop(at)
    events["same"] = {**events.get("same", {}), "payload": {"note": "kept"}}
    kept = copy.deepcopy(saved)
    first, second = load_recording(saved), load_recording(saved)
    first.exchanges[0].injected_messages.append({"role": "user", "content": "what if?"})
    first.events[0].payload["note"] = "changed"
    first.reads[0].path.append("changed")
    assert first.exchanges[1].injected_messages == [] and second.exchanges[0].injected_messages == []
    assert first.events[1].payload == {"note": "kept"} and second.events[0].payload == {"note": "kept"}
    assert second.reads[0].path != first.reads[0].path
    assert saved == kept
    assert verify(load_recording(json.dumps(_resealed(kept)))).holds


def _resealed(saved: dict[str, Any]) -> dict[str, Any]:
    """A saved recording edited by hand, sealed again as it now reads."""
    from footprint_lab.sealing.seal import seal

    recording = load_recording({**saved, "seal": None})
    return json.loads(seal(recording).model_dump_json())


def test_python_data_with_tuples_or_subclasses_loads_as_plain_json_types() -> None:
    import enum

    class Code(str):
        pass

    class Count(enum.IntEnum):
        ONE = 1

    data = json.loads(sealed_run().recording.model_dump_json())
    data["exchanges"][0]["response"]["tool_calls"] = tuple(data["exchanges"][0]["response"]["tool_calls"])
    data["exchanges"][0]["injected_messages"] = ()
    for read in data["reads"]:
        read["path"] = tuple(read["path"])
    data["steps"][0]["stage"] = Code(data["steps"][0]["stage"])
    data["events"][0]["seq"] = Count.ONE if data["events"][0]["seq"] == 1 else data["events"][0]["seq"]
    loaded = load_recording(data)
    assert type(loaded.reads[0].path) is list and type(loaded.steps[0].stage) is str
    assert type(loaded.exchanges[0].response.tool_calls) is list and type(loaded.events[0].seq) is int
    assert loaded.model_dump_json() == sealed_json(data)


def sealed_json(data: dict[str, Any]) -> str:
    """The JSON a recording validated record by record, the library's long way, writes."""
    from footprint_lab.record.saved_form import unpacked

    plain = unpacked(data)
    kinds = {kind: TypeAdapter(Recording.model_fields[kind].annotation).validate_python(plain[kind]) for kind in KINDS}
    return Recording.model_construct(**{**Recording.model_validate({**plain, **{kind: [] for kind in KINDS}}).__dict__,
                                        **kinds}).model_dump_json()


def test_strict_validation_asked_for_holds_for_every_record() -> None:
    data = json.loads(sealed_run().recording.model_dump_json())
    data["steps"][1]["iteration"] = "1"
    data["events"][1]["seq"] = 1.0
    with pytest.raises(ValidationError) as refused:
        Recording.model_validate(data, strict=True)
    assert {".".join(map(str, error["loc"])) for error in refused.value.errors()} == {"steps.1.iteration",
                                                                                        "events.1.seq"}
    lax = Recording.model_validate(data)
    assert lax.steps[1].iteration == 1 and lax.events[1].seq == 1 and type(lax.events[1].seq) is int


@pytest.mark.parametrize("kind", ["commits", "exchanges", "decisions"])
def test_only_the_kinds_the_saved_form_writes_as_tables_are_read_as_tables(kind: str) -> None:
    data = json.loads(sealed_run().recording.model_dump_json())
    records = data[kind] or [{"step_id": "x", "rule": "r", "evidence": [], "chosen": "a"}]
    columns = list(records[0])
    data[kind] = {"columns": columns, "rows": [[record.get(name) for name in columns] for record in records]}
    with pytest.raises(InvalidRecordingError) as refused:
        load_recording(data)
    assert refused.value.field == kind


def test_threads_that_first_read_a_loaded_recording_at_once_all_get_its_records() -> None:
    """Records are made on first read: threads reading a freshly loaded recording together (a server answering from
    one loaded run) each get the very records the recording keeps, and none fails."""
    import sys
    import threading

    text = sealed_run().recording.model_dump_json()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so their first reads overlap
    try:
        for _ in range(40):
            loaded = load_recording(text)
            seen: list[Any] = []

            def read(loaded: Recording = loaded, seen: list[Any] = seen) -> None:
                seen.append((loaded.steps[0], loaded.events[0], verify(loaded).holds))

            threads = [threading.Thread(target=read) for _ in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert len(seen) == 6 and all(holds for *_, holds in seen)
            assert all(step is loaded.steps[0] and event is loaded.events[0] for step, event, _ in seen)
    finally:
        sys.setswitchinterval(interval)


def test_a_free_form_value_given_as_python_data_is_kept_as_given_in_every_kind() -> None:
    import dataclasses

    @dataclasses.dataclass
    class Order:
        id: str = "A-0"

    data = json.loads(sealed_run().recording.model_dump_json())
    data["commits"][0]["entries"][0]["value"] = Order()
    data["exchanges"][0]["response"]["tool_calls"][0]["args"]["order"] = Order()
    data["events"][1]["payload"]["stage"] = Order()
    loaded = Recording.model_validate(data)
    assert isinstance(loaded.commits[0].entries[0].value, Order)
    assert isinstance(loaded.exchanges[0].response.tool_calls[0].args["order"], Order)
    assert isinstance(loaded.events[1].payload["stage"], Order)

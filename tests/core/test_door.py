"""The run-input door: every shape the seed names is adapted or refused by name, before anything runs."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from footprint_lab import Agent, LLMCall, Redaction, Refusal, Sequence
from footprint_lab.core.door import normalize_run_input  # the door itself, below every runner
from footprint_lab.errors import InvalidRunInputError
from footprint_lab.providers import mock

SECRET = "sk-live-THISisAsecretVALUE1234567890"


def test_string_is_adapted_to_a_message():
    assert normalize_run_input("go", "Agent.run") == {"message": "go"}


def test_any_mapping_with_a_message_passes_as_a_new_dict():
    frozen = MappingProxyType({"message": "go", "extra": 1})
    bag = normalize_run_input(frozen, "Agent.run")
    assert bag == {"message": "go", "extra": 1} and type(bag) is dict
    original = {"message": "go"}
    normalize_run_input(original, "Agent.run", identity={"tenant": "a"})
    assert original == {"message": "go"}  # the caller's mapping is never changed


def test_mapping_passes_with_other_keys_untouched():
    extra = {"nested": [1, 2]}
    bag = normalize_run_input({"message": "go", "extra": extra}, "Agent.run")
    assert bag == {"message": "go", "extra": extra}
    assert bag["extra"] is extra


def test_keyword_joins_the_bag():
    assert normalize_run_input("go", "Agent.run", identity={"tenant": "a"}) == {
        "message": "go", "identity": {"tenant": "a"}}


@pytest.mark.parametrize(
    ("value", "received"),
    [
        (None, "None"),
        ([1, 2, 3], "a list of 3"),
        ({}, "a dict with no keys, whose 'message' is missing"),
        ({"text": "hi"}, "a dict with 1 key (not shown), whose 'message' is missing"),
        (42, "an int"),
        ({"message": 42}, "a dict with keys: message, whose 'message' is an int"),
        ({"message": None}, "a dict with keys: message, whose 'message' is None"),
        ({"message": 5, "AKIAIOSFODNN7EXAMPLE": "x"},
         "a dict with keys: message and 1 other key, whose 'message' is an int"),
        ({"identity": {}, "note": 1}, "a dict with keys: identity and 1 other key, whose 'message' is missing"),
        ("", "an empty message"),
        ("   \n\t", "a whitespace-only message"),
        ({"message": ""}, "an empty message"),
    ],
)
def test_refusals_name_what_arrived(value, received):
    with pytest.raises(InvalidRunInputError) as caught:
        normalize_run_input(value, "Agent.run")
    err = caught.value
    assert isinstance(err, Refusal)
    assert err.code == "ERR_INVALID_RUN_INPUT"
    assert err.runner == "Agent.run"
    assert err.received == received
    text = str(err)
    assert text.startswith("Agent.run: ") and f"(received {received})" in text
    # both accepted forms are spelled, whatever the refusal
    assert "run('your message')" in text or "run('Begin.')" in text
    assert "run({'message': 'your message'})" in text or "run({'message': 'Begin.'})" in text


def test_empty_message_teaches_running_on_the_system_prompt_alone():
    with pytest.raises(InvalidRunInputError) as caught:
        normalize_run_input("", "LLMCall.run")
    assert "system prompt alone" in str(caught.value)


def test_refusal_never_quotes_the_value():
    for value in ({"text": SECRET}, [SECRET], {"message": [SECRET]}, {SECRET: "x"}):
        with pytest.raises(InvalidRunInputError) as caught:
            normalize_run_input(value, "Agent.run")
        assert SECRET not in str(caught.value)
        assert SECRET not in caught.value.received


def test_only_the_doors_own_field_names_are_named():
    """A key the caller chose (here an AWS key id, short and identifier-like) is counted, never quoted."""
    aws = "AKIAIOSFODNN7EXAMPLE"
    for value in ({"message": 5, aws: "wJalrXUtnFEMI"}, {aws: "go"}, {"message": None, "password": aws}):
        with pytest.raises(InvalidRunInputError) as caught:
            normalize_run_input(value, "Agent.run")
        assert aws not in str(caught.value) and aws not in caught.value.received
        assert "password" not in str(caught.value)
        assert "run({'message': 'your message'})" in str(caught.value)  # the fix


async def test_the_probe_input_is_refused_before_any_model_call_without_quoting_a_key():
    provider = mock(reply="never")
    agent = Agent(provider=provider, redact=Redaction.standard())
    aws = "AKIAIOSFODNN7EXAMPLE"
    with pytest.raises(InvalidRunInputError) as caught:
        agent.run_sync({"message": 5, aws: "wJalrXUtnFEMI"})
    assert caught.value.code == "ERR_INVALID_RUN_INPUT" and isinstance(caught.value, ValueError)
    assert aws not in str(caught.value) and "wJalrXUtnFEMI" not in str(caught.value)
    assert "and 1 other key" in caught.value.received
    assert provider.calls == 0 and agent.last_run is None


def test_same_keyword_twice_with_different_values_is_refused():
    with pytest.raises(InvalidRunInputError):
        normalize_run_input({"message": "go", "identity": {"tenant": "a"}}, "Agent.run", identity={"tenant": "b"})


@pytest.mark.parametrize("runner_class", [Agent, LLMCall])
async def test_runner_refuses_before_anything_runs(runner_class):
    provider = mock(reply="never")
    runner = runner_class(provider=provider)
    delivered = []
    runner.subscribe(delivered.append)
    for bad in (None, "", "  ", {}, {"text": "hi"}, {"message": None}, {"message": 42}, [SECRET], 3):
        with pytest.raises(InvalidRunInputError) as caught:
            await runner.run(bad, on_event=delivered.append)
        assert caught.value.runner == f"{runner_class.__name__}.run"
    assert provider.calls == 0
    assert runner.last_run is None
    assert delivered == []  # no run started: not even a run_start event
    assert (await runner.run("now a real one")).answer == "never"  # and the instance is not left busy


async def test_a_composition_refuses_at_the_same_door():
    provider = mock(reply="never")
    for bad in (None, {"text": "hi"}, ""):
        with pytest.raises(InvalidRunInputError) as caught:
            await Sequence({"only": Agent(provider=provider)}).run(bad)
        assert caught.value.runner == "Sequence.run"
    assert provider.calls == 0


def test_run_sync_refuses_too():
    provider = mock(reply="never")
    with pytest.raises(InvalidRunInputError):
        Agent(provider=provider).run_sync({"message": 1})
    assert provider.calls == 0

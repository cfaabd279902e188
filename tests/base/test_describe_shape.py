"""``describe_shape``: a value said by its shape, never by its content; a dict's keys named only when the door
knows them (its own field names), every other key counted, because a key can itself be the caller's data."""

from __future__ import annotations

import pytest

from footprint_lab.base.refusal import describe_shape

AWS = "AKIAIOSFODNN7EXAMPLE"  # an identifier of 20 characters: the shape of a key id, a name, a token


@pytest.mark.parametrize(
    ("value", "known", "said"),
    [
        (None, (), "None"),
        ([1, 2, 3], (), "a list of 3"),
        (42, (), "an int"),
        ({}, ("message",), "a dict with no keys"),
        ({"text": 1}, (), "a dict with 1 key (not shown)"),
        ({"text": 1, AWS: 2}, (), "a dict with 2 keys (not shown)"),
        ({"message": 1}, ("message",), "a dict with keys: message"),
        ({"message": 5, AWS: 2}, ("message", "identity"), "a dict with keys: message and 1 other key"),
        ({AWS: 2, "message": 5, 3: 4}, ("message",), "a dict with keys: message and 2 other keys"),
        ({"identity": 1, "message": 2}, ("message", "identity"), "a dict with keys: identity, message"),
    ],
)
def test_a_value_is_said_by_its_shape(value, known, said):
    assert describe_shape(value, known) == said


def test_a_key_the_door_does_not_know_is_never_named_however_short():
    for key in (AWS, "password", "x", "sk_live_1"):
        said = describe_shape({"message": "go", key: "v"}, ("message",))
        assert key not in said.replace("message", "")
        assert said == "a dict with keys: message and 1 other key"
    assert describe_shape({AWS: 1}) == "a dict with 1 key (not shown)"  # with no field names, none is named

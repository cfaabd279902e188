"""identity=: an Identity or a dict of its string fields, its shape checked at every door, never quoted."""

from __future__ import annotations

from typing import Any

import pytest

from footprint_lab import Agent, Identity, Sequence
from footprint_lab.core.member_run import open_run_count
from footprint_lab.errors import InvalidIdentityError
from footprint_lab.providers import mock

SECRET_NAME = "ana.secret@example.com"


@pytest.mark.parametrize(("identity", "received"), [
    ({"principal": SECRET_NAME, "role": "admin"}, "a dict with 1 unknown key(s)"),
    ({"principal": 42}, "an identity whose principal is not a non-empty string"),
    ({"principal": SECRET_NAME, "tenant": "   "}, "an identity whose tenant is not a non-empty string"),
    ({}, "an identity with no field set"),
    ({"principal": None}, "an identity with no field set"),
    (Identity(), "an identity with no field set"),
    ([SECRET_NAME], "a list of 1"),
    (SECRET_NAME, "a str"),
])
@pytest.mark.parametrize("kind", ["agent", "composition"])
async def test_an_identity_of_the_wrong_shape_is_refused_before_anything_runs(
    identity: Any, received: str, kind: str,
) -> None:
    provider = mock(reply="ok")
    agent = Agent(provider=provider)
    runner = agent if kind == "agent" else Sequence({"only": agent})
    with pytest.raises(InvalidIdentityError) as caught:
        await runner.run("hi", identity=identity)
    assert caught.value.code == "ERR_INVALID_IDENTITY"
    assert caught.value.received == received
    assert caught.value.door == f"{type(runner).__name__}.run"
    assert SECRET_NAME not in str(caught.value) and "admin" not in str(caught.value)
    assert provider.calls == 0 and agent.last_run is None and open_run_count() == 0


async def test_a_dict_identity_is_the_same_identity_as_its_object() -> None:
    agent = Agent(provider=mock(reply="ok"))
    run = await agent.run("hi", identity={"principal": "ana", "tenant": "acme", "conversation_id": None})
    assert run.recording.identity == Identity(principal="ana", tenant="acme").as_dict()
    again = await agent.follow_up("more", identity=Identity(principal="ana", tenant="acme"))
    assert again.status == "finished"


async def test_identity_in_the_input_mapping_is_checked_the_same_way() -> None:
    with pytest.raises(InvalidIdentityError):
        await Agent(provider=mock(reply="ok")).run({"message": "hi", "identity": {"who": SECRET_NAME}})

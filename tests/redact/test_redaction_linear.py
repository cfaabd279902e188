"""Redaction cannot be stalled (issue 17, finding 1): built-ins are linear, user patterns are time-bounded.

The timings live in bench/bench_redaction.py; these tests pin what the linear forms must
still match (nothing a built-in covered before slips through) and that a pattern which would
backtrack for ever is stopped and fails closed.
"""

from __future__ import annotations

import re

import pytest

from footprint_lab import Agent, Redaction
from footprint_lab.errors import RedactionConfigError
from footprint_lab.providers import mock
from footprint_lab.redact.policy import BUILTIN_PATTERNS

SAMPLES = {
    "openai_key": ["sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-abcdefghijklmnopqrstuvwx"],
    "anthropic_key": ["sk-ant-api03-abcdefghijklmnopqrstuvwxyz"],
    "aws_access_key_id": ["AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE"],
    "github_token": ["ghp_" + "a1B2" * 10, "gho_" + "Z9" * 20],
    "bearer_token": ["Bearer abcdefghijklmnopqrstuvwx==", "bearer\tabc.def-ghi_jkl~mno"],
    "jwt": ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    "private_key_block": [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc+/==\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----",
    ],
    "email": ["john.doe+x@mail.example.co.uk", "a@b.io", "first_last%tag@sub-domain.example.org"],
}
SURROUNDINGS = ["{}", "x {} y", "({}).", "key={},", '"{}"', "{}\n", "<{}>", "line\n{}\nline"]


@pytest.mark.parametrize("name", sorted(BUILTIN_PATTERNS))
def test_each_builtin_still_masks_what_it_covers_wherever_it_stands(name: str) -> None:
    policy = Redaction(builtins=[name])
    for sample in SAMPLES[name]:
        for around in SURROUNDINGS:
            masked = policy.for_run().scrub(around.format(sample))
            assert masked == around.format(f"[redacted:{name}]"), (name, around)


def test_a_private_key_cut_short_is_masked_to_the_end_of_its_body() -> None:
    scrub = Redaction(builtins=["private_key_block"]).for_run().scrub
    cut = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA"
    assert scrub(cut) == "key:\n[redacted:private_key_block]"
    assert scrub(cut + "\n-----\nnext part") == "key:\n[redacted:private_key_block]-----\nnext part"


def test_the_email_pattern_leaves_sentence_punctuation_and_catches_glued_addresses() -> None:
    scrub = Redaction(builtins=["email"]).for_run().scrub
    assert scrub("Write to ana@example.com. Or bo@example.org!") == (
        "Write to [redacted:email]. Or [redacted:email]!")
    # a second address glued to the first must not be left half inside the first match
    assert "cy@" not in scrub("ana@example.com.cy@example.org")
    assert scrub("not an address: a@b, x@y.z") == "not an address: a@b, x@y.z"


def test_the_reported_stallers_are_masked_and_come_back_whole() -> None:
    # issue 17: 80 kB of these took 206 s (email) and 256 kB 133 s (private key) before
    standard = Redaction.standard().for_run()
    email_bait = "a." * 80_000 + "@"
    assert standard.scrub(email_bait) == email_bait
    key_bait = "-----BEGIN RSA PRIVATE KEY----- " * 8_000
    assert standard.scrub(key_bait).count("[redacted:private_key_block]") == 8_000


def test_a_user_pattern_that_backtracks_for_ever_is_stopped_and_masks_the_whole_text() -> None:
    scrubber = Redaction(patterns={"hostile": r"(a|aa)+$"}).for_run()
    assert scrubber.scrub("a" * 64 + "!") == "[redacted:hostile]"  # fail closed: no part of it is shown
    assert scrubber.report()["counts"] == {"pattern:hostile": 1}
    assert scrubber.scrub("aaa") == "[redacted:hostile]"  # an ordinary match is masked as usual
    assert scrubber.scrub("bbb") == "bbb"


def test_a_pattern_that_ran_out_of_time_three_times_is_not_tried_again_on_as_long_a_text(monkeypatch) -> None:
    """A tool result of 40 fields that each make a hostile pattern run out of time cost 40 time limits (4.8 s): after
    three in a run, a text as long as the shortest it ran out on is masked whole untried; a shorter one is tried."""
    from footprint_lab.redact import _patterns

    tried: list[str] = []
    sub = _patterns._Pattern.sub
    monkeypatch.setattr(_patterns._Pattern, "sub",
                        lambda self, text: (tried.append(text) if "a" in text else None, sub(self, text))[1])
    scrubber = Redaction(patterns={"hostile": r"(a|aa)+$"}).for_run()
    fields = {f"f{n}": "a" * 40 + "!" for n in range(40)}
    assert scrubber.scrub(fields) == {name: "[redacted:hostile]" for name in fields}
    assert len(tried) == 3 and scrubber.report()["counts"] == {"pattern:hostile": 40}
    assert scrubber.scrub("a" * 50 + "!") == "[redacted:hostile]" and len(tried) == 3
    assert scrubber.scrub("aaa-bbb") == "aaa-bbb" and len(tried) == 4  # shorter: tried, and kept
    assert Redaction(patterns={"hostile": r"(a|aa)+$"}).for_run().scrub("aaa-bbb") == "aaa-bbb"  # per run


async def test_a_stalling_user_pattern_does_not_stall_the_run() -> None:
    agent = Agent(provider=mock(reply="ok"), redact=Redaction(patterns={"hostile": r"(x+x+)+y|(a|aa)+$"}))
    run = await agent.run("a" * 80 + "!")
    assert run.recording.input["message"] == "[redacted:hostile]"
    assert "a" * 20 not in run.recording.model_dump_json()


def test_a_compiled_pattern_keeps_its_flags_under_the_time_limit() -> None:
    scrub = Redaction(patterns={"ticket": re.compile(r"tck-\d{4}", re.IGNORECASE)}).for_run().scrub
    assert scrub("see TCK-1234 and tck-9876") == "see [redacted:ticket] and [redacted:ticket]"


def test_a_pattern_the_bounded_matcher_cannot_read_is_refused_by_name() -> None:
    # (?P>name) recursion-free but re-only syntax is rare; an unbalanced set is not valid anywhere
    with pytest.raises(RedactionConfigError) as refused:
        Redaction(patterns=["[a-"])
    assert refused.value.code == "ERR_REDACTION_CONFIG" and "[a-" not in str(refused.value)

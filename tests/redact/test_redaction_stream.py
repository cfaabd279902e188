"""Live token events cannot leak a match that spans whitespace or tokens, however the stream is split (issue 17).

The gate used to cut a stream at any break no whole match crossed, so the first words of a
multi-word pattern (a codename, a street address) went out before the rest had arrived, and the
whole match was never seen. Here the stream is cut at every position (and at random sets of
positions): what the gate releases must be exactly what the policy makes of the whole text.
"""

from __future__ import annotations

import itertools
import string
from typing import Any

from conversation_kit import Streaming
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint_lab import Agent, Redaction
from footprint_lab.redact.token_gate import TokenGate

POLICY = Redaction(
    patterns={"codename": r"Project\s+Blue\s+Falcon", "address": r"\d{1,4} [A-Z][a-z]+ (?:Street|Road)"},
    builtins=["email", "bearer_token", "private_key_block", "openai_key"],
)
TEXT = "Ship it to 221 Baker Street for Project  Blue\nFalcon, ana@example.org says."
WORDS = ("221", "Baker", "Project", "Blue", "Falcon", "ana@")


def released(chunks: list[str], policy: Redaction = POLICY) -> list[str]:
    out: list[str] = []
    gate = TokenGate(policy.for_run(), out.append)
    for chunk in chunks:
        gate.feed(chunk)
    gate.flush()
    return out


def pieces(text: str, cuts: tuple[int, ...]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def test_a_multi_word_match_is_held_whole_whatever_two_or_three_tokens_carry_it() -> None:
    whole = POLICY.for_run().scrub(TEXT)
    assert whole == ("Ship it to [redacted:address] for [redacted:codename], [redacted:email] says.")
    positions = range(1, len(TEXT))
    for cuts in itertools.chain(((i,) for i in positions), itertools.combinations(positions[::3], 2)):
        out = released(pieces(TEXT, cuts))
        assert "".join(out) == whole, cuts
        assert not any(word in piece for piece in out for word in WORDS), cuts


WORD = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=7)
PLANTS = st.sampled_from(["Project Blue Falcon", "Project\tBlue  Falcon", "12 Elm Road", "bob@mail.example.com",
                          "Bearer abcdefghijklmnop1234", "sk-" + "Ab1" * 8,
                          "-----BEGIN RSA PRIVATE KEY-----\nMIIEbody line\n-----END RSA PRIVATE KEY-----",
                          "pin: 4821", "pay 9120 EUR"])
#: patterns that read around their match, beside the policy above
LOOKING = POLICY.union(Redaction(patterns={"pin": r"(?<=pin: )\d{4}", "amount": r"\d+(?= EUR)"}))


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.one_of(WORD, PLANTS), min_size=1, max_size=12),
       seps=st.lists(st.sampled_from([" ", "  ", "\n", ", "]), min_size=12, max_size=12), data=st.data())
def test_random_streams_release_exactly_what_the_policy_makes_of_the_whole(
    words: list[str], seps: list[str], data: Any,
) -> None:
    text = "".join(word + sep for word, sep in zip(words, seps, strict=False)).rstrip()
    cuts = tuple(sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=20)))))
    policy = data.draw(st.sampled_from([POLICY, LOOKING]))
    out = released(pieces(text, tuple(c for c in cuts if 0 < c < len(text))), policy)
    assert "".join(out) == policy.for_run().scrub(text)
    secrets = ("Falcon", "Elm", "bob@", "abcdefghijklmnop", "Ab1Ab1", "MIIEbody") + (
        ("4821", "9120") if policy is LOOKING else ())
    assert not any(secret in piece for piece in out for secret in secrets)


async def test_an_agents_live_token_events_never_carry_a_codename_split_across_tokens() -> None:
    chunks = ["The plan: Project", " Blue", " Fal", "con starts", " at 9."]
    live: list[str] = []
    agent = Agent(provider=Streaming(chunks), redact=Redaction(patterns={"codename": r"Project\s+Blue\s+Falcon"}))
    run = await agent.run("go", on_event=lambda e: live.append(e.payload["text"]) if e.type == "token" else None)
    assert run.answer == "".join(chunks)
    assert "".join(live) == "The plan: [redacted:codename] starts at 9." == run.recording.answer
    assert not any(word in piece for piece in live for word in ("Project", "Blue", "Fal"))


def test_a_long_stream_held_behind_a_key_that_never_ends_is_released_masked_at_the_end() -> None:
    body = "words " * 600
    text = f"Here: -----BEGIN RSA PRIVATE KEY-----\nMIIEbody {body} Project Blue Falcon by 12 Elm Road."
    out = released([text[i:i + 3] for i in range(0, len(text), 3)])
    assert "".join(out) == POLICY.for_run().scrub(text) == "Here: [redacted:private_key_block]"
    prose = f"{body}then Project Blue Falcon at 12 Elm Road, {body}end"
    out = released([prose[i:i + 3] for i in range(0, len(prose), 3)])
    assert len(out) > 100 and "".join(out) == POLICY.for_run().scrub(prose)
    assert not any(word in piece for piece in out for word in ("Falcon", "Elm"))


def test_a_known_pass_phrase_is_never_released_word_by_word() -> None:
    scrubber = Redaction(keys=["password"]).for_run()
    scrubber.scrub({"password": "correct horse battery staple"})  # learned before the stream
    text = "I will try correct horse battery staple now, then stop."
    for cuts in itertools.chain(((i,) for i in range(1, len(text))), itertools.combinations(range(1, len(text), 4), 2)):
        out: list[str] = []
        gate = TokenGate(scrubber, out.append)
        for chunk in pieces(text, cuts):
            gate.feed(chunk)
        gate.flush()
        assert "".join(out) == "I will try [redacted:password] now, then stop.", cuts
        assert not any(word in piece for piece in out for word in ("correct", "horse", "battery")), cuts


def test_a_pattern_reading_around_its_match_is_never_cut_from_what_it_reads() -> None:
    policy = Redaction(patterns={"pin": r"(?<=pin: )\d{4}", "amount": r"\d+(?= EUR)"})
    text = "my pin: 4821 and pay 120 EUR today, thanks a lot."
    whole = policy.for_run().scrub(text)
    assert whole == "my pin: [redacted:pin] and pay [redacted:amount] EUR today, thanks a lot."
    for cuts in itertools.chain(((i,) for i in range(1, len(text))), itertools.combinations(range(1, len(text), 3), 2)):
        out = released(pieces(text, cuts), policy)
        assert "".join(out) == whole, cuts


def test_a_look_behind_pattern_still_arriving_keeps_what_it_reads() -> None:
    policy = Redaction(patterns={"pin": r"(?<=pin: )\d{4}"})
    out = released(["my pin: 48", "21 and", " more words", " here."], policy)
    assert "".join(out) == "my pin: [redacted:pin] and more words here."
    assert not any("48" in piece for piece in out)

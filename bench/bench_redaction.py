"""Redaction benchmark: no text stalls the built-in patterns (issue 17, finding 1).

Scenario: for each built-in pattern of ``Redaction.standard()``, 1 MB of adversarial text is
scrubbed by a one-pattern policy (``Redaction(builtins=[name]).for_run().scrub(text)``, the
path every recorded value takes). The texts are the known stallers (``"a." * N + "@"`` for the
email pattern, repeated ``-----BEGIN RSA PRIVATE KEY----- `` for the private-key block) and a
search for the worst case of each pattern: every prefix of a true match, followed by each of a
few separators, repeated to 1 MB and closed by each of a few tails. A backtracking form is
quadratic (or worse) on one of these; a linear one stays near the cost of reading the text.

The search runs on 50 kB (a quadratic form already stands out there), then the worst text is
timed at full size. Figures: per pattern, the median time over that text at 1 MB (goal: at most
100 ms), and its ratio to the same text at 250 kB (linear: about 4; quadratic: about 16).
Then a user pattern that backtracks exponentially (``(a|aa)+$``) on a 61-character text, to show
the time limit holding it near :data:`~footprint_lab.redact.policy.PATTERN_TIME_LIMIT` (the
matcher looks at the clock between steps, so it can overrun a little) and the text masked whole.

Then base64 (a match may be encoded, as in an ``Authorization: Basic`` header): 1 MB of base64
words that decode to text holding nothing covered (goal: at most 100 ms; they are screened in one
pass), and 1 MB where every word holds an email address, each rewritten (a reference).

Last, the token gate (what streams live token events under a policy): 1 MB streamed in 4-character
tokens with no whitespace, which it must hold whole; it looks again only when a break arrives, so
this costs about one scan, not one per token. And 1 MB of words after a private key's header that
never ends (a match still arriving, so everything is held): it looks again only as what it holds
doubles (it used to look at every break: 20 kB took 11 s). And 1 MB under a pattern of yours that
runs out of its time limit on every look: held whole (fail closed), about 1.5 s in all, not 0.1 s
per break.

Then a text of masks already written, each spelling a word the policy learned (``word`` in
``[redacted:password]``), and the word once on its own (goal: at most 100 ms for 1 MB: each mask is kept
whole in one walk; a check per mask and place took 13 s for 640 kB).

Last, what learning costs a long run: 300 tool calls, each with a password in its arguments and a password,
a token and a note in its result, run and saved under the standard policy and three keys, against the same
run with no policy (a reference: each learned value is hunted in every text recorded after it).

Run ``python bench/bench_redaction.py`` (``--quick`` runs each pattern on 20 kB only).
"""

from __future__ import annotations

import base64
import json
import statistics
import time
from typing import Any

from _kit import Report, called_block, interleaved_ms, options

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.redact.policy import BUILTIN_PATTERNS, PATTERN_TIME_LIMIT
from footprint_lab.redact.token_gate import TokenGate

GOAL_MS = 100.0

#: A true match of each built-in pattern: the seed of the adversarial texts.
SAMPLES = {
    "openai_key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
    "anthropic_key": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
    "github_token": "ghp_" + "a1B2" * 10,
    "bearer_token": "Bearer abcdefghijklmnopqrstuvwx==",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private_key_block": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "email": "john.doe+x@mail.example.co.uk",
}
#: The stallers reported in issue 17, and those found while writing the linear forms.
KNOWN = {
    "email": ["a.", "a@", "a.a@", "-a"],
    "private_key_block": ["-----BEGIN RSA PRIVATE KEY----- ", "-----BEGIN "],
    "jwt": ["-eyJ", "eyJa.", "eyJaaaaaaaaa.aaaaaaaaa"],
    "openai_key": ["sk-", "-sk-a"],
    "bearer_token": ["bearer ", "Bearer\t"],
}
SEPARATORS = ("", " ", ".", "-", "_", "@", "\n", "=")
TAILS = ("", "@", "-----END RSA PRIVATE KEY-----")


def repeated(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def units(name: str) -> list[str]:
    sample = SAMPLES[name]
    found = [sample[:cut] + sep for cut in range(1, len(sample) + 1) for sep in SEPARATORS]
    return [*KNOWN.get(name, []), *found]


def scrub_ms(policy: Redaction, text: str) -> float:
    scrubber = policy.for_run()
    started = time.perf_counter()
    scrubber.scrub(text)
    return (time.perf_counter() - started) * 1000


def learned_ms(scrubber: Any, text: str) -> float:
    """How long a scrubber that has learned values takes over ``text``."""
    started = time.perf_counter()
    scrubber.scrub(text)
    return (time.perf_counter() - started) * 1000


def worst_text(name: str, size: int) -> tuple[str, str]:
    """The text (and how it was made) that takes this pattern longest, over every candidate."""
    policy = Redaction(builtins=[name])
    worst = (-1.0, "", "")
    for unit in units(name):
        body = repeated(unit, size)
        for tail in TAILS:
            took = scrub_ms(policy, body + tail)
            if took > worst[0]:
                worst = (took, body + tail, f"{unit!r} repeated, then {tail!r}")
    return worst[1], worst[2]


def samples(policy: Redaction, text: str, rounds: int) -> list[float]:
    return [scrub_ms(policy, text) for _ in range(rounds)]


#: the standard keys and patterns, and three keys a tool's data uses
LONG_RUN_POLICY = Redaction.standard().union(Redaction(keys=["note", "id", "customer"]))


def long_run(iterations: int, policy: Redaction | None) -> str:
    """A run of ``iterations`` tool calls, each with a password in its arguments and a password, a token and a
    note in its result, run and saved (``model_dump_json``): its cost under a policy is what learning costs."""
    lookup = define_tool(name="lookup", description="Look a record up.", input_schema={"type": "object", "properties": {
        "id": {"type": "integer"}, "password": {"type": "string"}}},
        fn=lambda id, password: {"id": id, "password": f"pw-{id}-secret", "token": f"tok{id}abc", "note": "x" * 200})

    def respond(request: LLMRequest) -> Any:
        at = request.call_index
        return {"tool": "lookup", "args": {"id": at, "password": f"argpw{at}zz"}} if at < iterations else "done"

    agent = Agent(provider=mock(respond=respond), tools=[lookup], max_iterations=iterations + 5, redact=policy)
    return agent.run_sync("go").recording.model_dump_json()


def main() -> None:
    args = options(__doc__.splitlines()[0])  # --quick: 20 kB per pattern, only checks it runs
    report = Report("redaction", args)
    size = 20_000 if args.quick else 1_000_000
    rounds = 1 if args.quick else 7
    search = 50_000 if not args.quick else 5_000
    print(f"built-in patterns, worst adversarial text of {size:,} characters, median of {rounds}:")
    slow = []
    for name in BUILTIN_PATTERNS:
        small, how = worst_text(name, search)
        policy = Redaction(builtins=[name])
        full = samples(policy, repeated(small, size), rounds)
        quarter = samples(policy, repeated(small, size // 4), rounds)
        took = statistics.median(full)
        growth = took / max(statistics.median(quarter), 1e-3)
        report.add(f"built-in pattern {name}, worst text", full, size=f"{size:,} chars",
                   goal=f"<= {GOAL_MS:.0f} ms", met=took <= GOAL_MS, peer=f"{size // 4:,} chars",
                   peer_samples=quarter, ratio=growth, note=how)
        if took > GOAL_MS:
            slow.append(name)
    # a match may hide in base64 (an encoded credential): each base64 word is read, and words that hold
    # nothing covered are screened in one pass, with no Python call per word
    standard = Redaction.standard()
    empty = repeated(base64.b64encode(b"hello world, hi!!").decode() + " ", size)
    encoded = samples(standard, empty, rounds)
    report.add("base64 words that hold nothing covered, standard policy", encoded, size=f"{size:,} chars",
               goal=f"<= {GOAL_MS:.0f} ms", met=statistics.median(encoded) <= GOAL_MS,
               note="each word decoded and screened, none rewritten")
    if statistics.median(encoded) > GOAL_MS:
        slow.append("base64 words")
    full_of = repeated(base64.b64encode(b"mail dana@ex.com ok").decode() + " ", size)
    report.add("every base64 word holds an email, standard policy", samples(standard, full_of, rounds),
               size=f"{size:,} chars", goal="(reference)",
               note="each word decoded, masked and encoded again: a Python call per word")
    hostile = Redaction(patterns={"hostile": r"(a|aa)+$"})
    started = time.perf_counter()
    masked = hostile.for_run().scrub("a" * 60 + "!")
    held = (time.perf_counter() - started) * 1000
    print(f"user pattern (a|aa)+$ on 61 characters: {held:.0f} ms (limit {PATTERN_TIME_LIMIT * 1000:.0f} ms), "
          f"text masked whole: {masked == '[redacted:hostile]'}")
    def streamed_ms(token: str, opening: str = "", policy: Redaction | None = None) -> float:
        released: list[str] = []
        gate = TokenGate((policy or Redaction.standard()).for_run(), released.append)
        started = time.perf_counter()
        gate.feed(opening)
        for _ in range(size // len(token)):
            gate.feed(token)
        gate.flush()
        return (time.perf_counter() - started) * 1000

    report.add("token gate, 4-character tokens without whitespace", [streamed_ms("abcd") for _ in range(rounds)],
               size=f"{size:,} chars", note="held whole; looked at again only when a break arrives")
    opened = [streamed_ms("abc ", "-----BEGIN RSA PRIVATE KEY-----\n") for _ in range(rounds)]
    report.add("token gate, a private key that never ends, then words", opened, size=f"{size:,} chars",
               goal=f"<= {10 * GOAL_MS:.0f} ms", met=statistics.median(opened) <= 10 * GOAL_MS,
               note="held whole (a match may still be arriving); looked at again only as what is held doubles")
    out_of_time = [streamed_ms("a" * 30 + " ", policy=hostile) for _ in range(rounds)]
    report.add("token gate, a pattern of yours that runs out of time on every look", out_of_time,
               size=f"{size:,} chars", note="held whole (fail closed); each look costs the time limit, and "
               "looks come only as what is held doubles")
    # JSON text read for covered keys: a key beside a long JSON body encoded as a string (every quote in it escaped),
    # and a text of JSON objects, one covered key in each (each key is found in one left-to-right reading)
    body = json.dumps([{"id": k, "note": "x" * 20} for k in range(size // 40)])
    beside = json.dumps({"authorization": "Bearer abcdefghijklmnop", "body": body})
    read = samples(standard, beside, rounds)
    report.add("JSON text: a covered key beside a JSON body encoded as a string", read, size=f"{len(beside):,} chars",
               goal=f"<= {GOAL_MS:.0f} ms", met=statistics.median(read) <= GOAL_MS,
               note=f"{body.count(chr(34)):,} escaped quotes; a reading that looked inside strings was quadratic")
    if statistics.median(read) > GOAL_MS:
        slow.append("JSON body beside a covered key")
    # quotes that each open an escaped object and never close (a reading that retried at each was quadratic), and
    # a text of 4,000 masks and 1,000 learned values (a split at every mask read every value in each part)
    opened = '"{\\"' * (size // 4)
    among = json.dumps({"users": [{"password": f"pw-{k:06d}"} for k in range(1000)],
                        "seen": ["[redacted:password]"] * 4000})
    for scenario, text in (("a text of quotes that each open an escaped object", opened),
                           ("JSON text of 1,000 covered values and 4,000 masks", among)):
        took = samples(Redaction(keys=["password"]), text, rounds)
        report.add(scenario, took, size=f"{len(text):,} chars", goal=f"<= {GOAL_MS:.0f} ms",
                   met=statistics.median(took) <= GOAL_MS)
        if statistics.median(took) > GOAL_MS:
            slow.append(scenario)
    # a learned value that repeats itself (a run of one character) found in a text: an automaton walks a long such
    # word's length at every character, so a long one is looked for on its own; and a learned word that every mask
    # already written spells, among them
    cases = [("a learned value of one repeated character, found in a text", "A" * (size // 10),
              f"x {'A' * (size // 10)} y", size // 10, "it took 4.8 s at 100,000 characters, in an automaton"),
             ("a learned word that every mask already written spells, among them", "word",
              "[redacted:password] " * (size // 20) + "a word", size,
              "each mask kept whole, the word masked where it stands alone: one walk over the masks")]
    for scenario, value, text, length, note in cases:
        scrubber = Redaction(keys=["password"]).for_run()
        scrubber.scrub({"password": value})
        took = [learned_ms(scrubber, text) for _ in range(rounds)]
        report.add(scenario, took, size=f"{length:,} chars", goal=f"<= {GOAL_MS:.0f} ms",
                   met=statistics.median(took) <= GOAL_MS, note=note)
        if statistics.median(took) > GOAL_MS:
            slow.append(scenario)
    iterations = 30 if args.quick else 300
    costs = interleaved_ms(2 if args.quick else 5, 1, collect=True,
                           plain=called_block(lambda: long_run(iterations, None)),
                           policy=called_block(lambda: long_run(iterations, LONG_RUN_POLICY)))
    report.add("a long run under a policy, run and saved", costs["policy"], size=f"{iterations} tool calls",
               goal="(reference)", peer="the same run, no policy", peer_samples=costs["plain"],
               ratio=statistics.median(costs["policy"]) / statistics.median(costs["plain"]),
               note="each call's arguments and result hold a password and a token, each learned and hunted after")
    report.close()
    if not args.quick and slow:
        raise SystemExit(f"over {GOAL_MS:.0f} ms: {', '.join(slow)}")


if __name__ == "__main__":
    main()

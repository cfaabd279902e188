"""JSON text in the shapes real tools write it is read for covered keys, and what is learned is masked exactly.

What a user relies on: with ``Redaction(keys=["password", "cvv", "pin"])``, a value under a covered key in JSON
text shows nowhere, whether the text ends with a newline (an HTTP body), is lines of JSON (NDJSON), is JSON
encoded twice, or spells its pairs as ``json.dumps`` would not (``"cvv" : "737"``, a tab after the colon, ``1e3``,
``\\u0037``, a key written twice). And a mask covers what was learned and nothing more: ``"pin": 42`` learned
leaves ``"pin": 420`` alone, and two learned values that overlap in a text are masked as one span.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from test_redaction_escaped import held, served, showing

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.providers import mock

POLICY = Redaction(keys=["password", "cvv", "pin"])
PASSWORD, CVV = "Oriole-Quartz-5521", "Zq7"
DATA = {"user": "ana", "password": PASSWORD, "cvv": CVV}


@pytest.mark.parametrize("text", [
    json.dumps(DATA) + "\n",
    " " + json.dumps(DATA),
    "\n" + json.dumps(DATA, indent=2) + "\n\n",
    json.dumps(DATA) + "\r\n" + json.dumps({"ok": 1}),
    json.dumps({"ok": 1}) + "\n" + json.dumps(DATA) + "\n",
    json.dumps(json.dumps(DATA)),
    json.dumps(json.dumps(DATA) + "\n"),
], ids=["trailing newline", "leading space", "pretty, blank lines", "CRLF NDJSON", "LF NDJSON",
        "JSON encoded twice", "twice, with a newline"])
def test_json_text_with_whitespace_lines_or_encoded_twice_is_read(text: str) -> None:
    scrubber = POLICY.for_run()
    masked = scrubber.scrub(text)
    assert PASSWORD not in masked and CVV not in masked
    assert "ana" in masked and scrubber.counts["key:password"] == 1


async def test_a_tool_returning_json_with_a_trailing_newline_shows_its_password_nowhere(tmp_path: Path) -> None:
    api = define_tool(name="api", description="Call the API.", fn=lambda: json.dumps(DATA) + "\n")
    agent = Agent(provider=mock(replies=[{"tool": "api", "args": {}}, "Done."]), tools=[api], redact=POLICY)
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    texts = served(run, tmp_path, events)
    assert showing(PASSWORD, texts) == {} and showing(CVV, texts) == {}


@pytest.mark.parametrize(("text", "masked"), [
    ('{"cvv" : "737"}', '{"cvv" : "[redacted:cvv]"}'),
    ('{"cvv":\t"737"}', '{"cvv":\t"[redacted:cvv]"}'),
    ('{"cvv":["7","3"]}', '{"cvv":"[redacted:cvv]"}'),
    ('{"cvv": "737", "cvv": "999"}', '{"cvv": "[redacted:cvv]", "cvv": "[redacted:cvv]"}'),
    ('{"pin": 1e3}', '{"pin": "[redacted:pin]"}'),
    ('{"pin": -0}', '{"pin": "[redacted:pin]"}'),
    ('{"pin": 4.20}', '{"pin": "[redacted:pin]"}'),
    ('{"cvv": "\\u0037\\u0033\\u0037"}', '{"cvv": "[redacted:cvv]"}'),
    ('{"order": 737,\n "cvv" :  "737"}', '{"order": 737,\n "cvv" :  "[redacted:cvv]"}'),
])
def test_a_short_value_is_masked_as_the_json_text_spells_it(text: str, masked: str) -> None:
    scrubber = POLICY.for_run()
    assert scrubber.scrub(text) == masked
    assert scrubber.scrub(f"again: {text}") == f"again: {masked}"  # learned as spelled: found in another text too


@pytest.mark.parametrize("text", ['audit: "pin": 420 rotated', "error {'pin': 4217}", 'x("pin": 42.5)',
                                  'x("pin": 42e1)', 'x(\\"pin\\": 421)'])
def test_a_learned_number_beside_its_key_masks_no_longer_number(text: str) -> None:
    """Outside a JSON object (which is read for its covered keys, whatever their values), a learned number pair
    masks only where its number ends."""
    scrubber = POLICY.for_run()
    scrubber.scrub({"pin": 42})
    assert scrubber.scrub(text) == scrubber.sweep(text) == text
    assert scrubber.hits(text) == []
    assert scrubber.scrub('{"pin": 42, "pins": 420}') == '{"pin": "[redacted:pin]", "pins": 420}'
    assert scrubber.scrub('audit: {"pin": 420} rotated') == 'audit: {"pin": "[redacted:pin]"} rotated'
    assert scrubber.scrub('x("{\\"pin\\": 421}")') == 'x("{\\"pin\\": \\"[redacted:pin]\\"}")'  # JSON in a string


def test_learned_values_that_overlap_in_a_text_are_masked_as_one_span() -> None:
    scrubber = Redaction(keys=["password", "token"]).for_run()
    scrubber.scrub({"password": "1234-5678-ABCD", "token": "ABCD-9999-ZZZZ"})
    text = "card 1234-5678-ABCD-9999-ZZZZ end, and ABCD-9999-ZZZZ-x"
    for masked in (scrubber.scrub(text), scrubber.sweep(text)):
        assert masked == "card [redacted:password] end, and [redacted:token]-x"


@pytest.mark.parametrize("password", ["it's\"quoted-4421", "nb\xa0space-4421", "bell\x07-4421"])
async def test_a_value_shown_by_its_repr_before_it_is_learned_is_recalled(password: str, tmp_path: Path) -> None:
    """An error prints the arguments (a ``repr``) before a later call puts the value under the key: the live event
    that carried the error is recalled, since its payload's JSON holds the value's ``repr`` form."""

    def lookup(user: str) -> str:
        raise ValueError(f"no such login: {dict(user=user, password=password)}")

    agent = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"user": "ana"}},
                                         {"tool": "login", "args": {"password": password}}, "Done."]),
                  tools=[define_tool(name="lookup", description="Look up.", fn=lookup),
                         define_tool(name="login", description="Log in.", fn=lambda password: "ok")],
                  redact=Redaction(keys=["password"]))
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    assert any(event.type == "recall" for event in events)
    assert showing(password, served(run, tmp_path, events)) == {}
    assert "no such login" in json.dumps(held(events))


def test_short_values_learned_beside_a_key_are_found_only_beside_the_key() -> None:
    """A pair is found only where the key stands beside its value: a long JSON text of ordinary numbers (``: 42``
    at every turn) that never names the key holds none of 300 learned pairs."""
    scrubber = Redaction(keys=["password", "id"]).for_run()
    for number in range(300):
        scrubber.scrub({"id": number})
    body = json.dumps({"rows": [{"row": i % 300, "qty": i % 97} for i in range(2000)]})
    assert not scrubber.knows_any(body)
    assert scrubber.scrub(body) == body
    assert scrubber.scrub('{"id": 42, "row": 42}') == '{"id": "[redacted:id]", "row": 42}'
    assert re.search(r'"id": \d', scrubber.scrub(json.dumps({"rows": [{"id": i} for i in range(300)]}))) is None


@pytest.mark.parametrize("text", [
    "Result: " + json.dumps(DATA) + " (cached)",
    "Got " + json.dumps({"n": 1}) + " and " + json.dumps({"nested": DATA}) + ".",
    "log line 12: {not json} then " + json.dumps(DATA, indent=2),
], ids=["inside a sentence", "the second of two objects, nested", "after stray braces"])
def test_a_json_object_written_inside_a_longer_text_is_read(text: str) -> None:
    """A tool that answers ``Result: {"password": ...} (cached)`` showed the password whole: only a text that is JSON
    as a whole was read for covered keys. Each JSON object written inside a text is now read as data is."""
    scrubber = POLICY.for_run()
    masked = scrubber.scrub(text)
    assert PASSWORD not in masked and CVV not in masked and "ana" in masked


def test_a_longer_text_of_stray_braces_and_numbers_is_left_as_it_is_and_read_quickly() -> None:
    """Braces that open no object, a number beside an uncovered key: nothing is masked. A text of a hundred thousand
    braces that never close is read in bounded time (at most 32 objects, each up to 16 KB, are tried)."""
    import time

    scrubber = POLICY.for_run()
    text = 'Order 737 shipped {not json} {"order": 737} {"total": "737.00"}'
    assert scrubber.scrub(text) == text
    stray = '{"a' * 100_000
    started = time.perf_counter()
    assert scrubber.scrub(stray) == stray
    assert time.perf_counter() - started < 30  # a bound, not a benchmark: unbounded it takes minutes (about 2 s here)


def test_every_pair_of_a_key_learned_hundreds_of_times_is_found_in_any_chunk() -> None:
    """A long run learns a short id under a covered key on every call: hundreds of pairs of one key, screened 64
    to a search. Each is masked wherever it is written, whichever chunk holds it (a full one, or the ones after the
    last), and a text that names the key without a learned pair is left as it is."""
    scrubber = Redaction(keys=["id"]).for_run()
    for n in range(200):
        assert scrubber.scrub({"id": n}) == {"id": "[redacted:id]"}
    for n in (0, 63, 64, 127, 150, 199):
        assert scrubber.scrub(f'lookup({{"id": {n}}})') == 'lookup({"id": "[redacted:id]"})'
        assert scrubber.sweep(f"called with {{'id': {n}}}") == "called with {'id': '[redacted:id]'}"
    assert scrubber.scrub("a valid id: none") == "a valid id: none"
    assert scrubber.sweep('{"id": 200}') == '{"id": 200}'   # never learned: a sweep leaves it


def test_every_value_learned_one_at_a_time_is_still_masked_after_a_thousand_more() -> None:
    """What a scrubber learned is never forgotten as its index grows: 1,000 values under a covered key, learned one
    per scrub with a look between each, are each masked in a text scrubbed at the end, in raw and JSON-escaped form,
    beside text that holds none of them."""
    scrubber = Redaction(keys=["token"]).for_run()
    values = [f"tok-{n:04d}-\u00e9x" for n in range(1000)]
    for value in values:
        scrubber.scrub({"token": value})
        scrubber.scrub("a look between two learnings")
    text = " | ".join(values[::-1]) + " " + json.dumps(values[:3]) + " tok-9999-ok"
    masked = scrubber.scrub(text)
    assert not any(value in masked for value in values)
    assert "\\u00e9x" not in masked and masked.endswith(" tok-9999-ok")


SECRET = "hunter2-Falcon-9913"
LONG = "eyJhbGciOi/" + "AbC/dEf+ghI/" * 20 + "Zz9"  # 251 characters, slashes in it
#: JSON text as other writers spell it, each holding a covered value (``@`` stands for SECRET), and the spelling the
#: value has in it
WRITTEN = {
    "PHP escapes every slash, a long value": (json.dumps({"token": LONG}).replace("/", "\\/"),
                                              LONG.replace("/", "\\/")),
    "PHP, the value again in another field": (
        '{"password":"pw\\/Falcon-9913","url":"https:\\/\\/x.io\\/?pw=pw\\/Falcon-9913"}', "pw\\/Falcon-9913"),
    "Go and Gson escape & and <": (
        '{"password":"a\\u0026b\\u003cFalcon-9913","echo":"was a\\u0026b\\u003cFalcon-9913"}',
        "a\\u0026b\\u003cFalcon-9913"),
    "Jackson writes upper-case hex": (
        '{"password":"Cr\\u00E8me-Br\\u00FBl\\u00E9e-4421","hint":"Cr\\u00E8me-Br\\u00FBl\\u00E9e-4421"}',
        "Cr\\u00E8me-Br\\u00FBl\\u00E9e-4421"),
    "an escaped key and letter": ('{"pass\\u0077ord": "hunter\\u0032-Falcon-9913"}', "hunter\\u0032-Falcon-9913"),
    "a lone surrogate elsewhere": ('{"bio": "I love \\ud83d", "password": "@"}', SECRET),
    "inside a longer text, a lone surrogate": ('Result: {"bio": "\\ud83d", "password": "@"} (cached)', SECRET),
    "a log tail: JSON lines around a line of prose": (
        '{"level":"info"}\nWARN retry login {"user":"ana","password":"@"}\n{"level":"info"}', SECRET),
    "an object inside a string field": (json.dumps({"log": 'Result: {"password": "@"} (cached)'}), SECRET),
    "a key written twice, the last null": ('{"password": "@", "password": null}', SECRET),
    "a key written twice, the last a mask": ('{"password": "@", "password": "[redacted:password]"}', SECRET),
    "a key written twice, the first a long object": (
        '{"password": {"v": "@", "pad": "' + "p" * 250 + '"}, "password": "x"}', SECRET),
    "32 stray braces before the one object": (
        "notes: " + " ".join('{"x' for _ in range(32)) + ' then {"password": "@"}', SECRET),
    "1,100 templates that are no JSON before the object": (
        " | ".join('tpl {"name": {{name}} }' for _ in range(1100)) + ' | creds {"password": "@"}', SECRET),
    "a raw tab inside a string": ('{"note": "a\tb", "password": "@"}', SECRET),
    "a number longer than Python reads elsewhere": ('{"big": ' + "9" * 5000 + ', "password": "@"}', SECRET),
    "a lone surrogate in the covered value": ('{"password": "@\\ud83d"}', SECRET),
    "JSON encoded twice inside a logfmt line": (
        'level=warn body="{\\"user\\": \\"ana\\", \\"password\\": \\"@\\"}" status=401', SECRET),
    "a pretty-printed body quoted in a log line": (
        'level=warn body="{\\n  \\"user\\": \\"ana\\",\\n  \\"password\\": \\"@\\"\\n}" status=401', SECRET),
    "a quoted body after a prefix inside the quotes": ('msg="request: {\\"password\\": \\"@\\"} sent" ok', SECRET),
    "a quoted body after 5,000 quoted tags": (
        " ".join('tag="[app]"' for _ in range(5000)) + ' body="{\\"password\\": \\"@\\"}"', SECRET),
}


@pytest.mark.parametrize("name", list(WRITTEN))
async def test_json_text_as_other_writers_spell_it_shows_its_covered_value_nowhere(name: str, tmp_path: Path) -> None:
    """A tool's result is JSON text as PHP, Go, Java or a log writes it: the covered value shows in no record, view,
    file or event, neither as the text spells it nor as Python would write it."""
    text, spelled = WRITTEN[name][0].replace("@", SECRET), WRITTEN[name][1]
    fetch = define_tool(name="fetch", description="Fetch.", fn=lambda: text)
    agent = Agent(provider=mock(replies=[{"tool": "fetch", "args": {}}, "Done."]), tools=[fetch],
                  redact=Redaction(keys=["password", "token"]))
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    texts = served(run, tmp_path, events)
    value = json.loads(json.dumps(spelled).replace("\\\\", "\\"))  # the value the spelling writes
    assert showing(value, texts) == {}
    assert [where for where, served_text in texts.items()
            if spelled in served_text or json.dumps(spelled)[1:-1] in served_text] == []
    assert "Done." in texts["recording"]


async def test_bytes_under_a_covered_key_are_learned_as_the_text_they_hold(tmp_path: Path) -> None:
    """A tool returns a decrypted password as bytes; the model repeats it: masked in the answer too."""
    fetch = define_tool(name="fetch", description="Fetch.", fn=lambda: {"user": "ana", "password": SECRET.encode()})
    agent = Agent(provider=mock(replies=[{"tool": "fetch", "args": {}}, f"Your password is {SECRET}."]),
                  tools=[fetch], redact=Redaction(keys=["password"]))
    run = await agent.run("Go.")
    assert showing(SECRET, served(run, tmp_path)) == {}
    assert run.recording.answer == "Your password is [redacted:password]."


@pytest.mark.parametrize("written", ["url", "html", "javascript", "xml", "jinja", "php", "xml attribute"])
async def test_a_learned_value_a_url_or_a_web_page_writes_shows_nowhere(written: str, tmp_path: Path) -> None:
    """The password a call sent comes back percent-encoded in an error's query string, or HTML-escaped in a form a
    tool returns: neither spelling shows anywhere."""
    password = 'p@ss w0rd&Falcon\'s/"99"13!(x)'
    spell = {"url": urllib.parse.quote_plus, "html": html.escape,
             "javascript": lambda text: urllib.parse.quote(text, safe="!~*'()"),  # encodeURIComponent
             "xml": lambda text: html.escape(text, quote=False),  # xml.sax.saxutils.escape
             "jinja": lambda text: html.escape(text).replace("&#x27;", "&#39;").replace("&quot;", "&#34;"),
             "php": lambda text: html.escape(text).replace("&#x27;", "&#039;"),  # htmlspecialchars, ENT_QUOTES
             "xml attribute": lambda text: html.escape(text).replace("&#x27;", "'")}[written]  # saxutils.quoteattr

    def login(password: str) -> str:
        if written == "url":
            raise RuntimeError(f"GET https://api.example/login?password={urllib.parse.quote_plus(password)} -> 401")
        return f'<form><input name="password" value="{spell(password)}"></form>'

    tool = define_tool(name="login", description="Log in.", fn=login,
                       input_schema={"type": "object", "properties": {"password": {"type": "string"}}})
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": password}}, "Done."]), tools=[tool],
                  redact=Redaction(keys=["password"]))
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    texts = served(run, tmp_path, events)
    spelled = spell(password)
    assert [where for where, text in texts.items() if spelled in text or html.escape(spelled) in text] == []
    assert showing(password, texts) == {}
    assert ("api.example/login?password=" if written == "url" else "<input name=") in texts["recording"]


@pytest.mark.parametrize("inside", [False, True], ids=["the whole text", "inside a longer text"])
async def test_a_covered_value_nested_deeper_than_the_parser_reaches_is_masked_from_its_key_on(inside: bool) -> None:
    """JSON nested 5,000 levels under a covered key cannot be parsed: the text is masked from the key to its end (fail
    closed), the fields before it kept, and the run goes on."""
    body = '{"user": "ana", "password": ' + "[" * 5000 + f'"{SECRET}"' + "]" * 5000 + "}"
    fetch = define_tool(name="fetch", description="Fetch.", fn=lambda: f"Result: {body} (cached)" if inside else body)
    agent = Agent(provider=mock(replies=[{"tool": "fetch", "args": {}}, "Done."]), tools=[fetch],
                  redact=Redaction(keys=["password"]))
    run = await agent.run("Go.")
    recorded = run.recording.model_dump_json()
    assert SECRET not in recorded and "[[[[" not in recorded and run.answer == "Done."
    assert '{\\"user\\": \\"ana\\", \\"password\\": [redacted:password]' in recorded


async def test_text_shaped_like_a_mask_does_not_hide_a_learned_value(tmp_path: Path) -> None:
    """A mask already written is kept whole; text that only looks like one is not: a model that answers
    ``[redacted:<the password>]`` (a prompt injection's way to smuggle it out) has the password masked inside."""
    schema = {"type": "object", "properties": {"password": {"type": "string"}}}
    login = define_tool(name="login", description="Log in.", input_schema=schema, fn=lambda password: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": SECRET}},
                                         f"Logged in. [redacted:{SECRET}] [redacted:pw {SECRET}]"]),
                  tools=[login], redact=Redaction(keys=["password"]))
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    assert showing(SECRET, served(run, tmp_path, events)) == {}
    assert run.recording.answer == "Logged in. [redacted:[redacted:password]] [redacted:pw [redacted:password]]"


def test_a_short_value_an_escape_spells_longer_is_masked_only_beside_its_key() -> None:
    """``{"pin": "1\\/2"}`` spells a 3-character value in 4: it is masked beside its key, not hunted alone (a date
    ``01\\/25\\/2026`` elsewhere keeps its digits, ``Montr\\u00e9al`` its letter)."""
    scrubber = POLICY.for_run()
    text = '{"pin":"1\\/2","due":"01\\/25\\/2026","also":"1\\/2x"}'
    assert scrubber.scrub(text) == '{"pin":"[redacted:pin]","due":"01\\/25\\/2026","also":"1\\/2x"}'
    text = '{"pin":"\\u00e9","city":"Montr\\u00e9al"}'
    assert scrubber.scrub(text) == '{"pin":"[redacted:pin]","city":"Montr\\u00e9al"}'


async def test_a_lone_surrogate_in_a_covered_value_given_as_data_keeps_the_run_going() -> None:
    """A tool returns a string cut inside an emoji under a covered key: it is masked, and the model gets the result,
    not an error from the masking."""
    fetch = define_tool(name="fetch", description="Fetch.", fn=lambda: {"password": SECRET + "\ud83d", "balance": 42})
    agent = Agent(provider=mock(replies=[{"tool": "fetch", "args": {}}, "Done."]), tools=[fetch],
                  redact=Redaction(keys=["password"]))
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    ended = [event.payload for event in events if event.type == "tool_end"]
    assert run.answer == "Done." and [payload["is_error"] for payload in ended] == [False]
    assert '"balance": 42' in ended[0]["result"] and SECRET not in run.recording.model_dump_json()


def test_a_log_of_many_json_lines_that_starts_with_prose_is_read_whole() -> None:
    """A log whose first line is prose, then 40 JSON lines each with its own password: every one is masked (the
    objects inside a longer text were read 32 at most)."""
    passwords = [f"Oriole-{k:03d}-Quartz" for k in range(40)]
    text = "tail of app.log\n" + "\n".join(json.dumps({"n": k, "password": pw}) for k, pw in enumerate(passwords))
    masked = POLICY.for_run().scrub(text)
    assert [pw for pw in passwords if pw in masked] == [] and masked.count("[redacted:password]") == 40


async def test_a_covered_value_shaped_like_a_mask_is_learned_and_masked(tmp_path: Path) -> None:
    """A password that looks like a mask (``[redacted:...]``) is a value like any other: the call's arguments, the
    model's turn and the answer that repeats it show it nowhere."""
    password = f"[redacted:{SECRET}]"
    schema = {"type": "object", "properties": {"password": {"type": "string"}}}
    login = define_tool(name="login", description="Log in.", input_schema=schema, fn=lambda password: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": password}}, f"Used {password}."]),
                  tools=[login], redact=Redaction(keys=["password"]))
    events: list[Any] = []
    run = await agent.run("Go.", on_event=events.append)
    assert showing(SECRET, served(run, tmp_path, events)) == {}


@pytest.mark.parametrize("text", ['{"password": {"code": "\\u0034\\u0032", "note": "' + "n" * 300 + '"}}',
                                  '{"cvv": ["\\u0037\\u0033\\u0037", "' + "n" * 300 + '"]}'])
def test_a_short_escaped_value_inside_a_long_covered_value_is_masked_where_it_stands(text: str) -> None:
    """A short value an escape spells, inside a covered value too long to be hunted beside its key: masked as the
    JSON string it is (quotes and all), so the same digits inside a longer string elsewhere stay."""
    masked = POLICY.for_run().scrub(text + ' "x\\u0034\\u0032y"')
    assert "\\u0034\\u0032\"" not in masked and "\\u0037\\u0033\\u0037" not in masked
    assert masked.endswith(' "x\\u0034\\u0032y"')


def test_a_number_pair_standing_against_a_masked_value_is_masked_too() -> None:
    """``"pin": 42`` is not masked inside ``"pin": 421234abcd`` (the number goes on), but once the password
    ``1234abcd`` after it is masked, the pair stands on its own: one scrub masks both."""
    scrubber = POLICY.for_run()
    scrubber.scrub({"pin": 42, "password": "1234abcd"})
    masked = scrubber.scrub('log "pin": 421234abcd')
    assert masked == 'log "pin": "[redacted:pin]"[redacted:password]' and scrubber.scrub(masked) == masked

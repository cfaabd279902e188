"""The words footprint_lab shows a reader, each with its one-line meaning: the one source of the hover titles.

Rule kept here: a view that prints a hop label (``BORN``), a source kind (``fact``), a verdict
(``CONFIRMED``) or a term (``piece``) writes it with :func:`term`, which puts the word's meaning
here on it as a ``title`` (escaped, as every attribute), so a reader hovering any of them in any
view reads the same sentence. ``docs/glossary.md`` opens each word's entry with the same
sentence (``tests/lab/test_words.py`` holds the two together), so the glossary says more and never
something else.

One vocabulary for verdicts: a verdict is held as its key (``not_confirmed``, what a table's
``verdict`` column holds and code compares with) and printed as its word (``NOT CONFIRMED``,
:func:`verdict_word`), the key in capitals with spaces for underscores, in a report's text and in
every view alike. An integrity check's disposition is written as the report's summary counts it
(``not applicable``), after its symbol, in every view.

Role: markup layer (every view, card and explanation may import it); imports only the drawing door.
"""

from __future__ import annotations

from footprint_lab.markup import theme
from footprint_lab.markup.elements import Html, css, el

#: the hops of a chain of custody, in the order a chain shows them
HOPS: dict[str, str] = {
    "ANSWER": "The start of the walk: what the target produced (the run's answer, a reply, a decision).",
    "CARRIED": "In a composition: whose answer was passed on to whom, by which step, on the way to the target.",
    "READ": "Which LLM call was sent the piece, in which slot and at which position.",
    "LANDED": "Which step wrote the piece into that slot (its commit).",
    "ALLOWED": "What let the piece in on that iteration: its trigger and the reason the trigger gave.",
    "BORN": "Where the piece came from: a declaration, the agent's own prompt or tools, the user's message, "
            "the model's own earlier turn, a tool's result, or an upstream member's answer.",
    "ASKED": "For a tool's result only: which LLM call's response asked for that tool call.",
    "TRIGGER": "The rule that decides, on each iteration, whether a declaration is let in.",
    "BUDGET": "The slot's character budget a dropped piece did not fit in: its size, the budget, what was used.",
}

#: what kind of thing a piece came from (``tool``: a removable source, a tool's definition and its results)
KINDS: dict[str, str] = {
    "base": "The agent's own system prompt (source id system-prompt).",
    "user": "The user's message.",
    "assistant": "The model's own earlier turn.",
    "tool_result": "What a tool returned.",
    "registry": "A tool the agent offers the model: its definition (source id: the tool's name).",
    "tool": "A tool as a rerun removes it: its definition and every result it would have returned.",
    "fact": "A declared piece of knowledge the agent may be given (define_fact).",
    "steering": "A declared rule for the answer's form or tone (define_steering).",
    "instruction": "A declared instruction the agent may be given (define_instruction).",
    "skill": "A declared skill the model can load when it needs it (define_skill).",
    "memory": "Something remembered from earlier runs, under the run's identity (define_memory).",
    "rag": "A retrieved document (define_rag).",
}

#: what a test of a piece (or a difference, or a restored piece) concluded, under its key
VERDICTS: dict[str, str] = {
    "confirmed": "Removing it changes the outcome more often than noise, by the test.",
    "not_confirmed": "No sign of an effect.",
    "undecided": "A sign of an effect, but the budget, the looks or failed reruns left the test unable to decide.",
    "not_tested": "No verdict, neither shown to matter nor not to; the report says why it was not tested.",
}

#: what a declaration's trigger did on one iteration (a piece's own ``verdict`` field)
ADMISSIONS: dict[str, str] = {
    "admitted": "Let in by its trigger on that iteration.",
    "skipped": "Kept out by its trigger on that iteration.",
    "dropped": "Let in, but cut because the slot's character budget was full.",
}

#: how an integrity check ended
DISPOSITIONS: dict[str, str] = {
    "passed": "The check ran and found no contradiction.",
    "failed": "The check found a contradiction: its findings say what and where.",
    "not_applicable": "The run held nothing this check reads.",
    "could_not_run": "The check broke on this run; the note says how.",
}

#: the other words a view shows
TERMS: dict[str, str] = {
    "piece": "One item of context an LLM call was given: a part of the system prompt, one message, one tool "
             "definition.",
    "slot": "One of the three places a call's context goes: system, messages and tools.",
    "source kind": "What kind of thing a piece came from (base, user, assistant, tool_result, registry, or a "
                   "declaration's kind).",
    "source id": "The name of a piece's source: a declaration's id, system-prompt, a tool's name, user-message, "
                 "a step id.",
    "custody": "The road a piece took from where it was born to the answer, hop by hop.",
    "proven": "The recording holds what the hop claims.",
    "not proven": "The recording cannot back the hop; it is kept, marked, and says why.",
    "verdict": "What a test of one piece concluded: CONFIRMED, NOT CONFIRMED or UNDECIDED.",
    "suspect": "A piece ranked for how much it resembles the answer: a correlation that decides what to test "
               "first, never a cause.",
    "flip": "A rerun whose outcome differs from the original's, as the comparator judges it.",
    "noise": "How often the model changes its outcome with nothing removed.",
    "baseline": "Reruns with nothing removed, run beside the removals; their flips are the noise.",
    "screening": "The first, cheap phase of localize: each piece removed once, to choose the candidates; its "
                 "reruns choose, they never confirm.",
    "confirmation": "The phase of localize that tests each candidate against the noise, look by look.",
    "seal": "A SHA-256 hash chain over a recording, so verify can say offline whether anything was changed "
            "since.",
    "landed by": "The step that wrote the piece into its slot (its LANDED hop).",
    "read by": "The LLM call that was sent the piece (its READ hop).",
}

#: what kind of runner made a run (a tree's node, a view's header)
RUN_KINDS: dict[str, str] = {
    "agent": "A runner that calls a model, and the tools the model asks for, until it answers.",
    "llm_call": "One LLM call recorded as a run of its own: a replay, or a call imported from spans.",
    "sequence": "A composition whose members run one after another, each given the answer before it.",
    "parallel": "A composition whose members run side by side on the same message, their answers merged.",
    "conditional": "A composition that runs the one member its rule chooses.",
    "loop": "A composition that runs its member again until its rule says stop.",
    "workflow": "A composition of named steps run in order, each step's message mapped from the answers it needs.",
    "graph": "A composition of named steps run as soon as the answers each needs are there.",
}

#: the columns of an explanation's table, as its ``to_frame()`` names them and its view heads them
COLUMNS: dict[str, str] = {
    "rank": "The piece's place among the suspects: 1 resembles the answer most.",
    "score": "The suspect score: how much the piece resembles the answer (lexical overlap, weighted by distance).",
    "flips": "Reruns whose outcome differed from the original's, of those made: flips/samples.",
    "p_value": "The exact test's p-value for the flips against the noise, beside the level it had to reach.",
    "reruns": "How many reruns the test spent.",
    "failed reruns": "How many of those reruns failed; a failed rerun counts for nothing (a table's failed).",
    "reason": "Why the test concluded what it did, in words.",
    "admission": "What a piece's trigger did on its iteration: admitted, skipped, or dropped by the budget.",
    "why": "Why the piece was left out of the call: what its trigger or the budget said.",
    "call": "The LLM call the row is about.",
    "status": "What restoring a left-out piece concluded: a verdict, or NOT TESTED.",
    "restored_answer": "The answer a rerun with the piece restored gave.",
    "difference": "A difference between the good run and the bad one, carried into the bad run to test it.",
    "other": "Reruns that gave neither the good answer nor the bad one: a third answer.",
    "came_from": "Where a differing piece came from in its run.",
}

#: every word and its meaning
WORDS: dict[str, str] = {**HOPS, **KINDS, **VERDICTS, **ADMISSIONS, **DISPOSITIONS, **TERMS, **RUN_KINDS, **COLUMNS}


def verdict_word(verdict: str) -> str:
    """A verdict's key as every report and view prints it: ``not_confirmed`` is ``NOT CONFIRMED``."""
    return verdict.upper().replace("_", " ")


#: every verdict's printed word, by key (what ``str(report)`` and every view write)
VERDICT_WORDS: dict[str, str] = {key: verdict_word(key) for key in VERDICTS}


def meaning(word: str) -> str:
    """The one-line meaning of ``word`` as shown (``BORN``, ``tool_result``, ``NOT CONFIRMED``), ``""`` for none."""
    plain = word.strip()
    for key in (word, plain.lower().replace(" ", "_"), plain.lower(), plain.upper(), plain.replace("_", " ")):
        if key in WORDS:
            return WORDS[key]
    return ""


def term(word: str, tag: str = "b", *, shown: str | None = None, **attrs: str | None) -> Html:
    """``<tag title="its meaning">word</tag>``: a word of the vocabulary with its meaning on hover (escaped, as
    every value); ``shown`` is the text drawn when it is not the word itself, ``attrs`` more attributes."""
    return el(tag, word if shown is None else shown, title=meaning(word) or None, **attrs)


def verdict(key: str, tag: str = "span", **attrs: str | None) -> Html:
    """A verdict drawn as its word (:func:`verdict_word`) with its meaning on hover."""
    return term(key, tag, shown=verdict_word(key), **attrs)


def kind(source_kind: str) -> Html:
    """A piece's source kind, in its kind's colour (the word itself says the kind), with its meaning on hover."""
    return term(source_kind, "i", style=css(color=theme.kind_colour(source_kind)))


#: an integrity check's disposition as a reader gets it without colour: a symbol before its word
_DISPOSED = {"passed": "✓", "failed": "✗", "not_applicable": "–", "could_not_run": "⚠"}


def disposition(status: str) -> Html:
    """An integrity check's disposition as the report's summary words it (``not applicable``), after its symbol,
    with its meaning on hover."""
    return term(status, "span", shown=f"{_DISPOSED.get(status, '')} {status.replace('_', ' ')}".strip())


#: beside a hop or a row the recording cannot back: the words, in red, with their meaning on hover
NOT_PROVEN = Html(" " + term("not proven", "span", shown="[not proven]", class_="fl-unproven",
                             style=css(color=theme.RED)))

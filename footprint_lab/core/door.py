"""The run-input door: the one place every runner's ``run()`` input is judged.

Rule: normalize or refuse, at the boundary, before anything runs.

- A bare ``str`` is adapted: ``run("go")`` means ``run({"message": "go"})``. A run takes
  one required field, so a lone string has exactly one reading; the adaptation is stated
  here and in the docs so nobody has to guess it.
- A mapping whose ``message`` is a non-blank ``str`` passes, its other keys untouched.
- A ``parent_run`` key is refused with
  :class:`~footprint_lab.core.member_run.ParentRunRefusedError`, whatever its value: whom a
  run serves is named by ``identity=`` or by the composition that mounts it, never by data.
- Anything else is refused with :class:`InvalidRunInputError`: ``None``, a list, a number,
  a mapping without a string message. So are an empty and a whitespace-only message, which
  real provider wires reject as a turn with no content; the refusal says how to run on the
  system prompt alone instead.

The refusal names the runner and describes what arrived by its shape (``a dict with keys:
message and 1 other key``), never by its value: input refused for its shape is still the caller's
data, and so is a key the caller chose, so only this door's own field names
(:data:`RUN_INPUT_FIELDS`) are named and any other key is counted.
Nothing is billed, recorded or half-run when it fires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.base.unicode import all_sound, is_sound
from footprint_lab.core.member_run import PARENT_RUN_KEY, ParentRunRefusedError

#: the fields this door knows by name: the message, the keywords ``run()`` also takes in the mapping, and the key it
#: refuses by name; a refusal names only these keys of a mapping, and counts the others (a key can be data)
RUN_INPUT_FIELDS = ("message", "identity", "continue_from", PARENT_RUN_KEY)
ACCEPTED_FORMS = "pass a message: run('your message') or run({'message': 'your message'})"
#: what ``run()`` takes, as a type checker reads it: the message, or a mapping holding ``message`` (and, at
#: most, ``identity``); anything else is refused at this door, before anything runs
RunInput = str | Mapping[str, Any] | None


class InvalidRunInputError(Refusal, ValueError):
    """Raised by a runner's ``run()`` when its input is not a message.

    ``runner`` names the door (``"Agent.run"``); ``received`` describes what arrived by
    shape only.
    """

    code = "ERR_INVALID_RUN_INPUT"
    fields = ("runner", "received")

    def __init__(self, runner: str, received: str, hint: str) -> None:
        super().__init__(f"{runner}: {hint} (received {received}).")
        self.runner = runner
        self.received = received


def normalize_run_input(input: Any, runner: str, **keywords: Any) -> dict[str, Any]:
    """Return the input as ``{"message": str, ...}``, or refuse it.

    ``keywords`` given to ``run()`` (``identity=...``) join the bag; a keyword the mapping
    already carries with another value is refused rather than silently picked.
    """
    if isinstance(input, str):
        bag: dict[str, Any] = {"message": input}
    elif isinstance(input, Mapping):
        bag = dict(input)
    else:
        raise InvalidRunInputError(runner, describe_shape(input), ACCEPTED_FORMS)
    message = bag.get("message")
    if not isinstance(message, str):
        whose = "missing" if "message" not in bag else describe_shape(message)
        raise InvalidRunInputError(
            runner,
            f"{describe_shape(input, RUN_INPUT_FIELDS)}, whose 'message' is {whose}",
            f"'message' must be a string; {ACCEPTED_FORMS}",
        )
    if not message.strip():
        raise InvalidRunInputError(
            runner,
            "an empty message" if message == "" else "a whitespace-only message",
            "a run needs something to answer. An empty message is not a shorter question: it "
            "would reach the provider as a turn with no content, which real wires reject. To run "
            "on the system prompt alone, say so in the message, e.g. run('Begin.') or "
            "run({'message': 'Begin.'})",
        )
    if not all_sound(bag):
        raise InvalidRunInputError(
            runner,
            f"{'a message' if not is_sound(message) else 'an input'} holding a lone surrogate "
            "(a code point that is no character)",
            "the message, and any other text in the input, must be text that can be saved as UTF-8, or the "
            "run's evidence could not be saved either. Such text usually comes from bytes decoded with "
            "errors='surrogateescape'; decode with the real encoding, or with errors='replace'",
        )
    if PARENT_RUN_KEY in bag:
        raise ParentRunRefusedError(runner, "input")
    for key, value in keywords.items():
        if value is None:
            continue
        if key in bag and bag[key] is not value and bag[key] != value:
            raise InvalidRunInputError(
                runner,
                f"'{key}' both in the input and as a keyword",
                f"give '{key}' once: either run({{'message': ..., '{key}': ...}}) or "
                f"run('...', {key}=...)",
            )
        bag[key] = value
    return bag

"""``%fp_ask [-p PROVIDER] [RUN] question``: the words of the ask magic, resolved or refused by name.

IPython reads a line ending in ``word?`` as a request for help on ``word``, so a question
that ends with its question mark goes in the cell form, whose body is the question as typed::

    %%fp_ask -p explainer run
    Why was the refund approved?

(or, on one line, end it with `` ?`` or without the mark). Rule kept here: the magic
(``FootprintMagics.fp_ask``) is a thin door onto :func:`footprint_lab.explain.ask`; this
module only resolves its words, and refuses before anything runs when one names nothing usable:

- ``-p PROVIDER`` (or ``--provider``): a variable of the notebook holding a provider, or a
  provider string such as ``openai:gpt-4o-mini``; without it, the variable ``fp_explainer``;
- ``RUN``: a variable holding a run, a recording, or a list of them; without it, the
  kernel's last run;
- the rest of the line (and the cell's body) is the question, as typed.

Role: lab layer. Refusals raised here: :class:`~footprint_lab.lab.refusals.MagicInputError`,
and :class:`~footprint_lab.lab.refusals.UnknownRunError` (through the last-run lookup).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from footprint_lab.core.run import Run
from footprint_lab.core.runner import run_coroutine_sync
from footprint_lab.explain import ask
from footprint_lab.lab.refusals import MagicInputError
from footprint_lab.providers import provider_from_string

DEFAULT_PROVIDER = "fp_explainer"


def _is_runs(value: Any) -> bool:
    from footprint_lab.record.recording import Recording  # pydantic: %fp_ask loads light until it is used

    if isinstance(value, list | tuple):
        return bool(value) and all(_is_runs(item) for item in value)
    return isinstance(value, Run | Recording)


def _provider(namespace: dict[str, Any], word: str | None) -> Any:
    name = word or DEFAULT_PROVIDER
    found = namespace.get(name)
    if callable(getattr(found, "complete", None)):
        return found
    if word is not None and ":" in word:
        return provider_from_string(word)
    received = "nothing, and no variable fp_explainer" if word is None else (
        "a variable that holds no provider" if word in namespace else "a name no variable has")
    raise MagicInputError(
        "fp_ask", "-p", received,
        "must name the explainer's provider: a variable holding one, or a provider string such as "
        f"openai:gpt-4o-mini; or set {DEFAULT_PROVIDER} = footprint_lab.providers.openai(...) once in the notebook",
    )


def parse(line: str, namespace: dict[str, Any], cell: str | None,
          last_run: Callable[[], Any]) -> tuple[Any, Any, str]:
    """The provider, the run(s) and the question a ``%fp_ask`` line (and ``%%fp_ask`` cell) names."""
    rest = line.strip()
    word: str | None = None
    head, _, tail = rest.partition(" ")
    if head in ("-p", "--provider"):
        word, _, rest = tail.strip().partition(" ")
        rest = rest.strip()
        if not word:
            raise MagicInputError("fp_ask", "-p", "nothing after it",
                                  "must be followed by a variable name or a provider string such as "
                                  "openai:gpt-4o-mini")
    provider = _provider(namespace, word)
    head, _, tail = rest.partition(" ")
    if head.isidentifier() and _is_runs(namespace.get(head)):
        runs, rest = namespace[head], tail.strip()
    else:
        runs = last_run()
    if cell is not None:
        rest = " ".join(part for part in (rest, cell.strip()) if part)
    if not rest:
        raise MagicInputError("fp_ask", "question", "nothing",
                              "must follow the magic (or fill the cell of %%fp_ask), e.g. "
                              "%fp_ask run Why was the refund approved")
    return provider, runs, rest


def ask_from_magic(line: str, cell: str | None, namespace: dict[str, Any], last_run: Callable[[], Any]) -> Any:
    """Resolve the magic's words and ask; the cell's value is the ``Explanation``, which displays itself."""
    provider, runs, question = parse(line, namespace, cell, last_run)
    return run_coroutine_sync(ask(runs, question, provider=provider))

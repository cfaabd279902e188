"""``%fp_ask [-p PROVIDER] [RUN] question``: ask a run why from a notebook cell.

IPython reads a line ending in ``word?`` as a request for help on ``word``, so a question
that ends with its question mark goes in the cell form, whose body is the question as typed::

    %%fp_ask -p explainer run
    Why was the refund approved?

(or, on one line, end it with `` ?`` or without the mark).

Rule kept here: the magic is a thin door onto :func:`footprint_lab.explain.ask`; it only
resolves its words, and refuses by name before anything runs when one cannot be resolved:

- ``-p PROVIDER`` (or ``--provider``): a variable of the notebook holding a provider, or a
  provider string such as ``openai:gpt-4o-mini``; without it, the variable ``fp_explainer``;
- ``RUN``: a variable holding a run, a recording, or a list of them; without it, the newest
  run the notebook holds;
- the rest of the line is the question, as typed (apostrophes included).

The cell's output is the :class:`~footprint_lab.explain.Explanation`, which displays itself.

Role: lab layer. Refusal raised here: :class:`MagicUsageError`.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.core.run import Run
from footprint_lab.core.runner import run_coroutine_sync
from footprint_lab.engine.refusal import Refusal

DEFAULT_PROVIDER = "fp_explainer"


class MagicUsageError(Refusal):
    """Raised by a footprint_lab magic whose words name nothing it can use.

    Carries ``magic`` (its name) and ``problem`` (which word: ``provider``, ``run`` or ``question``).
    """

    code = "ERR_MAGIC_USAGE"
    fields = ("magic", "problem")

    def __init__(self, magic: str, problem: str, fix: str) -> None:
        super().__init__(f"%{magic}: {fix}")
        self.magic = magic
        self.problem = problem


def _is_runs(value: Any) -> bool:
    from footprint_lab.engine.recording import Recording

    if isinstance(value, list | tuple):
        return bool(value) and all(_is_runs(item) for item in value)
    return isinstance(value, Run | Recording)


def _provider(namespace: dict[str, Any], word: str | None) -> Any:
    from footprint_lab.providers import provider_from_string

    name = word or DEFAULT_PROVIDER
    found = namespace.get(name)
    if callable(getattr(found, "complete", None)):
        return found
    if word is not None and ":" in word:
        return provider_from_string(word)
    raise MagicUsageError(
        "fp_ask", "provider",
        "name the explainer's provider: -p NAME for a variable holding one, -p openai:gpt-4o-mini for a provider "
        f"string, or set {DEFAULT_PROVIDER} = footprint_lab.providers.openai(...) once in the notebook.",
    )


def _newest_run(namespace: dict[str, Any]) -> Run:
    runs = [value for name, value in namespace.items() if not name.startswith("_") and isinstance(value, Run)]
    if not runs:
        raise MagicUsageError("fp_ask", "run", "this notebook holds no run yet: run an agent first "
                                                "(run = await agent.run(...)), or name one: %fp_ask RUN question.")
    return max(runs, key=lambda run: run.recording.started_at)


def parse(line: str, namespace: dict[str, Any], cell: str | None = None) -> tuple[Any, Any, str]:
    """The provider, the run(s) and the question a ``%fp_ask`` line (and ``%%fp_ask`` cell) names."""
    rest = line.strip()
    word: str | None = None
    head, _, tail = rest.partition(" ")
    if head in ("-p", "--provider"):
        word, _, rest = tail.strip().partition(" ")
        rest = rest.strip()
        if not word:
            raise MagicUsageError("fp_ask", "provider", "-p needs a provider after it: a variable name or a "
                                                        "provider string such as openai:gpt-4o-mini.")
    provider = _provider(namespace, word)
    head, _, tail = rest.partition(" ")
    if head.isidentifier() and _is_runs(namespace.get(head)):
        runs, rest = namespace[head], tail.strip()
    else:
        runs = _newest_run(namespace)
    if cell is not None:
        rest = " ".join(part for part in (rest, cell.strip()) if part)
    if not rest:
        raise MagicUsageError("fp_ask", "question", "write the question after the magic, e.g. "
                                                    "%fp_ask run Why was the refund approved?")
    return provider, runs, rest


def fp_ask(line: str, cell: str | None = None) -> Any:
    """The ``%fp_ask`` line magic and ``%%fp_ask`` cell magic (see the module docstring)."""
    from IPython import get_ipython

    from footprint_lab.explain import ask

    shell = get_ipython()
    namespace: dict[str, Any] = shell.user_ns if shell is not None else {}
    provider, runs, question = parse(line, namespace, cell)
    return run_coroutine_sync(ask(runs, question, provider=provider))

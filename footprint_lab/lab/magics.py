"""The notebook magics: ``%fp_why``, ``%fp_context``, ``%fp_tree``, ``%fp_suspects``, ``%%fp_run``, ``%fp_ask``.

Rule kept here: a magic only reads. RUN is a variable holding a ``Run``, a run id, or a chat's
turn written ``chat[k]`` (every magic that takes RUN takes it); left out,
it is the last run this kernel produced, which the extension notices after each cell (the
cell's value, or a variable the cell bound) and keeps by weak reference, so a run the analyst
dropped is not kept alive. A RUN that names nothing is refused with the names that would work.
Nothing is displayed unless a magic is called, and no object of the analyst's is changed.

Each magic returns what it shows (``bt = %fp_why`` keeps the backtrack), and documents
itself for ``%fp_why?``.

Role: lab layer; installed and removed by :mod:`footprint_lab.lab.extension`.
"""

from __future__ import annotations

import json
import re
import weakref
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.run import Run
from footprint_lab.lab.refusals import MagicInputError, UnknownRunError
from footprint_lab.markup.elements import el

#: a chat's turn as a magic names it: ``chat[2]``, ``chat[-1]``
_TURN = re.compile(r"([A-Za-z_]\w*)\[(-?\d+)\]")
#: one example of each magic that reads its arguments with a parser, shown when its arguments do not fit
EXAMPLES = {
    "fp_why": "%fp_why run --at call-llm#3",
    "fp_context": "%fp_context run --call -1 --left-out",
    "fp_tree": "%fp_tree run --steps",
    "fp_suspects": "%fp_suspects run",
    "fp_run": "%%fp_run agent --identity '{\"principal\": \"u-1\"}'",
}


class LastRun:
    """The last ``Run`` the kernel produced, by weak reference, noticed after each cell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._run: weakref.ref[Run] | None = None
        self._bound: dict[str, int] = {}

    def remember(self, run: Run) -> None:
        self._run = weakref.ref(run)

    def get(self) -> Run | None:
        return self._run() if self._run is not None else None

    def after_cell(self, result: Any = None) -> None:
        """Post-cell hook: the cell's own value when it is a run, else the last variable newly bound to one."""
        bound = {name: value for name, value in self.shell.user_ns.items()
                 if isinstance(value, Run) and not name.startswith("_")}
        fresh = [value for name, value in bound.items() if self._bound.get(name) != id(value)]
        self._bound = {name: id(value) for name, value in bound.items()}
        value = getattr(result, "result", None)
        if isinstance(value, Run):
            self.remember(value)
        elif fresh:
            self.remember(fresh[-1])

    def names(self) -> list[str]:
        return sorted(name for name, value in self.shell.user_ns.items()
                      if isinstance(value, Run) and not name.startswith("_"))


@magics_class
class FootprintMagics(Magics):
    """The footprint_lab magics; ``last`` tracks the kernel's last run."""

    def __init__(self, shell: Any, last: LastRun) -> None:
        super().__init__(shell)
        self.last = last

    @property
    def namespace(self) -> dict[str, Any]:
        """The notebook's variables."""
        assert self.shell is not None
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    def _run(self, magic: str, name: str | None) -> Run:
        turn = _TURN.fullmatch(name) if name is not None else None
        if turn is not None:
            return self._turn(magic, turn.group(1), int(turn.group(2)))
        if name is None:
            run = self.last.get()
            if run is None:
                raise UnknownRunError(magic, "nothing, and no run has been made yet", self.last.names())
            return run
        held = self.namespace.get(name)
        if isinstance(held, Run):
            return held
        candidates = [v for v in self.namespace.values() if isinstance(v, Run)]
        latest = self.last.get()
        if latest is not None:
            candidates.append(latest)
        for run in candidates:
            if run.run_id == name:
                return run
        what = "a variable that holds no run" if name in self.namespace else "a name no variable or run id has"
        raise UnknownRunError(magic, what, self.last.names())

    def _arguments(self, magic: str, line: str) -> Any:
        """The magic's arguments, or a refusal saying its usage and an example (never what arrived)."""
        function = getattr(self, magic)
        try:
            return parse_argstring(function, line)
        except UsageError:
            cell = "%" if magic == "fp_run" else ""  # a cell magic is written %%
            form = cell + " ".join(function.parser.format_usage().replace("::", "").split())
            raise MagicInputError(magic, "arguments", "arguments that do not fit this form",
                                  f"take the form {form}, e.g. {EXAMPLES[magic]}; {cell}%{magic}? explains each"
                                  ) from None

    def _turn(self, magic: str, name: str, k: int) -> Run:
        """Turn ``k`` of the chat a variable holds (``chat[2]``); a turn it does not have is refused by the chat."""
        from footprint_lab.core.chat import Chat  # the explain layer comes with it: loaded when a turn is named

        held = self.namespace.get(name)
        if not isinstance(held, Chat):
            chats = sorted(n for n, v in self.namespace.items() if isinstance(v, Chat) and not n.startswith("_"))
            raise MagicInputError(magic, "RUN", describe_shape(held) if name in self.namespace
                                  else "a name no variable has",
                                  f"names a turn as CHAT[k], where CHAT is a variable holding a Chat "
                                  f"({', '.join(chats) or 'none is defined yet'})")
        return held[k]

    @line_magic
    @magic_arguments()
    @argument("run", nargs="?", help="a variable holding a Run, a run id, or a chat's turn as chat[k]; "
                                     "the kernel's last run when left out")
    @argument("--at", default=None, help="walk back from this step id (e.g. call-llm#3) instead of the answer")
    def fp_why(self, line: str) -> Any:
        """Why did the run answer that: every piece of context that reached the answer, with its custody."""
        args = self._arguments("fp_why", line)
        return self._run("fp_why", args.run).backtrack(at=args.at)

    @line_magic
    @magic_arguments()
    @argument("run", nargs="?", help="a variable holding a Run, or a run id; the kernel's last run when left out")
    @argument("--call", default=None,
              help="the LLM call: its index (0 first, -1 last) or its step id; the answering call when left out")
    @argument("--left-out", action="store_true", help="also list what the call's iteration skipped or dropped")
    def fp_context(self, line: str) -> Any:
        """What one LLM call was given, slot by slot, each piece opening to its custody."""
        from IPython.display import HTML

        from footprint_lab.lab.views import slots_view

        args = self._arguments("fp_context", line)
        run = self._run("fp_context", args.run)
        call: int | str | None = args.call
        if isinstance(call, str) and call.lstrip("-").isdigit():
            call = int(call)
        exchange = run.exchange(call)
        if exchange is None:
            return HTML(el("p", "This run made no LLM call."))
        return HTML(slots_view(run.recording, exchange, left_out=args.left_out))

    @line_magic
    @magic_arguments()
    @argument("run", nargs="?", help="a variable holding a Run, or a run id; the kernel's last run when left out")
    @argument("--steps", action="store_true", help="draw every LLM call and tool step as a node too")
    def fp_tree(self, line: str) -> Any:
        """The run and its members as a tree figure (members open in the list below it)."""
        args = self._arguments("fp_tree", line)
        return self._run("fp_tree", args.run).tree(steps=args.steps)

    @line_magic
    @magic_arguments()
    @argument("run", nargs="?", help="a variable holding a Run, or a run id; the kernel's last run when left out")
    def fp_suspects(self, line: str) -> Any:
        """The pieces that reached the answer, ranked by resemblance to it (correlational: localize() confirms)."""
        args = self._arguments("fp_suspects", line)
        ranked = self._run("fp_suspects", args.run).suspects()
        print(ranked.attrs["confidence"].reason)
        # the columns an analyst reads first; run.suspects() has them all
        shown = ranked[["rank", "source_kind", "source_id", "score", "evidence", "removal_id", "content"]]
        return shown.set_index("rank")

    @cell_magic
    @magic_arguments()
    @argument("runner", help="a variable holding an Agent, an LLMCall or a composition")
    @argument("--identity", default=None, help='the caller\'s identity as JSON, e.g. {"principal": "u-1"}')
    def fp_run(self, line: str, cell: str) -> Any:
        """Run RUNNER on the cell's text as the message; shows the run and binds it to ``_fp``."""
        from footprint_lab.core.runner import Runner  # asyncio and the door: loaded when a cell runs, not by %load_ext

        args = self._arguments("fp_run", line)
        runner = self.namespace.get(args.runner)
        if not isinstance(runner, Runner):
            names = sorted(n for n, v in self.namespace.items() if isinstance(v, Runner) and not n.startswith("_"))
            raise MagicInputError("fp_run", "RUNNER", describe_shape(runner) if args.runner in self.namespace
                                  else "a name no variable has",
                                  f"must be a variable holding an Agent, an LLMCall or a composition "
                                  f"({', '.join(names) or 'none is defined yet'})")
        identity = None
        if args.identity is not None:
            try:
                identity = json.loads(args.identity)
            except ValueError:
                raise MagicInputError("fp_run", "--identity", "text that is not JSON",
                                      'must be a JSON object, e.g. --identity \'{"principal": "u-1"}\'') from None
        run = runner.run_sync(cell.strip("\n"), identity=identity)
        self.namespace["_fp"] = run
        self.last.remember(run)
        return run

    @line_cell_magic
    def fp_ask(self, line: str, cell: str | None = None) -> Any:
        """Ask a run why, in plain words: ``%fp_ask [-p PROVIDER] [RUN] question``.

        An explainer agent on PROVIDER (a variable holding a provider, a string such as
        openai:gpt-4o-mini, or the variable fp_explainer) opens RUN (a variable; the last run when
        left out) through read-only views and cites its ids. A question ending in ``word?`` goes in
        the cell form: ``%%fp_ask -p explainer run``, the question on the lines below.
        """
        from footprint_lab.lab.ask_magic import ask_from_magic

        return ask_from_magic(line, cell, self.namespace, lambda: self._run("fp_ask", None))

"""The refusals of the notebook magics (``%fp_why``, ``%fp_context``, ``%fp_tree``, ``%fp_suspects``, ``%%fp_run``).

Rule kept here: a magic reads names from the notebook's namespace; one that names nothing
usable is refused before anything runs, with the names that *would* work (variable names are
code the analyst wrote, not data, so listing them is safe) and never the text that arrived.

Role: lab layer; kept apart from :mod:`footprint_lab.lab.magics` so ``footprint_lab.errors``
can gather these without importing IPython.
"""

from __future__ import annotations

from footprint_lab.base.refusal import Refusal, SettingRefusal


class UnknownRunError(Refusal, ValueError):
    """Raised by a magic whose RUN names no ``Run``: neither a variable holding one nor a known run id.

    Carries ``magic``, ``received`` (what kind of thing arrived) and ``names`` (the variables
    that hold a run, the ones to pass instead).
    """

    code = "ERR_UNKNOWN_RUN"
    fields = ("magic", "received", "names")

    def __init__(self, magic: str, received: str, names: list[str]) -> None:
        shown = ", ".join(names) if names else "none yet: run an agent first (await agent.run(...))"
        super().__init__(
            f"%{magic}: RUN must be a variable that holds a Run or the id of one (run.run_id); leave it out to "
            f"use the last run of this kernel. Variables holding a run: {shown} (received {received})."
        )
        self.magic = magic
        self.received = received
        self.names = names


class MagicInputError(SettingRefusal):
    """Raised by a magic given an argument it cannot use: a RUNNER that is not a runner, identity that is not JSON.

    Carries ``setting`` (the argument at fault) and ``received`` (its shape).
    """

    code = "ERR_MAGIC_INPUT"

    def __init__(self, magic: str, argument: str, received: str, fix: str) -> None:
        super().__init__(f"%{magic}", argument, received, fix)

"""The refusals that guard a runner's per-instance state.

An ``Agent`` keeps its last run (answer, conversation, pause) on the instance, which is
what makes ``checkpoint()`` and ``follow_up()`` possible. That state has exactly one owner
at a time, so two overlapping turns on one instance are refused rather than left to
overwrite each other while both return plausible answers.
"""

from __future__ import annotations

from footprint_lab.engine.refusal import Refusal


class RunInFlightError(Refusal):
    """Raised by ``run()`` / ``resume()`` on a runner whose previous turn has not returned.

    Carries ``agent_id`` (the runner's configured id, or ``None``) and ``active_run_id``
    (the run in flight, to join a log line to its recording).
    """

    code = "ERR_RUN_IN_FLIGHT"
    fields = ("agent_id", "active_run_id")

    def __init__(self, door: str, agent_id: str | None, active_run_id: str) -> None:
        super().__init__(
            f"{door}: this agent is already running (run '{active_run_id}'). One instance answers "
            "one turn at a time: its last answer, conversation and pause live on the instance, so two "
            "overlapping turns would each overwrite the other's and checkpoint() would hand back "
            "whichever finished last. Await the turn in flight first, build a second Agent for a "
            "concurrent turn (instances are cheap), or put turns in an asyncio.Queue and serve them "
            "one after another."
        )
        self.agent_id = agent_id
        self.active_run_id = active_run_id

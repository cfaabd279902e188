"""What a verdict on one arm says, read through the object that carries it.

Rule kept here: a suspect (``LocalizedSuspect``) and a set of culprits (``CulpritSet``) each hold
their trial (an :class:`~footprint_lab.explain.trials.arms.ArmVerdict`) and answer for it with the same
names, so the counts a reader sees are the trial's own, never a copy that could drift.

Role: explain layer; a base with no state of its own (``__slots__ = ()``) that both dataclasses take.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from footprint_lab.explain.trials.arms import ArmVerdict
    from footprint_lab.explain.trials.rerun import Outcome


def _read(name: str) -> Any:
    return property(lambda self: getattr(self.trial, name), doc=f"The trial's ``{name}``.")


class ArmFields:
    """The trial's verdict and counts as attributes: ``verdict``, ``flips`` of ``samples``, the noise, the p-value."""

    __slots__ = ()
    trial: ArmVerdict

    verdict = _read("verdict")
    reason = _read("reason")
    flips = _read("flips")
    samples = _read("samples")
    flip_rate = _read("flip_rate")
    noise_flips = _read("noise_flips")
    noise_samples = _read("noise_samples")
    noise_rate = _read("noise_rate")
    p_value = _read("p_value")
    level = _read("level")
    reruns = _read("reruns")
    failed = _read("failed")
    failures = _read("failures")

    @property
    def outcomes(self) -> list[Outcome]:
        """The reruns its flips are counted over."""
        return self.trial.counted

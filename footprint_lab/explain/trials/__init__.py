"""Trials: reruns and replays, and the statistics that turn them into verdicts (screening,
confirmation, culprit sets, dropped context, the difference between two runs).
"""

__all__: list[str] = []

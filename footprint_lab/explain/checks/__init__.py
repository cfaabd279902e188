"""Checks: deterministic findings on a recording, no rerun (integrity, unsupported values, the
tool-catalog lint and how close each tool choice was).
"""

__all__: list[str] = []

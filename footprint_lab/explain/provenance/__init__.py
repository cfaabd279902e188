"""Provenance: where each piece of context came from and how it reached an output (custody,
hops, the backward slice, the run tree, influence rankings, the index over a recording).
"""

__all__: list[str] = []

"""The seal: one algorithm over a finished recording, its display digests, and the seal checked
on saved data (a notebook output).

Role: level 0, beside ``record`` (it imports ``record``; nothing in ``record`` imports it but
the owed seal of a lazily built recording).
"""

__all__: list[str] = []

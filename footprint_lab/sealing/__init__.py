"""The seal: one hash chain over a finished recording, the digests of what a notebook output
displays, and the seal's check on saved data.

Role: level 1, above ``record``. It reads the records; nothing in ``record`` imports it (a lazily
built recording is handed the function that seals it).
"""

__all__: list[str] = []

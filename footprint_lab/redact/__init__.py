"""Redaction: the policy, its named patterns, the scrubber that masks a value as it enters a record,
the base64 read-through and the token gate for streamed text.

Role: level 0, beside ``record`` (it may import ``record``; ``record`` reaches it only through
the ``Scrubber`` a runner hands the recorder).
"""

__all__: list[str] = []

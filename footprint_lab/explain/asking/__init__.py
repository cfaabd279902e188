"""Asking: a question in plain words, answered by an explainer agent through read-only views.
"""

__all__: list[str] = []

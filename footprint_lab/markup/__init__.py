"""How a value is drawn: the one escaping element builder, the theme and the words a reader sees.

Role: level 0, above ``record`` (explanations render themselves, so this sits below ``explain``;
the views in ``lab/views`` compose it).
"""

__all__: list[str] = []

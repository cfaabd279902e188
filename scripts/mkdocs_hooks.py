"""MkDocs hook for the documentation site (mkdocs.yml, ``hooks:``).

The package's docstrings cite other objects with reStructuredText roles (:class:`~footprint_lab.Run`),
which Markdown renders as a role name beside a code span. This hook draws each such reference as the
code span alone, with the name a reader types: the last part after ``~``, the whole path otherwise.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([\w.]+)</code>")


def _shown(match: re.Match[str]) -> str:
    short, path = match.groups()
    return f"<code>{path.rsplit('.', 1)[-1] if short else path}</code>"


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(_shown, html)

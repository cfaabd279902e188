"""Where things are, for tests in any folder of the suite: the repository and the suite's own folder."""

from __future__ import annotations

from pathlib import Path

#: the suite's folder (its kits, saved recordings and goldens live here)
TESTS = Path(__file__).resolve().parent
#: the repository's root
ROOT = TESTS.parent

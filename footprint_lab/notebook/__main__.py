"""``python -m footprint_lab.notebook``: the ``footprint-lab`` console script without installing it."""

import sys

from footprint_lab.notebook.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""Execute notebooks on the embedded mock provider and write the executed copy and its HTML.

    python scripts/run_notebook.py notebooks/quickstart.ipynb [more.ipynb ...] [--out out]

Each notebook runs top to bottom in a fresh kernel with its folder as the working directory;
a cell that raises fails the command. Prints where the executed notebook and HTML went.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter


def execute(path: Path, out_dir: Path, timeout: int = 600) -> tuple[Path, Path]:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / path.name
    nbformat.write(notebook, executed)
    html_path = out_dir / (path.stem + ".html")
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    html_path.write_text(body, encoding="utf-8")
    return executed, html_path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("out"))
    args = parser.parse_args(argv)
    for path in args.notebooks:
        executed, html_path = execute(path, args.out)
        print(f"executed {path} -> {executed.resolve()}")
        print(f"html     {path} -> {html_path.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

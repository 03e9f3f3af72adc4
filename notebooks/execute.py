"""Executes the notebooks headless, top to bottom, failing on the first cell error.

    python notebooks/execute.py [NOTEBOOK.ipynb ...] [--output-dir DIR]

Without names it runs every `notebooks/*.ipynb`. Each runs in `notebooks/` (as in Jupyter),
so `import jl` works. The committed files must carry no outputs (the results come from the
code, never from a stored run): a notebook with outputs or execution counts is refused before
anything runs. With `--output-dir`, the executed copies (figures included) are written there.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
# Per cell; a whole notebook is meant to finish in under 2 minutes on a 2-core machine.
CELL_TIMEOUT_S = 600


def stored_outputs(nb) -> list[int]:
    """Indices of code cells that carry outputs or an execution count."""
    return [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--output-dir", type=Path)
    args = parser.parse_args()
    paths = args.notebooks or sorted(HERE.glob("*.ipynb"))
    if not paths:
        print("error: no notebooks found", file=sys.stderr)
        return 1

    books = [(p, nbformat.read(p, as_version=4)) for p in paths]
    dirty = [(p, stored_outputs(nb)) for p, nb in books if stored_outputs(nb)]
    for p, cells in dirty:
        print(f"error: {p.name} is committed with outputs (code cells {cells}); clear them "
              "(Jupyter: Edit > Clear Outputs of All Cells) and save", file=sys.stderr)
    if dirty:
        return 1

    failed = 0
    total = time.perf_counter()
    for path, nb in books:
        started = time.perf_counter()
        client = NotebookClient(
            nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
            resources={"metadata": {"path": str(HERE)}},
        )
        try:
            client.execute()
            status = "ok"
        except CellExecutionError as e:
            failed += 1
            status = "FAILED"
            print(str(e), file=sys.stderr)
        print(f"{status:6} {path.name} in {time.perf_counter() - started:.1f} s", flush=True)
        if args.output_dir:
            args.output_dir.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, args.output_dir / path.name)
    print(f"notebooks: {len(books) - failed} ran clean, {failed} failed "
          f"({time.perf_counter() - total:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

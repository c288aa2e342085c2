"""A long-sample benchmark corpus: source code with docstrings, about 1-2k tokens per sample.

    python benchmarks/long_source.py --out /tmp/mintdim-bench/long_source.jsonl
    python benchmarks/throughput.py --input /tmp/mintdim-bench/long_source.jsonl \\
        --fields docstring,code --template '{docstring}\\n\\n{code}' --samples 40000 ...

The material is Python's own standard library, as installed with the interpreter that runs this
script (``sysconfig`` "stdlib" path; PSF License, which permits copying and derived works): every
top-level function and class, and every method, that has a docstring and whose source is
``--min-chars`` to ``--max-chars`` long (default 2,600-5,000 characters, about 1-2k tokens with
the corpora's BPE tokenizers). Test packages, ``site-packages`` and files that do not parse are
skipped. Each row is ``{"id": "<module>:<line>", "docstring": ..., "code": ...}`` in file and line
order, so the same interpreter always gives the same file (its SHA-256 is printed); scale it up
with ``generate.py`` (``throughput.py --samples N`` does that), which recombines the two fields
across rows. Nothing generated here is committed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

SKIP_PARTS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"}


def stdlib_files(root: Path) -> list[Path]:
    """Every ``.py`` file of the standard library, sorted, without tests and installed packages."""
    return sorted(
        path
        for path in root.rglob("*.py")
        if not SKIP_PARTS & set(path.relative_to(root).parts[:-1])
    )


def definitions(path: Path, root: Path, low: int, high: int) -> Iterator[dict]:
    """The rows of one module: documented definitions whose source length is in [low, high]."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    module = ".".join(path.relative_to(root).with_suffix("").parts)
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        docstring = ast.get_docstring(node)
        code = ast.get_source_segment(source, node)
        if docstring and code and low <= len(code) <= high:
            yield {"id": f"{module}:{node.lineno}", "docstring": docstring, "code": code}


def main(argv: list[str] | None = None) -> None:
    """Write the corpus and print its row count and SHA-256."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--min-chars", type=int, default=2600)
    p.add_argument("--max-chars", type=int, default=5000)
    args = p.parse_args(argv)
    root = Path(sysconfig.get_paths()["stdlib"])
    rows = [
        row
        for path in stdlib_files(root)
        for row in definitions(path, root, args.min_chars, args.max_chars)
    ]
    rows.sort(key=lambda row: (row["id"].rsplit(":", 1)[0], int(row["id"].rsplit(":", 1)[1])))
    data = write_rows(rows, args.out)
    print(
        f"{len(rows)} rows, {len(data) / 1e6:.1f} MB from {root} (Python {sys.version.split()[0]}, "
        f"PSF License); sha256 {hashlib.sha256(data).hexdigest()}"
    )


def write_rows(rows: list[dict], out: Path) -> bytes:
    """Write ``rows`` to ``out`` as JSONL (UTF-8, one object a line); the bytes written."""
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return data


if __name__ == "__main__":
    main()

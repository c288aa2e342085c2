"""A mixed benchmark corpus: many languages and scripts, chat, maths, adversarial strings and code.

    python benchmarks/mixed_corpus.py --datasets ../shared/corpora/datasets \\
        --out /tmp/mintdim-bench/mixed_base.jsonl
    python benchmarks/throughput.py --input /tmp/mintdim-bench/mixed_base.jsonl --fields text \\
        --template '{text}' --samples 68000 ...          # about 40 MB; 680000: about 400 MB

Run by hand, never in CI; nothing generated here is committed. Each row is ``{"id", "text"}``:

* one row per line of every ``*.jsonl`` file of ``--datasets`` (the project's third-party
  corpora: English instructions and chat, maths, Vietnamese and Thai QA and news, emoji, the
  Big List of Naughty Strings), in file name and line order: its text is every string the line
  holds (nested lists and objects included, in their order) joined by a blank line;
* one row per documented function, class or method of Python's own standard library whose
  source is ``--min-chars`` to ``--max-chars`` long (``long_source.py``, PSF License): its
  docstring, a blank line, its source.

The same datasets and interpreter always give the same file (its SHA-256 is printed).
``generate.py`` scales it to any size (``throughput.py --samples N`` does so): each generated
sample is one row with a one-word edit, 3% exact duplicates, so every kind of text keeps its
share at every size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from long_source import definitions, stdlib_files, write_rows


def strings(value: object) -> Iterator[str]:
    """Every non-empty string inside a JSON value, in document order."""
    if isinstance(value, str):
        if value:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def dataset_rows(folder: Path) -> Iterator[dict]:
    """One row per line of each JSONL file of ``folder`` that holds any text."""
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                text = "\n\n".join(strings(json.loads(line)))
                if text:
                    yield {"id": f"{path.stem}:{number}", "text": text}


def code_rows(low: int, high: int) -> Iterator[dict]:
    """One row per documented standard-library definition of ``low`` to ``high`` characters."""
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in stdlib_files(root):
        for row in definitions(path, root, low, high):
            yield {"id": row["id"], "text": f"{row['docstring']}\n\n{row['code']}"}


def main(argv: list[str] | None = None) -> None:
    """Write the corpus; print its row counts and SHA-256."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", type=Path, required=True, help="folder of JSONL files")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--min-chars", type=int, default=200)
    p.add_argument("--max-chars", type=int, default=5000)
    args = p.parse_args(argv)
    rows = list(dataset_rows(args.datasets))
    texts = len(rows)
    rows += code_rows(args.min_chars, args.max_chars)
    data = write_rows(rows, args.out)
    print(
        f"{len(rows)} rows ({texts} from {args.datasets}, {len(rows) - texts} of code), "
        f"{len(data) / 1e6:.1f} MB; sha256 {hashlib.sha256(data).hexdigest()}"
    )


if __name__ == "__main__":
    main()

"""Write ``mintdim/demo/self_instruct_seed_alpaca.parquet`` from the bundled Alpaca JSONL.

    python scripts/build_demo_parquet.py          # (re)write the file (needs pyarrow)
    python scripts/build_demo_parquet.py --check  # exit 1 unless its rows are the JSONL's rows

The same 175 rows and four string columns (id, instruction, input, output), no value edited, in
row groups of 64 rows (three of them, so a build of it has several pieces), zstd-compressed:
``conf/source/parquet.yaml`` builds it. The bytes depend on the pyarrow version that wrote them
(its name is in the footer); ``--check`` compares the rows, which do not.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent.parent / "mintdim" / "demo"
SOURCE = DEMO_DIR / "self_instruct_seed_alpaca.jsonl"
TARGET = DEMO_DIR / "self_instruct_seed_alpaca.parquet"
COLUMNS = ("id", "instruction", "input", "output")
ROW_GROUP_ROWS = 64


def rows() -> list[dict[str, str]]:
    """The JSONL file's rows, as the Parquet file must hold them."""
    with open(SOURCE, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv: list[str] | None = None) -> int:
    """Write the file, or check it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    import pyarrow as pa
    import pyarrow.parquet as pq

    expected = rows()
    if args.check:
        found = pq.read_table(TARGET).to_pylist()
        if found != expected:
            print(f"{TARGET} does not hold the rows of {SOURCE}", file=sys.stderr)
            return 1
        print(f"{TARGET.name} holds the {len(found)} rows of {SOURCE.name}")
        return 0
    table = pa.table({name: [row[name] for row in expected] for name in COLUMNS})
    pq.write_table(table, TARGET, row_group_size=ROW_GROUP_ROWS, compression="zstd")
    print(f"wrote {TARGET} ({TARGET.stat().st_size:,} bytes, {len(expected)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

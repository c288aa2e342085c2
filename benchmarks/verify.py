"""``mintdim verify`` against the bound it should meet: hashlib SHA-256 of the same bytes.

    python benchmarks/verify.py                       # demo data scaled to 200,000 samples
    python benchmarks/verify.py --samples 50000 --units 4096 --repeats 5

One build is made (generate.py input, the bundled SentencePiece demo model), then, alternating in
each round, (a) a plain ``verify_build`` of it and (b) ``hashlib.sha256`` over every file of the
build read in 8 MiB blocks, the least a check of the listed digests can do. Both read from the
page cache (the first, unmeasured, round warms it), so the figure is verify's own cost over
SHA-256. Printed: medians of each, and the median of the per-round ratios verify / sha256.
``--units`` changes the record width (long records mean more shard bytes per index line).
``--cold`` drops the page cache before every timing (root only: ``/proc/sys/vm/drop_caches``),
so both sides read from the disk: the figure for a build checked after it was copied or stored.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _harness import default_tokenizers, machine
from generate import DEFAULT_FIELDS, cached, default_input

from mintdim import pipeline
from mintdim.pipelines.unit_build.output.verify import verify_build

_BLOCK = 8 << 20


def sha256_everything(root: Path) -> int:
    """Hash every file of the build; return the byte count."""
    total = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
                total += len(block)
    return total


def drop_caches() -> None:
    """Write dirty pages, then drop the page cache (root only)."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def timed(call, cold: bool) -> float:
    if cold:
        drop_caches()
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--units", default="128,256,512,1024,2048,4096")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    parser.add_argument("--cold", action="store_true", help="drop the page cache before timings")
    args = parser.parse_args()
    sizes = [int(size) for size in args.units.split(",")]
    data = cached(default_input(), DEFAULT_FIELDS, args.samples, args.workdir)
    tokenizer = next(t for t in default_tokenizers() if t.suffix == ".model")
    scratch = Path(tempfile.mkdtemp(prefix="mintdim-verify-bench-"))
    try:
        out = scratch / "build"
        pipeline("unit-build").source.jsonl(
            files=[str(data)],
            fields=[list(DEFAULT_FIELDS)],
            templates=["{instruction}\n\n{input}\n\n{output}"],
        ).tokenizer.sentencepiece({"path": str(tokenizer)}).units(
            sizes=[sizes], build_batch=[1024]
        ).output.dir(str(out), samples_per_shard=[100_000]).run(workers=2, progress=False)
        report = verify_build(out)
        assert report.ok, report.lines()
        size = sha256_everything(out)  # also warms the page cache
        verify_times, hash_times = [], []
        for _ in range(args.repeats):
            verify_times.append(timed(lambda: verify_build(out), args.cold))
            hash_times.append(timed(lambda: sha256_everything(out), args.cold))
        ratios = [v / h for v, h in zip(verify_times, hash_times, strict=True)]
        print(" | ".join(f"{k}: {v}" for k, v in machine().items()))
        print(
            f"build: {report.samples:,} samples, {report.shards} shards, "
            f"{report.shard_bytes / 1e6:.1f} MB of shards, {size / 1e6:.1f} MB in all; "
            f"units {sizes}; page cache {'dropped before each timing' if args.cold else 'warm'}"
        )
        print(
            f"verify  median {statistics.median(verify_times):.3f} s "
            f"({size / statistics.median(verify_times) / 1e6:.0f} MB/s)"
        )
        print(
            f"sha256  median {statistics.median(hash_times):.3f} s "
            f"({size / statistics.median(hash_times) / 1e6:.0f} MB/s)"
        )
        print(
            f"ratio verify/sha256 (median of {args.repeats} paired rounds): {statistics.median(ratios):.2f}x"
        )
    finally:
        shutil.rmtree(scratch)
    sys.exit(0)


if __name__ == "__main__":
    main()

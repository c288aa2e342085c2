"""Peak disk use of a local build: resumable (fragments in staging/) against resumable=False.

    python benchmarks/staging_disk.py                         # 100k samples, demo SentencePiece
    python benchmarks/staging_disk.py --samples 300000 --workers 2

Run by hand, never in CI. Builds the same generated input (benchmarks/generate.py, Alpaca form,
the job of ray_overhead.py) once with ``run(workers=N)`` and once with ``run(workers=N,
resumable=False)``. A thread samples, every 20 ms, the blocks allocated (``st_blocks``) under the
output directory (``staging/`` apart) and under the workers' spool directory (TMPDIR is pointed
at a fresh directory for the run). It prints each build's peak of each and of their sum, the
finished output's size, the peak as a multiple of it, and checks the two outputs are
byte-identical. Fragments only grow until the build ends, so 20 ms sampling sees their peak.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine  # noqa: E402
from generate import cached, default_input  # noqa: E402
from ray_overhead import FIELDS, _job, _tree_digest  # noqa: E402


def _allocated(root: Path) -> tuple[int, int]:
    """(bytes allocated under ``root`` outside staging/, bytes inside it)."""
    outside = inside = 0
    for folder, _, names in os.walk(root):
        staged = "staging" in Path(folder).relative_to(root).parts
        for name in names:
            try:
                size = os.stat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:  # removed while we looked
                continue
            if staged:
                inside += size
            else:
                outside += size
    return outside, inside


class _Peak(threading.Thread):
    """Samples the output and spool directories until stopped; keeps the peaks."""

    def __init__(self, out: Path, spool: Path) -> None:
        super().__init__(daemon=True)
        self.out, self.spool = out, spool
        self.peaks = {"output": 0, "staging": 0, "spool": 0, "total": 0}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.02):
            output, staging = _allocated(self.out) if self.out.exists() else (0, 0)
            spool = sum(_allocated(self.spool))
            now = {"output": output, "staging": staging, "spool": spool}
            now["total"] = output + staging + spool
            self.peaks = {key: max(self.peaks[key], now[key]) for key in self.peaks}


def main() -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tokenizer", type=Path)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "mintdim-disk"
    )
    args = parser.parse_args()
    tokenizer = args.tokenizer or Path(default_input()).parent / "demo_unigram.model"
    args.workdir.mkdir(parents=True, exist_ok=True)
    data = cached(default_input(), FIELDS, args.samples, args.workdir)
    print(machine(), flush=True)
    digests = {}
    for resumable in (True, False):
        out = args.workdir / f"out-resumable-{resumable}"
        spool = args.workdir / f"tmp-resumable-{resumable}"
        for path in (out, spool):
            shutil.rmtree(path, ignore_errors=True)
        spool.mkdir()
        tempfile.tempdir = str(spool)  # the workers' spool files land here
        sampler = _Peak(out, spool)
        sampler.start()
        started = time.perf_counter()
        _job(data, tokenizer, out).run(workers=args.workers, resumable=resumable)
        seconds = time.perf_counter() - started
        sampler.done.set()
        sampler.join()
        final = sum(_allocated(out))
        digests[resumable] = _tree_digest(out)
        mib = {key: value / 2**20 for key, value in sampler.peaks.items()}
        print(
            f"resumable={resumable!s:5s} {seconds:6.1f} s  output {final / 2**20:7.1f} MiB; "
            f"peaks: output {mib['output']:7.1f}  staging {mib['staging']:7.1f}  "
            f"spool {mib['spool']:6.1f}  sum {mib['total']:7.1f} MiB "
            f"= {sampler.peaks['total'] / final:.2f}x the output"
        )
    print(f"outputs byte-identical: {digests[True] == digests[False]}")
    size = data.stat().st_size
    print(f"input: {args.samples} samples, {size / 1e6:.1f} MB, workers: {args.workers}")


if __name__ == "__main__":
    main()

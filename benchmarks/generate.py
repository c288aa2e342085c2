"""Seeded, reproducible scale-up of a small JSONL file to N samples for the benchmarks.

    python benchmarks/generate.py --samples 300000 --out /tmp/bench/input.jsonl
    python benchmarks/generate.py --input data.jsonl --fields question,answer --samples 1000000 --out big.jsonl

Default input: the Alpaca-form demo file shipped in the installed ``mintdim`` package
(``mintdim/demo/self_instruct_seed_alpaca.jsonl``, fields instruction/input/output).

How a sample is made (only the Python standard library, so any interpreter gives the same bytes):

* recombination: each declared field is taken from an independently chosen source row, so the
  lengths of the fields vary independently, as in a real instruction set, and 175 rows give
  175**3 combinations for three fields;
* one word edit: one word of one non-empty field is replaced by a word drawn from the words of the
  whole source file (whitespace and punctuation around it are kept). This makes near-duplicates,
  like real data, while exact collisions between independently made samples stay negligible;
* exact duplicates: with probability ``--dup-rate`` (default 0.03) a sample is an exact copy of an
  earlier one (drawn uniformly), so the duplicate rate is the same at every ``--samples``. That keeps
  "10x the samples" comparable: duplicate groups grow in proportion to the input, never faster.

Each sample is a pure function of a 64-bit seed drawn from ``random.Random(--seed)``; a copy reuses
an earlier seed, so only 8 bytes per sample are kept in memory. Lines are ``json.dumps(...,
ensure_ascii=False)`` objects with an ``id`` and the declared fields (extra keys of the source are
dropped). The SHA-256 of the output is printed (and written next to it as ``<out>.sha256``) so
two runs can be compared; the same arguments always give the same file.
"""

from __future__ import annotations

import argparse
import array
import hashlib
import json
import os
import random
import re
import sys
import time
from pathlib import Path

DEFAULT_FIELDS = ("instruction", "input", "output")
DEFAULT_DUP_RATE = 0.03
_WORD_SPLIT = re.compile(r"(\s+)")


REPO_ROOT = Path(__file__).resolve().parent.parent


def mintdim_package_dir() -> Path:
    """The installed ``mintdim`` package folder, else this checkout's (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("mintdim")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if (REPO_ROOT / "mintdim" / "__init__.py").is_file():
        return REPO_ROOT / "mintdim"
    raise SystemExit(
        "mintdim is neither installed nor next to benchmarks/; pass --input explicitly"
    )


def demo_dir() -> Path:
    """The ``demo`` folder shipped inside the mintdim package."""
    return mintdim_package_dir() / "demo"


def default_input() -> Path:
    """The bundled Alpaca-form demo JSONL."""
    return demo_dir() / "self_instruct_seed_alpaca.jsonl"


def load_rows(path: Path, fields: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The declared fields of every non-blank line of a JSONL file."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            obj = json.loads(line)
            try:
                rows.append(tuple(str(obj[name]) for name in fields))
            except KeyError as err:
                raise SystemExit(f"{path}:{number}: missing field {err}") from None
    if not rows:
        raise SystemExit(f"{path}: no rows")
    return rows


class SampleMaker:
    """Turns a 64-bit seed into one sample (a tuple of field values)."""

    def __init__(self, rows: list[tuple[str, ...]]) -> None:
        self.rows = rows
        self.fields = len(rows[0])
        words: set[str] = set()
        for row in rows:
            for value in row:
                words.update(value.split())
        self.words = sorted(words) or ["x"]

    def make(self, seed: int) -> tuple[str, ...]:
        rng = random.Random(seed)
        picks = [rng.randrange(len(self.rows)) for _ in range(self.fields)]
        values = [self.rows[row][j] for j, row in enumerate(picks)]
        candidates = [j for j, v in enumerate(values) if v.strip()]
        if candidates:
            j = candidates[rng.randrange(len(candidates))]
            parts = _WORD_SPLIT.split(values[j])
            slots = [k for k in range(0, len(parts), 2) if parts[k]]
            if slots:
                parts[slots[rng.randrange(len(slots))]] = self.words[rng.randrange(len(self.words))]
                values[j] = "".join(parts)
        return tuple(values)


def generate(
    input_path: Path,
    fields: tuple[str, ...],
    samples: int,
    out: Path,
    seed: int = 0,
    dup_rate: float = DEFAULT_DUP_RATE,
    quiet: bool = False,
) -> str:
    """Write ``samples`` lines to ``out``; returns the file's SHA-256 hex digest."""
    maker = SampleMaker(load_rows(input_path, fields))
    rng = random.Random(f"mintdim-bench:{seed}")
    seeds = array.array("Q")
    digest = hashlib.sha256()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    started = time.perf_counter()
    with open(tmp, "wb") as handle:
        buffer: list[bytes] = []
        for i in range(samples):
            if i and rng.random() < dup_rate:
                sample_seed = seeds[rng.randrange(i)]
            else:
                sample_seed = rng.getrandbits(64)
            seeds.append(sample_seed)
            obj = {"id": f"gen-{i}"}
            obj.update(zip(fields, maker.make(sample_seed), strict=True))
            buffer.append((json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8"))
            if len(buffer) >= 8192:
                chunk = b"".join(buffer)
                digest.update(chunk)
                handle.write(chunk)
                buffer.clear()
        chunk = b"".join(buffer)
        digest.update(chunk)
        handle.write(chunk)
    os.replace(tmp, out)
    hexdigest = digest.hexdigest()
    Path(str(out) + ".sha256").write_text(f"{hexdigest}  {out.name}\n")
    if not quiet:
        size = out.stat().st_size
        print(
            f"[generate] {samples:,} samples, {size / 1e6:.1f} MB -> {out} "
            f"(sha256 {hexdigest[:16]}..., {time.perf_counter() - started:.1f}s)",
            file=sys.stderr,
        )
    return hexdigest


def cached(
    input_path: Path,
    fields: tuple[str, ...],
    samples: int,
    workdir: Path,
    seed: int = 0,
    dup_rate: float = DEFAULT_DUP_RATE,
) -> Path:
    """Generate into ``workdir`` once per (input content, fields, samples, seed, dup rate)."""
    source = hashlib.sha256(Path(input_path).read_bytes()).hexdigest()[:12]
    key = f"{source}-{'_'.join(fields)}-{samples}-s{seed}-d{dup_rate}"
    out = Path(workdir) / f"gen-{key}.jsonl"
    if not out.exists() or not Path(str(out) + ".sha256").exists():
        generate(Path(input_path), fields, samples, out, seed, dup_rate)
    return out


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, default=None, help="source JSONL (default: demo)")
    parser.add_argument("--fields", default=",".join(DEFAULT_FIELDS), help="comma-separated keys")
    parser.add_argument("--samples", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dup-rate", type=float, default=DEFAULT_DUP_RATE)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    fields = tuple(f for f in args.fields.split(",") if f)
    generate(
        args.input or default_input(), fields, args.samples, args.out, args.seed, args.dup_rate
    )


if __name__ == "__main__":
    main()

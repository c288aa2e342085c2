"""The same records built from .jsonl, .jsonl.gz, .jsonl.zst and .parquet: end to end, alternating.

    python benchmarks/sources.py                       # 200k generated samples, the demo tokenizer
    python benchmarks/sources.py --samples 300000 --rounds 9 --tokenizer albert.spiece.model

Run by hand, never in CI. The input is generate.py's scale-up of the bundled demo, written once
as plain JSONL, as gzip (level 6, the `gzip` default), as zstandard (level 3, the `zstd` default)
and as Parquet (pyarrow's default Snappy, ``--row-group-rows`` rows per row group; 0: pyarrow's
default, one row group up to 1Mi rows, which MintDim cuts into row ranges), all in ``--workdir``. Each round builds every format once, each build ``job.run(workers=N)`` in a fresh
child process timed around ``run()`` only (wall, and CPU of the child and its reaped workers);
the order rotates every round. Printed per format: the median time, and the median over rounds
of the speed ratio to plain JSONL in the same round (``t_jsonl / t_format``: 1.0 is as fast, 0.8
is 80% of the speed). Paired rounds share the machine's load of their minute, which is what
makes the ratio usable on a shared machine; the CPU ratio beside it is what the wall ratio
would be if the machine were otherwise idle.

``--one-process`` adds the gzip build with ``workers=1``: on a one-file input it is what reading a
compressed file as one piece (nothing to split it by) would cost, since one process then does
all the work; it is the alternative the decompressed-once-by-the-driver design was measured
against. The outputs of the last round are compared (the input names aside): they must be
byte-identical.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    DEFAULT_TEMPLATE,
    default_tokenizers,
    loadavg,
    machine,
    mintdim_env,
    remove,
    tokenizer_kind,
    warm_page_cache,
)
from generate import DEFAULT_FIELDS, cached, default_input  # noqa: E402

_CHILD = r"""
import json, resource, sys, time
from mintdim import pipeline
spec = json.loads(sys.argv[1])
step = getattr(pipeline("unit-build").source, spec["source"])(
    files=[spec["file"]], fields=[spec["fields"]], templates=[spec["template"]]
)
job = getattr(step.tokenizer, spec["kind"])({"path": spec["tokenizer"]}).units(
    sizes=[[128, 256, 512, 1024, 2048, 4096, 8192]], build_batch=[4096]
).output.dir(spec["out"], samples_per_shard=[100_000])

def cpu():
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime

wall, used = time.perf_counter(), cpu()
job.run(workers=spec["workers"], progress=False, on_overflow="skip")
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": cpu() - used}))
"""


def write_formats(plain: Path, row_group_rows: int) -> dict[str, Path]:
    """The plain file, and the same bytes (rows) as gzip, zstandard and Parquet beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    data = plain.read_bytes()
    made = {"jsonl": plain}
    for name, compress in (
        ("jsonl.gz", lambda d: gzip.compress(d, compresslevel=6, mtime=0)),
        ("jsonl.zst", lambda d: zstandard.ZstdCompressor(level=3).compress(d)),
    ):
        target = plain.with_name(f"{plain.stem}.{name}")
        if not target.exists():
            target.write_bytes(compress(data))
        made[name] = target
    target = plain.with_name(f"{plain.stem}-rg{row_group_rows or 'default'}.parquet")
    if not target.exists():
        rows = [json.loads(line) for line in data.splitlines() if line.strip()]
        table = pa.table({field: [row[field] for row in rows] for field in DEFAULT_FIELDS})
        pq.write_table(table, target, row_group_size=row_group_rows or None)
    made["parquet"] = target
    return made


def build(spec: dict, env: dict[str, str]) -> dict:
    """One build in a fresh child; its wall and CPU seconds."""
    remove(spec["out"])
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{spec['name']} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def comparable(directory: Path) -> str:
    """SHA-256 over a build's files with the input's name taken out (shards, indexes, stats;
    the manifest without its inputs, its listing of the indexes and its seal)."""
    digest = hashlib.sha256()
    manifest = json.loads((directory / "manifest.json").read_text())
    name = json.dumps(manifest["source"]["files"][0], ensure_ascii=False).encode()
    for key in ("inputs", "files"):
        del manifest["source"][key]
    for key in ("audit_files", "manifest_sha256"):
        del manifest[key]
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes() if path.name != "manifest.json" else json.dumps(manifest).encode()
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(data.replace(name, b'"<input>"'))
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    """Time every format round by round and print the medians and paired ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--tokenizer", type=Path, default=default_tokenizers()[0])
    parser.add_argument("--row-group-rows", type=int, default=10_000)
    parser.add_argument("--one-process", action="store_true", help="add gzip with workers=1")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mintdim-bench"))
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    plain = cached(default_input(), DEFAULT_FIELDS, args.samples, args.workdir)
    files = write_formats(plain, args.row_group_rows)
    contenders = {name: (path, args.workers) for name, path in files.items()}
    if args.one_process:
        contenders["jsonl.gz, 1 process"] = (files["jsonl.gz"], 1)
    env = mintdim_env()
    print(" | ".join(f"{key}: {value}" for key, value in machine().items()))
    print(f"{args.samples:,} samples, tokenizer {args.tokenizer.name}, workers={args.workers}")
    for name, path in files.items():
        print(f"  {name:10} {path.stat().st_size / 2**20:8.1f} MiB  {path.name}")
    times: dict[str, list[dict]] = {name: [] for name in contenders}
    outputs = Path(tempfile.mkdtemp(prefix="mintdim-sources-"))
    try:
        for number in range(args.rounds):
            names = list(contenders)
            names = names[number % len(names) :] + names[: number % len(names)]
            for name in names:
                path, workers = contenders[name]
                warm_page_cache(path)
                spec = {
                    "name": name,
                    "source": "parquet" if name == "parquet" else "jsonl",
                    "file": str(path),
                    "fields": list(DEFAULT_FIELDS),
                    "template": DEFAULT_TEMPLATE,
                    "kind": tokenizer_kind(args.tokenizer),
                    "tokenizer": str(args.tokenizer),
                    "out": str(outputs / name.replace(" ", "_").replace(",", "")),
                    "workers": workers,
                }
                times[name].append(build(spec, env))
            shown = "  ".join(f"{n} {times[n][-1]['wall']:.2f}s" for n in contenders)
            print(f"round {number + 1}: {shown}  (load {loadavg()})", flush=True)
        identity = {
            name: comparable(outputs / name.replace(" ", "_").replace(",", ""))
            for name in contenders
        }
    finally:
        remove(outputs)
    print(
        f"\n{'format':22} {'median wall':>11} {'median CPU':>10} {'speed vs jsonl':>15} {'CPU':>6}"
    )
    for name in contenders:
        wall = statistics.median(t["wall"] for t in times[name])
        cpu = statistics.median(t["cpu"] for t in times[name])
        speed = statistics.median(
            j["wall"] / t["wall"] for j, t in zip(times["jsonl"], times[name], strict=True)
        )
        cpu_speed = statistics.median(
            j["cpu"] / t["cpu"] for j, t in zip(times["jsonl"], times[name], strict=True)
        )
        print(f"{name:22} {wall:10.2f}s {cpu:9.2f}s {speed:14.3f}x {cpu_speed:5.2f}x")
    same = len(set(identity.values())) == 1
    print(f"\noutputs byte-identical but for the input name: {'yes' if same else 'NO'}")
    print(f"load average after: {loadavg()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

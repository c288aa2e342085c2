"""An engine's bound: the best ratio to its library's own ceiling that any build can reach.

    python benchmarks/bound.py --input /tmp/mintdim-bench/gen-...-48000-....jsonl \\
        --fields text --template '{text}' --tokenizer roberta-base.tokenizer.json
    python benchmarks/bound.py ... --tokenizer mistral-7b-v0.1.tokenizer.model \\
        --tokenizer-options '{"pad_fallback": "eos"}'
    python benchmarks/bound.py --engine reference --input .../gen-...-300000-....jsonl \\
        --fields instruction,input,output --template '{instruction}\\n\\n{input}\\n\\n{output}' \\
        --tokenizer albert-base-v2.spiece.model

Run by hand, never in CI. The ceiling of ``throughput.py``'s fast engine is gigatoken's
``encode_batch(texts, parallel=True)`` over texts already rendered in memory: it reads no file,
parses no JSON, hashes nothing, takes no ids out of its result and writes nothing. Every build
must, and every MintDim build with the fast engine must also keep the parity guard's promise.
This script times that least work batch by batch (``--batch`` lines, as a build's
``build_batch``), alternately with gigatoken's bare call on the same batch (what each thread of
the ceiling does, ``parallel=False``), ``--repeats`` times over, so host drift hits both sides
alike, in ``--cores`` processes at once (each a share of the batches), as a build and the
ceiling keep every core busy:

* read: the batch's bytes from the input file (``os.pread``, page cache warm) and their SHA-256
  (the manifest's fingerprint of each input, which a build checks again at its end);
* parse: MintDim's own parse and render of the batch's lines (``parse_lines``, orjson; one
  array per batch parses no faster here) and the texts' UTF-8 bytes;
* hash: SHA-256 of each rendered text's UTF-8 bytes (sample_index.jsonl, duplicate_index.jsonl);
* ids out: gigatoken's flat ids and counts as numpy arrays;
* write: each sample's record padded to its unit (the smallest of ``--sizes`` that holds it),
  its sample_index.jsonl line and, when its ids hold the tokenizer's UNK, its unk_index.jsonl
  line, written to files and hashed (the manifest lists them);
* guard: the reference library re-encoding the rows the default guard samples (``parity``
  ``every``: lines 1, 513, 1025, ... of the file).

And once per build (fixed, CPU seconds, medians of ``--repeats``): loading the reference
tokenizer and gigatoken as MintDim loads them, with gigatoken's first batch call (which imports
awkward), each in a fresh process; the guard's validation: the reference library encoding the
parity corpus and the records on the file's first ``parity`` ``first_rows`` lines.

The bound of a build of the whole input file is ``C / (C + L + F)``: C the bare gigatoken CPU
over every batch, L the least work over every batch, F the fixed work. A build that kept both
cores as busy as the ceiling does could reach it, no build can pass it. Both bounds are shown:
without the guard (what any build must do) and with it (what a MintDim fast-engine build must).

Each pass also runs a real MintDim build of the same file (``engine="fast"``, ``--workers``, in
a fresh child, as ``throughput.py`` runs it) and takes its CPU seconds, the driver's and its
workers': ``C / that`` is the build's ratio on the same footing as the bounds, and the bound
divided into it how much of the bound the build reaches (1.0: it does no more work than the least).

``--engine reference`` measures the reference engine's bound against ``throughput.py``'s
``ceiling``, the library's own batch call (SentencePiece ``encode(utf-8 bytes, num_threads,
return_type="numpy")``, ``tokenizers`` ``encode_batch_fast``), one thread per process here. A
reference build has no guard, and loads one tokenizer. Its "ids out" is what MintDim's own
encoding call (every id in one array, as the writer needs them) costs beyond the bare call: it
is below zero where MintDim's call is the cheaper of the two (SentencePiece's buffers).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from itertools import chain, islice
from pathlib import Path

import numpy as np
import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _contenders import load_library_tokenizer  # noqa: E402
from _harness import machine, mintdim_env, run_contender, tokenizer_kind  # noqa: E402
from per_core import _alternated, validated  # noqa: E402 - it also sets TOKENIZERS_PARALLELISM=false

from mintdim.build.batch import _unk_parts  # noqa: E402
from mintdim.build.contracts import FilePlan, ParityGuard, TokenizerSpec  # noqa: E402
from mintdim.build.formats.sample_index import SampleIndexWriter, sample_parts  # noqa: E402
from mintdim.build.formats.shards import UnitShardWriter  # noqa: E402
from mintdim.build.formats.unk_index import UnkIndexWriter  # noqa: E402
from mintdim.build.source.jsonl import RawBatch, parse_lines  # noqa: E402
from mintdim.build.tokenizer import load_encoder, parity  # noqa: E402
from mintdim.build.units.planner import assign_units, padded_rows  # noqa: E402

GUARD = ParityGuard()
"""The parity guard a default fast build keeps (the tokenizer key ``parity``)."""
_LOAD = """
import sys, time
from mintdim.build.contracts import TokenizerSpec
from mintdim.build.tokenizer import load_encoder
spec = TokenizerSpec(sys.argv[1], sys.argv[2], sys.argv[2], engine=sys.argv[4], **eval(sys.argv[3]))
started = time.process_time()
encoder = load_encoder(spec)
encoder.encode_batch(["x"], [b"x"])
print(time.process_time() - started)
"""


def _batches(path: Path, size: int) -> list[tuple[int, int, list[bytes]]]:
    """``(offset, length, lines)`` of each batch of ``size`` lines of the file."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    out, offset = [], 0
    for start in range(0, len(lines), size):
        chunk = lines[start : start + size]
        length = sum(map(len, chunk)) + len(chunk)
        out.append((offset, length, chunk))
        offset += length
    return out


def _fixed_loads(kind: str, path: Path, options: dict, engine: str) -> float:
    """CPU seconds of loading the engine's tokenizers (the fast engine: both) and its first call
    (gigatoken's imports awkward), in a fresh process."""
    command = [sys.executable, "-c", _LOAD, kind, str(path), repr(options), engine]
    return float(subprocess.run(command, env=mintdim_env(), capture_output=True, text=True).stdout)


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, required=True, help="JSONL file (as a build reads it)")
    p.add_argument("--fields", default="text", help="comma-separated keys")
    p.add_argument("--template", default="{text}", help="template (\\n as real newlines)")
    p.add_argument("--tokenizer", type=Path, action="append", required=True, help="repeatable")
    p.add_argument("--tokenizer-options", type=orjson.loads, default={}, help="JSON")
    p.add_argument("--engine", choices=("fast", "reference"), default="fast")
    p.add_argument("--batch", type=int, default=4096, help="lines per batch (build_batch)")
    p.add_argument("--sizes", default="128,256,512,1024,2048,4096,8192", help="unit sizes")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="the MintDim build's")
    p.add_argument(
        "--cores", type=int, default=os.cpu_count() or 1, help="processes timing the least work"
    )
    args = p.parse_args(argv)
    batches = _batches(args.input, args.batch)
    samples = sum(len(lines) for _, _, lines in batches)
    info = machine()
    print(
        f"# the {args.engine} engine's bound, {info['date']}, {info['cpu']}, {info['cores']} cores, "
        f"load average {os.getloadavg()[0]:.1f}\n"
        f"input: {args.input} ({args.input.stat().st_size / 1e6:.1f} MB, {samples:,} samples, "
        f"batches of {args.batch}), {args.cores} processes at once, {args.repeats} alternating "
        "passes\n"
    )
    print(
        f"| tokenizer | {'gigatoken' if args.engine == 'fast' else 'library'} µs/sample | read | parse | hash | ids out | write | guard 1/{GUARD.every} "
        "| loads s | guard at validation s | bound (every build) | bound (with the guard) "
        "| MintDim CPU s | MintDim wall s | MintDim | of the bound (with the guard) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in args.tokenizer:
        print(_row(args, path, batches, samples), flush=True)
    print(
        "\n(parts in CPU µs per sample; loads and the guard at validation in CPU s; "
        "MintDim: C over the build's CPU, and that over the bound with the guard; medians of "
        "the passes' paired figures)"
    )


def _row(args: argparse.Namespace, path: Path, batches: list, samples: int) -> str:
    """One tokenizer's table row: per pass, the batches alternately with the bare call, then the
    fixed work, so each pass's bound pairs figures taken within seconds of each other."""
    kind = tokenizer_kind(path)
    spec = TokenizerSpec(kind, str(path), str(path), engine=args.engine, **args.tokenizer_options)
    encoder = load_encoder(spec)
    least = _Least(args, encoder, batches)
    if args.engine == "fast":
        bare = partial(_bare, encoder._fast, least.utf8)
        first = islice(chain.from_iterable(least.texts), GUARD.first_rows)
        corpus = [text for _, _, text in parity.corpus()] + list(first)
        validation = partial(encoder.reference.encode_batch, corpus, [t.encode() for t in corpus])
    else:
        bare = partial(_library_call(kind, path), least)
        validation = None  # no guard: nothing to check at validation
    bare(0)  # imports made (awkward), caches warmed alike
    passes = []
    for _ in range(args.repeats):
        ceiling, parts = _on_every_core(args, least, bare, len(batches))
        if args.engine == "reference":
            parts["ids out"] = parts.pop("encode") - ceiling
        fixed = (
            _fixed_loads(kind, path, args.tokenizer_options, args.engine),
            _cpu(validation) if validation else 0.0,
        )
        passes.append((ceiling, parts, *fixed, _build(args, path, kind)))
    ceiling, parts, loads, guard = (
        statistics.median(p[0] for p in passes),
        {k: statistics.median(p[1].get(k, 0.0) for p in passes) for k in least.spent},
        statistics.median(p[2] for p in passes),
        statistics.median(p[3] for p in passes),
    )
    every, with_guard, build, reached = [], [], [], []
    for c, part, load, check, (build_cpu, _) in passes:
        least_work = sum(v for k, v in part.items() if k not in ("encode", "guard"))
        every.append(c / (c + least_work + load))
        with_guard.append(c / (c + least_work + part["guard"] + load + check))
        build.append(c / build_cpu)
        reached.append(build[-1] / with_guard[-1])
    per = [parts[k] / samples * 1e6 for k in ("read", "parse", "hash", "ids out", "write", "guard")]
    return (
        f"| {path.name} | {ceiling / samples * 1e6:.1f} | "
        + " | ".join(f"{v:.2f}" for v in per)
        + f" | {loads:.3f} | {guard:.3f} | {statistics.median(every):.3f} "
        f"| {statistics.median(with_guard):.3f} "
        f"| {statistics.median(p[4][0] for p in passes):.3f} "
        f"| {statistics.median(p[4][1] for p in passes):.3f} "
        f"| {statistics.median(build):.3f} | {statistics.median(reached):.3f} |"
    )


def _on_every_core(
    args: argparse.Namespace, least: _Least, bare, batches: int
) -> tuple[float, dict[str, float]]:
    """One pass over every batch, shared out to ``--cores`` forked processes running at once
    (process k takes batches k, k + cores, ...): CPU seconds of the bare call and of each part,
    summed. A 2-core build runs both cores at once and each slows the other (shared caches, and
    two vCPUs may be one core's two threads); its least work must be timed the same way."""
    cores = max(1, args.cores)
    children = []
    for k in range(cores):
        mine = list(range(k, batches, cores))
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its share, then its figures through the pipe
            os.close(reader)
            with tempfile.TemporaryDirectory(dir=args.input.parent) as sink:
                least.open(Path(sink))
                try:
                    # Never the same batch back to back: the second encode of a batch finds
                    # gigatoken's caches full of its words, which no build (nor the ceiling)
                    # does, since each encodes every text once.
                    half = len(mine) // 2
                    _, ceiling = _alternated(
                        lambda i, mine=mine, half=half: least(mine[(i + half) % len(mine)]),
                        lambda i, mine=mine: bare(mine[i]),
                        len(mine),
                        1,
                    )
                finally:
                    least.close()
            with os.fdopen(writer, "wb") as out:
                out.write(orjson.dumps({"ceiling": ceiling, "parts": least.spent}))
            os._exit(0)
        os.close(writer)
        children.append((pid, reader))
    ceiling, parts = 0.0, dict.fromkeys(least.spent, 0.0)
    for pid, reader in children:
        with os.fdopen(reader, "rb") as handle:
            figures = orjson.loads(handle.read())
        if os.waitpid(pid, 0)[1] != 0:
            raise SystemExit("a process of the bound failed")
        ceiling += figures["ceiling"]
        for name, spent in figures["parts"].items():
            parts[name] += spent
    return ceiling, parts


def _build(args: argparse.Namespace, path: Path, kind: str) -> tuple[float, float]:
    """``(CPU s, wall s)`` of a real build of the input with ``--engine``, in a fresh child: its
    ``job.run`` alone, driver and workers (as ``throughput.py`` times its contenders)."""
    with tempfile.TemporaryDirectory(dir=args.input.parent) as out:
        spec = {
            "contender": "mintdim-fast" if args.engine == "fast" else "mintdim",
            "input": str(args.input),
            "fields": [f for f in args.fields.split(",") if f],
            "template": args.template.replace("\\n", "\n").replace("\\t", "\t"),
            "tokenizer": str(path.resolve()),
            "kind": kind,
            "sizes": [int(s) for s in args.sizes.split(",")],
            "build_batch": args.batch,
            "samples_per_shard": 100_000,
            "tokenizer_options": args.tokenizer_options,
            "workers": args.workers,
            "out": str(Path(out) / "build"),
        }
        result = run_contender(sys.executable, spec, env=mintdim_env(), sample_interval=0)
    if "cpu" not in result:
        raise SystemExit(f"the MintDim build failed: {result}")
    return result["cpu"], result["seconds"]


def file_plan(
    source: Path, fields: str, template: str, tokenizer: dict, sizes: str, batch: int
) -> FilePlan:
    """``source``'s plan as a build validates it (the reference engine: no parity check here):
    ``fields`` comma-separated, ``template`` with ``\\n`` for newlines, ``tokenizer`` the
    tokenizer step's dict (its ``kind`` key names the step), ``sizes`` the unit sizes
    comma-separated, ``batch`` the build_batch."""
    template = template.replace("\\n", "\n").replace("\\t", "\t")
    fields_list = [f for f in fields.split(",") if f]
    sizes_list = [int(s) for s in sizes.split(",")]
    return validated(str(source), fields_list, template, tokenizer, sizes_list, batch)[0].files[0]


def _cpu(work) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _bare(fast, utf8: list[list[bytes]], number: int) -> None:
    fast.encode_batch(utf8[number], parallel=False)


def _library_call(kind: str, path: Path):
    """The reference library's call of ``throughput.py``'s ceiling on one thread, over a batch
    of ``_Least``: its fastest variant, the counts only (SentencePiece on UTF-8 bytes)."""
    library = load_library_tokenizer(kind, str(path))
    if kind == "sentencepiece":
        call = partial(library.encode, num_threads=1, return_type="numpy")
        return lambda least, number: sum(map(len, call(least.utf8[number])))
    call = partial(library.encode_batch_fast, add_special_tokens=False)
    return lambda least, number: sum(map(len, call(least.texts[number])))


class _Least:
    """The least work of one batch, part by part (CPU of each part summed in ``spent``)."""

    def __init__(self, args: argparse.Namespace, encoder, batches: list) -> None:
        self.encoder, self.batches, self.source = encoder, batches, args.input
        self.file = file_plan(
            args.input,
            args.fields,
            args.template,
            {"kind": encoder.spec.kind, "path": encoder.spec.path, **args.tokenizer_options},
            args.sizes,
            args.batch,
        )
        self.raw, line = [], 1
        for _, _, lines in batches:
            self.raw.append(RawBatch(0, line, b"\n".join(lines)))
            line += len(lines)
        self.texts = [parse_lines(raw, self.file).texts for raw in self.raw]
        self.utf8 = [[t.encode("utf-8") for t in chunk] for chunk in self.texts]
        self.sizes = np.asarray([int(s) for s in args.sizes.split(",")], dtype=np.int64)
        self.spent: dict[str, float] = dict.fromkeys(
            ("read", "parse", "encode", "ids out", "hash", "write", "guard"), 0.0
        )

    def open(self, directory: Path) -> None:
        """Open the input for reading and the output's writers in ``directory``."""
        self._input = os.open(self.source, os.O_RDONLY)
        self._fingerprint = hashlib.sha256()
        self._shards = []
        for size in self.sizes.tolist():
            (directory / str(size)).mkdir()
            self._shards.append(UnitShardWriter(directory / str(size), size, 1 << 40))
        self._index = SampleIndexWriter(directory)
        self._unk = UnkIndexWriter(directory)
        self._next = 0

    def close(self) -> None:
        """Close the input and the writers."""
        os.close(self._input)
        for shard in self._shards:
            shard.abort()
        self._index.close()
        self._unk.close()

    def __call__(self, number: int) -> None:
        tick = time.process_time
        spent = self.spent
        offset, length, _ = self.batches[number]
        t0 = tick()
        self._fingerprint.update(os.pread(self._input, length, offset))
        t1 = tick()
        texts = parse_lines(self.raw[number], self.file).texts
        utf8 = [text.encode("utf-8") for text in texts]
        t2 = tick()
        digests = b"".join([hashlib.sha256(data).digest() for data in utf8])
        t3 = tick()
        if self.encoder.engine == "fast":
            batch = self.encoder._fast.encode_batch(utf8, parallel=False)
            t4 = tick()
            layout = batch.layout
            offsets = np.asarray(layout.offsets.data)
            flat = np.asarray(layout.content.data)[offsets[0] : offsets[-1]]
            lengths = np.diff(offsets)
        else:  # one call gives every id in one array: "ids out" is found from the bare call's
            flat, lengths = self.encoder.encode_batch(texts, utf8)
            t4 = tick()
        t5 = tick()
        self._write(digests, flat, lengths, number)
        t6 = tick()
        if self.encoder.engine == "fast":
            # Lines 1, 1 + every, ...: the batch's first line is its offset in the file.
            start = -(self.raw[number].first_line - 1) % GUARD.every
            rows = range(start, len(texts), GUARD.every)
            self.encoder.reference.encode_batch([texts[r] for r in rows], [utf8[r] for r in rows])
        t7 = tick()
        for name, start, end in (
            ("read", t0, t1),
            ("parse", t1, t2),
            ("hash", t2, t3),
            ("encode", t3, t4),
            ("ids out", t4, t5),
            ("write", t5, t6),
            ("guard", t6, t7),
        ):
            spent[name] += end - start

    def _write(self, digests: bytes, flat: np.ndarray, lengths: np.ndarray, number: int) -> None:
        """Each record padded to its unit and written; each sample's index line and, for a
        sample with UNK, its unk_index line written."""
        units = assign_units(lengths, self.sizes)
        info = self.encoder
        dtype = np.dtype("uint16" if info.vocab_size <= 1 << 16 else "uint32")
        sequence = np.empty(lengths.size, dtype=np.int64)
        for unit, writer in enumerate(self._shards):
            members = np.flatnonzero(units == unit)
            sequence[members] = writer.samples + np.arange(members.size)
            writer.write(
                padded_rows(flat, lengths, units == unit, writer.unit_size, info.pad_id, dtype)
            )
        hex_all = digests.hex()
        hexes = [hex_all[i : i + 64] for i in range(0, len(hex_all), 64)]
        count = lengths.size
        lines = list(range(self.raw[number].first_line, self.raw[number].first_line + count))
        parts = sample_parts(
            hexes,
            lengths.tolist(),
            self.sizes[units].tolist(),
            '"data.jsonl"',
            lines,
            ["[]"] * count,
        )
        self._index.write(self._next, parts, self.sizes[units], np.zeros(count, np.int64), sequence)
        if info.unk_id is not None:
            # MintDim's own (vectorised) way: the least known for these lines.
            found, _ = _unk_parts(flat, lengths, info.unk_id, hexes, lines, '"data.jsonl"', None)
            self._unk.write(self._next, found)
        self._next += count


if __name__ == "__main__":
    main()

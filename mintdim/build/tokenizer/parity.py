"""The parity guard: the fast engine's ids must equal the reference library's, checked as it runs.

Exactness is MintDim's promise, so a fast engine is trusted only as far as it is checked. The
guard is a smoke detector, declared by the tokenizer key ``parity`` (``ParityGuard``: defaults
``{"first_rows": 512, "every": 512}``) and recorded in the manifest:

- at validation, the parity corpus (``parity_corpus.jsonl`` beside this module: one JSON string
  per line, written for MintDim and under its MIT licence: whitespace, control and invisible
  characters, combining marks, many scripts, emoji, code, and text that looks like special
  tokens) plus every text of the demo data that ships in the package, then the records on the
  first ``first_rows`` lines of the first file the engine reads, are encoded by both engines;
- during the build, those first rows again and the rows on lines 1, 1 + ``every``,
  1 + 2 × ``every``, ... of every file are checked against the reference library's ids: by
  line number alone, so the same rows whatever ``build_batch``, the workers, the pieces or the
  executor (``every: 1`` checks every row). The first rows are compared with the ids the
  reference gave at validation (a SHA-256 per row of its text and ids, ``row_digests``), so the
  reference does not encode them twice; a row whose text or ids differ from that record is
  re-encoded.

What the guard proves is that no difference showed in the rows it saw: a converter or library
bug that changes ids systematically shows there. The whole proof, every record re-derived by
the reference library, is ``mintdim verify --deep``.

The first difference stops the build with ``TokenizerParityError`` (file:line, both id
sequences around it, how to switch engines); no manifest is written.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.contracts import ParityGuard
from mintdim.build.tokenizer.fast import FastEncoder
from mintdim.build.tokenizer.hf_json import one_thread_per_call
from mintdim.errors import TokenizerParityError

__all__ = [
    "CORPUS",
    "build_rows",
    "check",
    "compare",
    "corpus",
    "encode_both",
    "row_digests",
    "settled",
]

CORPUS = Path(__file__).with_name("parity_corpus.jsonl")
_PACKAGE = Path(__file__).parents[2]
"""The installed ``mintdim`` package: corpus files are named from it, as ``mintdim/...``."""
_DEMO = _PACKAGE / "demo"
_DEMO_FILES = ("self_instruct_seed_alpaca.jsonl", "gsm8k_test_first300.jsonl")
_AROUND = 8
"""Ids shown on each side of the first difference."""

Ids = tuple[np.ndarray, np.ndarray]
"""Every text's ids back to back, and each text's count."""


def corpus() -> Iterator[tuple[str, int, str]]:
    """``(file, line, text)`` of the parity corpus, then of the bundled demo data."""
    for line, raw in enumerate(CORPUS.read_bytes().splitlines(), start=1):
        yield f"mintdim/{CORPUS.relative_to(_PACKAGE).as_posix()}", line, orjson.loads(raw)
    for name in _DEMO_FILES:
        for line, raw in enumerate((_DEMO / name).read_bytes().splitlines(), start=1):
            values = [v for v in orjson.loads(raw).values() if isinstance(v, str)]
            # Joined as a template would: "\n\n" between fields.
            yield f"mintdim/demo/{name}", line, "\n\n".join(values)


def build_rows(lines: list[int], guard: ParityGuard, first_file: bool) -> np.ndarray:
    """The positions of a batch's rows the build checks, from their line numbers: in the first
    file (``first_file``) every row on its first ``guard.first_rows`` lines, then everywhere the
    rows on lines 1, 1 + ``guard.every``, ... A function of line numbers alone, so the rows
    checked (and the count the manifest records) never depend on how the file was cut into
    batches or pieces."""
    offsets = np.asarray(lines, dtype=np.int64) - 1
    sampled = offsets % guard.every == 0
    return np.flatnonzero((offsets < guard.first_rows) | sampled if first_file else sampled)


def row_digests(utf8: Sequence[bytes], flat: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    """Per row, the SHA-256 of its text and its ids: what ``settled`` compares a row with."""
    ends = np.cumsum(lengths)
    return [
        _row_digest(text, flat[end - length : end])
        for text, end, length in zip(utf8, ends.tolist(), lengths.tolist(), strict=True)
    ]


def settled(
    known: dict[int, bytes],
    rows: list[int],
    lines: list[int],
    utf8: Sequence[bytes],
    flat: np.ndarray,
    lengths: np.ndarray,
) -> list[bool]:
    """Per row in ``rows``: whether its text and ids are exactly those the reference library gave
    at validation (``known``: line -> ``row_digests`` entry). Only the other rows need the
    reference library again."""
    ends = np.cumsum(lengths)
    return [
        lines[row] in known
        and known[lines[row]] == _row_digest(utf8[row], flat[ends[row] - lengths[row] : ends[row]])
        for row in rows
    ]


def _row_digest(text: bytes, ids: np.ndarray) -> bytes:
    # The text's length first: no text and ids can pass for another split of the same bytes.
    # Only this row's ids are widened to 8 bytes each (the form recorded at validation): the
    # whole batch's, for a few sampled rows, cost more than their digests.
    digest = hashlib.sha256(len(text).to_bytes(8, "little"))
    digest.update(text)
    digest.update(ids.astype("<i8").tobytes())
    return digest.digest()


def check(
    encoder: FastEncoder,
    texts: list[str],
    utf8: list[bytes],
    fast: Ids | None,
    where: list[tuple[str, int]],
    stage: str | list[str],
    kind: str = "jsonl",
) -> TokenizerParityError | None:
    """Re-encode ``texts`` with the reference library and compare with the fast engine's ids.

    ``fast`` is the fast engine's ``(flat, lengths)`` for exactly these texts, or None to encode
    them here. ``where[i]`` is text i's ``(file, line)``, ``stage`` where the check runs (one
    for all texts, or one per text), ``kind`` what the lines are (``parquet``: rows). Returns
    the error of the first text whose ids differ.
    """
    ids = fast if fast is not None else encoder.encode_batch(texts, utf8)
    reference = encoder.reference.encode_batch(texts, utf8)
    return compare(encoder, ids, reference, where, stage, kind)


def encode_both(encoder: FastEncoder, texts: list[str], utf8: list[bytes]) -> tuple[Ids, Ids]:
    """``(fast, reference)`` ids of ``texts``, the reference library's on every core: what
    validation compares, before any worker exists.

    The reference encodes ten to forty times slower than gigatoken, and both libraries release
    the GIL while they encode: its share of the texts goes to one thread per core (each call on
    its own thread, never the library's pool), while this thread runs the fast engine (whose first call also imports gigatoken's array library, a
    third of a second). The threads are gone when this returns, before any worker is forked.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    step = max(1, -(-len(texts) // (cores or 1)))
    parts = [slice(start, start + step) for start in range(0, len(texts), step)] or [slice(0, 0)]
    with one_thread_per_call(), ThreadPoolExecutor(max_workers=len(parts)) as pool:
        shares = [
            pool.submit(encoder.reference.encode_batch, texts[part], utf8[part]) for part in parts
        ]
        fast = encoder.encode_batch(texts, utf8)
        done = [share.result() for share in shares]
    _release_freed_memory()
    return fast, (np.concatenate([ids for ids, _ in done]), np.concatenate([n for _, n in done]))


def _release_freed_memory() -> None:
    """Hand back to the system what the reference library freed on those threads.

    glibc keeps each thread's freed memory in that thread's own arena, after the thread is gone:
    measured after validation, 4-8 MB more in the process the workers are forked from. Other C
    libraries have no ``malloc_trim`` (and return memory their own way): nothing to do there.
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def compare(
    encoder: FastEncoder,
    fast: Ids,
    reference: Ids,
    where: list[tuple[str, int]],
    stage: str | list[str],
    kind: str = "jsonl",
) -> TokenizerParityError | None:
    """The error of the first text whose fast ids differ from its reference ids, else None
    (``where``, ``stage`` and ``kind`` as in ``check``; the parity corpus is always lines)."""
    flat, lengths = fast
    ref_flat, ref_lengths = reference
    if np.array_equal(lengths, ref_lengths) and np.array_equal(flat, ref_flat):
        return None
    ends, ref_ends = np.cumsum(lengths), np.cumsum(ref_lengths)
    for row in range(len(where)):
        ours = flat[ends[row] - lengths[row] : ends[row]]
        theirs = ref_flat[ref_ends[row] - ref_lengths[row] : ref_ends[row]]
        if not np.array_equal(ours, theirs):
            file, line = where[row]
            found = stage if isinstance(stage, str) else stage[row]
            numbered = "jsonl" if found == "parity_corpus" else kind
            return _error(encoder, found, file, line, theirs.tolist(), ours.tolist(), numbered)
    raise AssertionError("unreachable: the batches differ but no row does")


def _error(
    encoder: FastEncoder,
    stage: str,
    file: str,
    line: int,
    reference: list[int],
    fast: list[int],
    kind: str,
) -> TokenizerParityError:
    common = min(len(reference), len(fast))
    position = next((i for i in range(common) if reference[i] != fast[i]), common)
    start = max(0, position - _AROUND)
    return TokenizerParityError(
        stage=stage,
        file=file,
        line=line,
        path=encoder.spec.path,
        engine_version=encoder.engine_version,
        position=position,
        window_start=start,
        reference=reference[start : position + _AROUND],
        fast=fast[start : position + _AROUND],
        kind=kind,
    )

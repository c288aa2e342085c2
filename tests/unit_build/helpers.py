"""Shared helpers for the unit-build tests: input files, jobs, reference encoders, output checks.

Everything here is independent of the code under test except the fluent API (``pipeline``) and
the reader (``open_build``), which is how every test reads a finished build back. Reference
token ids come straight from the tokenizer libraries (sentencepiece / tokenizers), never from
MintDim's own encoder classes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
import sentencepiece as spm
from tokenizers import Tokenizer

from mintdim import pipeline
from mintdim.errors import MintDimError
from mintdim.read.reader import UnitBuild, open_build
from tests.waiting import children, wait_for

__all__ = [
    "OUTPUT_FILES",
    "Expected",
    "as_array",
    "assert_no_worker_left",
    "assert_not_written",
    "block",
    "expected_from_rows",
    "file_sha256",
    "flipped_bytes",
    "hold_after",
    "job",
    "os_children",
    "read_json",
    "read_jsonl",
    "reference_encoder",
    "sections",
    "sp_no_newline",
    "sp_nopad",
    "StallOnPiece",
    "train_sp",
    "tree_bytes",
    "tree_bytes_but_inputs",
    "tree_bytes_but_source_names",
    "unit_for",
    "verify_build",
    "write_jsonl",
]

OUTPUT_FILES = (
    "manifest.json",
    "histogram.json",
    "stats.json",
    "sample_index.jsonl",
    "duplicate_index.jsonl",
    "unk_index.jsonl",
    "overflow_index.jsonl",
)
"""The audit files every finished output directory holds."""


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def write_word_level(path: str | os.PathLike[str], ids: dict[str, int]) -> Path:
    """A real tokenizer.json whose model holds exactly ``ids`` (ids may be sparse)."""
    content = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": ids, "unk_token": "[UNK]"},
    }
    Path(path).write_text(json.dumps(content))
    return Path(path)


def write_jsonl(
    path: str | os.PathLike[str],
    rows: Iterable[object],
    *,
    newline: bytes = b"\n",
    final_newline: bool = True,
    bom: bool = False,
) -> Path:
    """Write a JSONL file byte for byte.

    A ``dict`` (or list/number...) row is dumped as compact JSON with raw non-ASCII characters
    (``ensure_ascii=False``, so U+2028 and friends stay raw), a ``str`` row is written as is and
    a ``bytes`` row verbatim. Parent directories are created.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    encoded = []
    for row in rows:
        if isinstance(row, bytes):
            encoded.append(row)
        elif isinstance(row, str):
            encoded.append(row.encode("utf-8"))
        else:
            encoded.append(json.dumps(row, ensure_ascii=False).encode("utf-8"))
    data = newline.join(encoded)
    if final_newline and encoded:
        data += newline
    target.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return target


def job(
    files: Sequence[str],
    tokenizer: object,
    *,
    fields: object = (("text",),),
    templates: object = ("{text}",),
    sizes: object = ((8, 16, 32, 64),),
    build_batch: object = (4,),
    out: object = "./out",
    samples_per_shard: object = (100,),
    kind: str | None = None,
    source: str = "jsonl",
):
    """A declared unit-build job. ``tokenizer``: a path (wrapped as ``{"path": ...}``), a dict,
    or a list of either; ``kind`` defaults to the method the first path's extension calls for;
    ``source``: the source step (``jsonl`` or ``parquet``). Sequence arguments are passed on as
    lists (tuples are converted, nested once)."""

    def as_config(entry: object) -> object:
        return {"path": str(entry)} if isinstance(entry, str | os.PathLike) else entry

    def as_list(value: object) -> object:
        if isinstance(value, tuple):
            return [list(v) if isinstance(v, tuple) else v for v in value]
        return value

    configs = [as_config(t) for t in tokenizer] if isinstance(tokenizer, list) else tokenizer
    configs = as_config(configs)
    if kind is None:
        first = configs[0] if isinstance(configs, list) else configs
        path = str(first.get("path", "")) if isinstance(first, dict) else ""
        kind = "hf_json" if path.endswith(".json") else "sentencepiece"
    step = getattr(pipeline("unit-build").source, source)(
        files=list(files), fields=as_list(fields), templates=as_list(templates)
    ).tokenizer
    declared = step.hf_json(configs) if kind == "hf_json" else step.sentencepiece(configs)
    return declared.units(sizes=as_list(sizes), build_batch=as_list(build_batch)).output.dir(
        out, samples_per_shard=as_list(samples_per_shard)
    )


# ---------------------------------------------------------------------------
# Tokenizers
# ---------------------------------------------------------------------------


def reference_encoder(path: str | os.PathLike[str]) -> Callable[[str], list[int]]:
    """Exact ids of a text straight from the library: no special tokens, no padding/truncation."""
    absolute = os.path.abspath(path)
    stat = os.stat(absolute)
    return _reference_encoder(absolute, stat.st_size, stat.st_mtime_ns)


@functools.cache
def _reference_encoder(path: str, _size: int, _mtime: int) -> Callable[[str], list[int]]:
    if path.endswith(".model"):
        processor = spm.SentencePieceProcessor(model_file=path)
        return lambda text: list(processor.encode(text))
    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def train_sp(folder: Path, name: str, lines: Iterable[str], **options: object) -> Path:
    """Train a tiny SentencePiece unigram model and return its .model path."""
    settings: dict[str, object] = {
        "vocab_size": 200,
        "hard_vocab_limit": False,
        "model_type": "unigram",
        "pad_id": 0,
        "unk_id": 1,
        "bos_id": 2,
        "eos_id": 3,
        "normalization_rule_name": "identity",
        "character_coverage": 1.0,
        "num_threads": 1,
        "minloglevel": 2,
    }
    settings.update(options)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(lines)), model_prefix=str(folder / name), **settings
    )
    return folder / f"{name}.model"


def _training_lines() -> list[str]:
    words = [
        "the",
        "a",
        "model",
        "data",
        "token",
        "unit",
        "shard",
        "build",
        "sample",
        "value",
        "train",
        "test",
        "batch",
        "size",
    ]
    return [" ".join(words[(i + j) % len(words)] for j in range(3 + i % 9)) for i in range(400)]


_TRAINED: dict[tuple[str, str], Path] = {}


def sp_nopad(factory: pytest.TempPathFactory) -> Path:
    """A SentencePiece model trained with pad_id=-1 (the library reports no PAD); once a session."""
    key = (str(factory.getbasetemp()), "nopad")
    if key not in _TRAINED:
        _TRAINED[key] = train_sp(factory.mktemp("sp_nopad"), "nopad", _training_lines(), pad_id=-1)
    return _TRAINED[key]


def sp_no_newline(factory: pytest.TempPathFactory) -> Path:
    """A SentencePiece model (pad 0, unk 1) without newline in its vocabulary: "\\n" is UNK."""
    key = (str(factory.getbasetemp()), "nonl")
    if key not in _TRAINED:
        _TRAINED[key] = train_sp(factory.mktemp("sp_nonl"), "nonl", _training_lines())
    return _TRAINED[key]


# ---------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------


def read_json(path: str | os.PathLike[str]) -> object:
    """A JSON file's content."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_jsonl(path: str | os.PathLike[str]) -> list[dict]:
    """Every line of a JSONL file, parsed."""
    text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Lowercase hex SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_bytes(directory: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every file under ``directory`` (relative POSIX path -> bytes)."""
    root = Path(directory)
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def tree_bytes_but_inputs(directory: str | os.PathLike[str]) -> dict[str, bytes]:
    """``tree_bytes``, with the manifest minus what describes the input files as files.

    For builds of equal samples from different input files (CRLF against LF, another mtime):
    their fingerprints (``source.inputs``) and the seal over them differ, everything else must not.
    """
    tree = tree_bytes(directory)
    content = json.loads(tree["manifest.json"])
    del content["source"]["inputs"], content["manifest_sha256"]
    tree["manifest.json"] = json.dumps(content, ensure_ascii=False).encode()
    return tree


def tree_bytes_but_source_names(directory: str | os.PathLike[str]) -> dict[str, bytes]:
    """``tree_bytes_but_inputs``, with each input's name (``source.files``) replaced by its
    position in the indexes and the manifest, and the manifest's listing of the index files
    (whose sizes and digests follow the names) left out: for builds of the same samples from
    inputs of other names and formats (``a.jsonl`` against ``a.jsonl.gz`` or ``a.parquet``)."""
    tree = tree_bytes_but_inputs(directory)
    content = json.loads(tree["manifest.json"])
    names = content["source"]["files"]
    content["source"]["files"] = [f"<input {i}>" for i in range(len(names))]
    del content["audit_files"]
    tree["manifest.json"] = json.dumps(content, ensure_ascii=False).encode()
    for path, data in tree.items():
        if path.endswith(".jsonl"):
            for i, name in enumerate(names):
                data = data.replace(
                    json.dumps(name, ensure_ascii=False).encode(), f'"<input {i}>"'.encode()
                )
            tree[path] = data
    return tree


def flipped_bytes(directory: Path, rng: random.Random, per_file: int) -> Iterator[tuple[str, int]]:
    """Change ``per_file`` random bytes of every file under ``directory``, one at a time: yield
    (relative path, offset) while the byte is changed; each file is restored after its turn."""
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        original = path.read_bytes()
        for offset in rng.sample(range(len(original)), min(per_file, len(original))):
            changed = bytearray(original)
            changed[offset] ^= rng.randrange(1, 256)
            path.write_bytes(bytes(changed))
            yield path.relative_to(directory).as_posix(), offset
        path.write_bytes(original)


def assert_not_written(*paths: str | os.PathLike[str]) -> None:
    """Nothing exists at any of ``paths``."""
    for path in paths:
        assert not Path(path).exists(), f"{path} was written although validation failed"


def hold_after(pieces: int, held: str | os.PathLike[str]) -> None:
    """Make the builds of this process stop mid-way, for a test that kills it: once ``pieces``
    pieces came back from the executor (local or Ray; their fragments are staged), touch
    ``held`` and wait there until the process is killed. For a build script run as a child
    process: the kill then lands mid-build however fast or busy the machine is."""
    from mintdim.build import runtime

    encode = runtime._encode

    def holding(work, items, options):
        for number, result in enumerate(encode(work, items, options), start=1):
            yield result
            if number == pieces:
                Path(held).touch()
                while True:  # only the test's kill ends this
                    time.sleep(3600)

    runtime._encode = holding


class StallOnPiece:
    """A build's work (a ``PieceEncoder``) that stalls on piece ``number``, for a test that kills
    the process working on it: the first process to reach the piece writes its pid to
    ``stalled`` (an absolute path) and waits there until it is killed; any later attempt (a
    retry) runs the piece. Picklable, so Ray actors get it (they import this module)."""

    def __init__(self, work: Callable[[Any], Any], number: int, stalled: Path) -> None:
        self.work, self.number, self.stalled = work, number, stalled

    def __call__(self, work: Any) -> Any:
        # The work function takes a PieceWork: the piece, and the records the driver read for it.
        if work.piece.number == self.number and self._first():
            while True:  # only the test's kill ends this
                time.sleep(3600)
        return self.work(work)

    def _first(self) -> bool:
        """Write this process's pid to ``stalled`` unless it exists: whole, and only once."""
        draft = self.stalled.with_name(f"{self.stalled.name}.{os.getpid()}")
        draft.write_text(str(os.getpid()))
        try:
            os.link(draft, self.stalled)
        except FileExistsError:
            return False
        finally:
            draft.unlink()
        return True


def os_children() -> list[int]:
    """Pids of this process's live (or unreaped) child processes, from /proc (Linux)."""
    return children(os.getpid())


def assert_no_worker_left() -> None:
    """No child process survives the build: neither for the OS nor for multiprocessing.

    The build ends and joins its workers before it returns or raises, but right after a failed
    parallel build ``multiprocessing.active_children()`` may still list a worker that the pool's
    own thread reaped (two threads wait on the same pid) until that thread records it: so both
    views are watched until they are empty.
    """

    def none_left() -> bool:
        pids = os_children() if sys.platform == "linux" else []
        return not multiprocessing.active_children() and not pids

    wait_for(none_left, "every worker process ended and was reaped (none left behind)")


def unit_for(token_count: int, sizes: Sequence[int]) -> int:
    """The smallest size holding ``token_count`` tokens (computed independently of MintDim)."""
    return next(size for size in sizes if size >= token_count)


# ---------------------------------------------------------------------------
# Error texts
# ---------------------------------------------------------------------------


def sections(text: str) -> dict[str, list[str]]:
    """``Header:`` -> its lines, for every blank-line separated block of an error text.

    The first block is ``Name:`` + sentence and is stored under ``"<name>"`` and
    ``"<sentence>"``; a block that does not start with a header is stored under ``"<text>"``.
    """
    blocks = text.split("\n\n")
    first = blocks[0].split("\n")
    result: dict[str, list[str]] = {"<name>": [first[0]], "<sentence>": first[1:]}
    for chunk in blocks[1:]:
        lines = chunk.split("\n")
        if lines[0].endswith(":"):
            result[lines[0][:-1]] = lines[1:]
        else:
            result.setdefault("<text>", []).extend(lines)
    return result


def block(err: MintDimError, lang: str, expected: str) -> None:
    """``expected`` (a whole catalogue text, or its leading part) opens ``err.message(lang)``.

    The text after it, if any, must start a new section, so a prefix never stops mid-section.
    """
    text = err.message(lang)
    assert text.startswith(expected), f"\n--- expected prefix ---\n{expected}\n--- got ---\n{text}"
    rest = text[len(expected) :]
    assert rest == "" or rest.startswith("\n\n"), f"prefix stops mid-section: {rest!r}"


# ---------------------------------------------------------------------------
# Whole-build verification
# ---------------------------------------------------------------------------


class Expected:
    """One sample as the test expects it: where it came from, its rendered text and the
    fields whose value is empty (in declared order; None: the test does not pin them)."""

    __slots__ = ("empty_fields", "line", "source_file", "text")

    def __init__(
        self, source_file: str, line: int, text: str, empty_fields: Sequence[str] | None = None
    ) -> None:
        self.source_file = source_file
        self.line = line
        self.text = text
        self.empty_fields = None if empty_fields is None else list(empty_fields)

    def __repr__(self) -> str:
        return f"Expected({self.source_file!r}, {self.line}, {self.text!r})"


def expected_from_rows(
    source_file: str, rows: Sequence[dict | None], template: Callable[[dict], str]
) -> list[Expected]:
    """Samples of a file written from ``rows`` (None = a blank line), lines 1-based; every key
    of a row is a declared field."""
    return [
        Expected(source_file, number, template(row), [k for k, v in row.items() if v == ""])
        for number, row in enumerate(rows, start=1)
        if row is not None
    ]


def verify_build(
    directory: str | os.PathLike[str],
    expected: Sequence[Expected],
    encode: Callable[[str], list[int]],
    sizes: Sequence[int],
    samples_per_shard: int,
    pad_id: int,
) -> UnitBuild:
    """Check every sample of a finished build against an independent computation.

    Per sample: sample_id, hash, token_count, unit_size, source_file/line, shard_path, shard_row,
    the whole record (tokens then PAD) and, through the reader, the tokens. Then the shard files
    (count, exact sizes) and stats.json / histogram.json totals.
    """
    build = open_build(directory)
    rows = list(build.samples())
    assert len(rows) == len(expected)
    per_unit = dict.fromkeys(sizes, 0)
    total_tokens = 0
    for sample_id, (row, want) in enumerate(zip(rows, expected, strict=True)):
        ids = encode(want.text)
        unit = unit_for(len(ids), sizes)
        position = per_unit[unit]
        per_unit[unit] += 1
        total_tokens += len(ids)
        assert row == {
            "sample_id": sample_id,
            "hash": hashlib.sha256(want.text.encode("utf-8")).hexdigest(),
            "token_count": len(ids),
            "unit_size": unit,
            "source_file": want.source_file,
            "source_line": want.line,
            "empty_fields": row["empty_fields"] if want.empty_fields is None else want.empty_fields,
            "shard_path": f"unit_{unit}/shard_{position // samples_per_shard:06d}.bin",
            "shard_row": position % samples_per_shard,
        }, f"sample {sample_id} ({want!r})"
        record = build.record(row)
        assert record.tolist() == ids + [pad_id] * (unit - len(ids)), f"record of {want!r}"
        assert build.tokens(row).tolist() == ids
    itemsize = build.dtype.itemsize
    for size in sizes:
        unit_dir = Path(directory) / f"unit_{size}"
        shards = sorted(unit_dir.glob("shard_*.bin"))
        count = per_unit[size]
        assert len(shards) == -(-count // samples_per_shard)
        for number, shard in enumerate(shards):
            assert shard.name == f"shard_{number:06d}.bin"
            records = min(samples_per_shard, count - number * samples_per_shard)
            assert shard.stat().st_size == records * size * itemsize
        assert (unit_dir / "EMPTY_UNIT.md").is_file() == (count == 0)
    stats = read_json(Path(directory) / "stats.json")
    histogram = {str(size): per_unit[size] for size in sizes}
    assert stats["total_samples"] == len(expected)
    assert stats["total_tokens"] == total_tokens
    assert stats["unit_distribution"] == histogram
    assert read_json(Path(directory) / "histogram.json") == histogram
    slots = sum(size * count for size, count in per_unit.items())
    assert stats["total_slots"] == slots
    assert stats["pad_tokens"] == slots - total_tokens
    return build


def as_array(values: Sequence[int]) -> np.ndarray:
    """Token ids as an int64 array."""
    return np.asarray(values, dtype=np.int64)


def copied_middle(line: bytes) -> bytes:
    """What a copy (a split's builds, a clean build) keeps of a sample_index line, by the rule
    stated plainly: the bytes between the first comma and the last shard key of a line that
    opens with the id and has the hash after that comma, else the values rebuilt as compact JSON
    in the writer's key order."""
    start, stop = line.find(b",") + 1, line.rfind(b',"shard_path":')
    if line.startswith(b'{"sample_id":') and line[start:].startswith(b'"hash":') and stop > start:
        return line[start:stop]
    row = json.loads(line)
    keys = ("token_count", "unit_size", "source_file", "source_line", "empty_fields")
    rest = json.dumps({key: row[key] for key in keys}, ensure_ascii=False, separators=(",", ":"))
    return f'"hash":"{row["hash"]}",{rest[1:-1]}'.encode()


def reseal_build(directory: Path) -> None:
    """Make every digest a build's manifest lists (shards and their spans, unit and boundary
    indexes, audit files) match its file as it now is, and seal it again: with plain hashlib
    and orjson, as the format states, not with MintDim's own writer."""
    path = directory / "manifest.json"
    content = json.loads(path.read_text(encoding="utf-8"))

    def facts(relative: str) -> tuple[int, str]:
        data = (directory / relative).read_bytes()
        return len(data), hashlib.sha256(data).hexdigest()

    listed = [*content["shards"], *content["unit_indexes"], *content.get("boundary_indexes", [])]
    listed += [entry["spans"] for entry in content["shards"] if entry.get("spans")]
    for entry in listed:
        entry["bytes"], entry["sha256"] = facts(entry["path"])
    for name, entry in content["audit_files"].items():
        entry["bytes"], entry["sha256"] = facts(name)
    content.pop("manifest_sha256", None)
    body = orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n"
    content["manifest_sha256"] = hashlib.sha256(body).hexdigest()
    path.write_bytes(orjson.dumps(content, option=orjson.OPT_INDENT_2) + b"\n")

"""What "intact" means for a finished build, checked from its own files: ``mintdim verify DIR``.

The checks read the build through the names, formats and digests its writers use:

- ``manifest.json`` is sealed (its own SHA-256), complete, of a known format version, in the
  exact bytes MintDim writes;
- every listed shard exists with the listed size and SHA-256, is a whole number of records,
  is named and filled as the writer rolls shards, and nothing unlisted lies beside them;
- every record's slots after its ``token_count`` hold PAD, and no token id is outside the
  vocabulary;
- ``sample_index.jsonl`` has contiguous ids, and each sample's unit, shard and row are where
  the writer puts the next sample of its unit;
- ``stats.json`` and ``histogram.json`` equal the totals of the index, ``duplicate_index.jsonl``
  the groups of equal hashes in it, ``unk_index.jsonl`` the UNK ids found in the shards;
- every index and summary file has the size and SHA-256 the manifest lists, so one changed
  byte anywhere is found.

Every failure is collected (not only the first), each with the file it concerns, in English and
Vietnamese. Hashing every byte is the bound (benchmarks/verify.py measures the whole check
against a bare SHA-256 of the same bytes), so from the start one thread hashes every listed file,
another checks the shards' records, and the index's lines are read straight from their bytes
(sample_index.ExactReader) beside the checks of the main thread, which takes every finding in
order. ``deep`` re-derives every record from the inputs (check/deep_verify.py).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import (
    duplicate_index,
    histogram,
    manifest,
    overflow_index,
    sample_index,
    spans,
    stats,
    unit_index,
    unk_index,
)
from mintdim.build.formats.layout import (
    AUDIT_FILES,
    EMPTY_UNIT,
    STAGING,
    empty_unit_text,
)
from mintdim.build.formats.shards import shard_path, unit_dir_name
from mintdim.check.deep_verify import deep_check
from mintdim.read.reader import require_build
from mintdim.shared import durable
from mintdim.shared.lang import Bilingual

__all__ = ["Failure", "VerifyReport", "require_build", "verify_build"]

_READ_BYTES = 8 << 20
"""Shards are read in blocks of whole records of about this size."""
_INDEX_BLOCK_BYTES = 4 << 20
"""sample_index.jsonl is parsed in blocks of whole lines of about this size."""
_AHEAD = 3
"""Index blocks handed to the parsing thread beyond the one whose findings are being taken."""
_buffers = threading.local()
"""Each shard-checking thread's read buffer."""
_SHOWN_PER_CHECK = 20
"""Failures of one check listed one by one; the rest are counted."""

_TEXT: dict[str, Bilingual] = {
    "manifest_json": Bilingual(
        "not valid JSON ({detail})",
        "không phải JSON hợp lệ ({detail})",
    ),
    "manifest_status": Bilingual(
        "status {status!r}, format_version {version!r}: this MintDim verifies complete builds of "
        "format version {known}",
        "status {status!r}, format_version {version!r}: MintDim này kiểm tra các bản build hoàn "
        "chỉnh có format version {known}",
    ),
    "manifest_key": Bilingual(
        "key {key!r} is missing or malformed (a build by an older MintDim, or a damaged file)",
        "khóa {key!r} bị thiếu hoặc sai dạng (bản build của MintDim cũ hơn, hoặc file bị hỏng)",
    ),
    "manifest_seal": Bilingual(
        "manifest_sha256 does not match the manifest's content: the file was changed",
        "manifest_sha256 không khớp với nội dung manifest: file đã bị thay đổi",
    ),
    "json_form": Bilingual(
        "the bytes differ from the exact form MintDim writes, though the content parses",
        "các byte khác với dạng chính xác MintDim ghi, dù nội dung vẫn đọc được",
    ),
    "missing": Bilingual(
        "listed in the manifest but missing",
        "có trong manifest nhưng không tồn tại",
    ),
    "size": Bilingual(
        "{actual} bytes, the manifest lists {listed}",
        "{actual} byte, manifest ghi {listed}",
    ),
    "sha256": Bilingual(
        "SHA-256 {actual}, the manifest lists {listed}",
        "SHA-256 {actual}, manifest ghi {listed}",
    ),
    "shard_entry": Bilingual(
        "manifest entry {position} should be {expected} with {samples} samples "
        "({records_bytes} bytes), as the writer rolls shards",
        "mục {position} của manifest phải là {expected} với {samples} mẫu "
        "({records_bytes} byte), đúng cách trình ghi chia shard",
    ),
    "marker_text": Bilingual(
        "the text differs from the one MintDim writes for an empty unit",
        "nội dung khác với văn bản MintDim ghi cho một unit rỗng",
    ),
    "unlisted": Bilingual(
        "not part of the build: the manifest does not list it",
        "không thuộc bản build: manifest không liệt kê nó",
    ),
    "staging": Bilingual(
        "the build's fragments, left by a run stopped after its manifest was written: the build "
        "is complete; the same run with resume=True (runner: resume=true) removes them, or "
        "delete this directory",
        "các fragment của lần build, còn lại do lần chạy bị dừng sau khi đã ghi manifest: lần "
        "build đã hoàn tất; chạy lại đúng lần đó với resume=True (runner: resume=true) sẽ xóa "
        "chúng, hoặc hãy xóa thư mục này",
    ),
    "padding": Bilingual(
        "record {row} (sample {sample_id}) holds id {value} at slot {slot}, after its "
        "{token_count} tokens, where PAD ({pad_id}) belongs",
        "bản ghi {row} (mẫu {sample_id}) chứa id {value} ở ô {slot}, sau {token_count} token "
        "của nó, nơi phải là PAD ({pad_id})",
    ),
    "vocabulary": Bilingual(
        "record {row} (sample {sample_id}) holds id {value} at slot {slot}, outside the "
        "vocabulary of {vocab}",
        "bản ghi {row} (mẫu {sample_id}) chứa id {value} ở ô {slot}, ngoài bộ từ vựng {vocab}",
    ),
    "index_line": Bilingual(
        "line {line}: {problem}",
        "dòng {line}: {problem}",
    ),
    "index_place": Bilingual(
        "line {line} (sample {sample_id}): {key} is {actual!r}, expected {expected!r}",
        "dòng {line} (mẫu {sample_id}): {key} là {actual!r}, đúng ra là {expected!r}",
    ),
    "index_total": Bilingual(
        "{samples} samples in unit {unit}, but its shards hold {records} records",
        "{samples} mẫu thuộc unit {unit}, nhưng các shard của nó chứa {records} bản ghi",
    ),
    "total": Bilingual(
        "{key} is {actual!r}, the index and shards give {expected!r}",
        "{key} là {actual!r}, theo index và shard phải là {expected!r}",
    ),
    "index_file_line": Bilingual(
        "line {line} is {actual}, expected {expected}",
        "dòng {line} là {actual}, đúng ra là {expected}",
    ),
    "index_file_count": Bilingual(
        "{actual} lines, expected {expected}",
        "{actual} dòng, đúng ra là {expected}",
    ),
    "spans_record": Bilingual(
        "record {row} (sample {sample_id}): segment stops {stops} do not rise from 0 to its "
        "{token_count} tokens",
        "bản ghi {row} (mẫu {sample_id}): các điểm kết thúc segment {stops} không tăng dần từ 0 "
        "đến {token_count} token của nó",
    ),
    "spans_source": Bilingual(
        "record {row} (sample {sample_id}): source file position {source} is not one of this "
        "build's {count} files",
        "bản ghi {row} (mẫu {sample_id}): vị trí file nguồn {source} không thuộc {count} file "
        "của bản build này",
    ),
    "deep_input_missing": Bilingual(
        "not found from the current directory: run --deep where the build ran",
        "không tìm thấy từ thư mục hiện tại: hãy chạy --deep ở nơi đã chạy build",
    ),
    "deep_error": Bilingual(
        "cannot be read as the build read it:\n{error}",
        "không đọc được như lúc build đã đọc:\n{error}",
    ),
    "deep_fingerprint": Bilingual(
        "{bytes} bytes with SHA-256 {sha256} now; the build read {listed_bytes} bytes with "
        "SHA-256 {listed_sha256}",
        "hiện có {bytes} byte với SHA-256 {sha256}; lúc build đã đọc {listed_bytes} byte với "
        "SHA-256 {listed_sha256}",
    ),
    "deep_missing": Bilingual(
        "line {line} is a sample, but sample_index.jsonl has no more lines",
        "dòng {line} là một mẫu, nhưng sample_index.jsonl không còn dòng nào",
    ),
    "deep_extra": Bilingual(
        "lists more samples than the inputs hold",
        "liệt kê nhiều mẫu hơn số mẫu trong các file đầu vào",
    ),
    "deep_record": Bilingual(
        "sample {sample_id} ({file}:{line}) is not the reference encoding of its line "
        "(differs in: {keys})",
        "mẫu {sample_id} ({file}:{line}) không phải mã hóa tham chiếu của dòng của nó "
        "(khác ở: {keys})",
    ),
    "more": Bilingual(
        "... and {count} more failures of this check",
        "... và thêm {count} lỗi của bước kiểm tra này",
    ),
}


@dataclass(frozen=True, slots=True)
class Failure:
    """One check that does not hold: which check, which file (relative to the build), the facts."""

    check: str
    path: str
    code: str
    facts: dict = field(default_factory=dict)

    def message(self, lang: str | None = None) -> str:
        """``path: what is wrong`` in ``lang`` (default: the current language)."""
        return f"{self.path}: {_TEXT[self.code].render(lang, **self.facts)}"

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The JSON report's form of this failure."""
        return {
            "check": self.check,
            "path": self.path,
            "code": self.code,
            "facts": self.facts,
            "message": self.message(lang),
        }


@dataclass(slots=True)
class VerifyReport:
    """The outcome of verifying one build directory."""

    directory: str
    deep: bool
    failures: list[Failure] = field(default_factory=list)
    hidden: dict[str, int] = field(default_factory=dict)
    """Failures per check beyond the first ``_SHOWN_PER_CHECK``, counted but not listed."""
    samples: int = 0
    shards: int = 0
    shard_bytes: int = 0
    skipped: str = ""
    """Why part of the checks could not run (a manifest too damaged to guide them)."""

    @property
    def ok(self) -> bool:
        """True when every check held."""
        return not self.failures

    def add(self, check: str, path: str, code: str, **facts: object) -> None:
        """Record a failure; beyond ``_SHOWN_PER_CHECK`` of one check only count it."""
        self._add(Failure(check, path, code, facts))

    def absorb(self, other: VerifyReport) -> None:
        """Add the failures another report found (part of the checks, done on another thread)
        as if they had been added here in the first place."""
        for failure in other.failures:
            self._add(failure)
        for check, count in other.hidden.items():
            self.hidden[check] = self.hidden.get(check, 0) + count

    def _add(self, failure: Failure) -> None:
        if sum(f.check == failure.check for f in self.failures) >= _SHOWN_PER_CHECK:
            self.hidden[failure.check] = self.hidden.get(failure.check, 0) + 1
            return
        self.failures.append(failure)

    def lines(self, lang: str | None = None) -> list[str]:
        """Every failure as a line, with the counts of those not listed."""
        lines = [failure.message(lang) for failure in self.failures]
        lines += [
            _TEXT["more"].render(lang, count=count) + f" ({check})"
            for check, count in self.hidden.items()
        ]
        return lines

    def as_dict(self, lang: str | None = None) -> dict[str, object]:
        """The ``--json`` report."""
        return {
            "directory": self.directory,
            "ok": self.ok,
            "deep": self.deep,
            "samples": self.samples,
            "shards": self.shards,
            "shard_bytes": self.shard_bytes,
            "failures": [failure.as_dict(lang) for failure in self.failures],
            "unlisted_failures": self.hidden,
            "skipped": self.skipped,
        }


@dataclass(frozen=True, slots=True)
class _Shard:
    path: str
    unit: int
    samples: int
    bytes: int
    sha256: str
    spans: _Shard | None = None
    """The segment-span file beside the shard (build/formats/spans.py), when spans are stored."""


@dataclass(slots=True)
class _Build:
    """What the manifest says, in the shapes the checks need."""

    root: Path
    content: dict
    sizes: list[int]
    samples_per_shard: int
    dtype: np.dtype
    pad_id: int
    unk_id: int | None
    """None when ``unk_fallback="none"`` turned the UNK tier off."""
    eos_is_unk: bool
    """EOS is appended and shares the UNK id: a record's last slot is EOS, not UNK."""
    vocab_size: int
    sources: list[str]
    shards: list[_Shard]
    unit_indexes: list[_Shard]
    policy: str
    """``run(on_overflow=...)`` of the build."""
    planned_sizes: list[int]
    extended_sizes: list[int]
    span_width: int
    """Values per spans record (build/formats/spans.py); 0 when the build stores no spans."""
    overflows: list[dict]
    """overflow_index.jsonl rows (their file's bytes are checked with the audit files)."""
    truncated: np.ndarray
    """Ids of the samples ``on_overflow="truncate"`` cut."""


@dataclass(slots=True)
class _Index:
    """Columns of sample_index.jsonl (one entry per line) that later checks compare against."""

    token_counts: np.ndarray
    units: np.ndarray
    files: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray
    """``S64``: each sample's hash in lower-case hex."""
    record_counts: list[np.ndarray]
    """Per listed shard (by manifest position): the token count of each record, -1 if unknown."""
    record_ids: list[np.ndarray]
    """Per listed shard: the sample id of each record, -1 if no sample points at it."""


def verify_build(directory: str | Path, *, deep: bool = False) -> VerifyReport:
    """Check a finished build; raises ``NotABuildError`` when ``directory`` holds none."""
    root = require_build(directory)
    report = VerifyReport(directory=str(directory), deep=deep)
    build = _read_manifest(root, report)
    if build is None:
        report.skipped = "manifest"
        return report
    # From the start one thread hashes every file and another checks the shards' records with
    # the token counts and sample ids of the unit indexes (kept where they equal the ones of
    # sample_index.jsonl), while a third parses the index's lines: hashlib and numpy release the
    # GIL. This thread takes their findings in order: the report reads as if one thread had
    # done everything.
    with (
        _Digests(build) as digests,
        ThreadPoolExecutor(max_workers=1) as shards,
        ThreadPoolExecutor(max_workers=1) as lines,
    ):
        early = _early_shard_checks(build, shards)
        index = _check_sample_index(build, report, lines)
        duplicates = shards.submit(_check_duplicates, build, index)  # beside the UNK check
        found_unks = _check_shards(build, index, report, early)
        unks = lines.submit(_apart, _check_unk_index, build, index, found_unks)
        _check_unit_indexes(build, index, report)
        _check_spans(build, index, report)
        _check_overflow_index(build, index, report)
        _check_unlisted(build, report)
        _check_audit_files(build, report)
        groups, duplicates_part = duplicates.result()
        _check_stats(build, index, found_unks, groups, report)
        report.absorb(duplicates_part)
        report.absorb(unks.result())
        digests.compare(build.root, report)
    if deep:
        if report.ok:
            deep_check(build.root, build.content, report)
        else:
            report.skipped = "deep"
    return report


# ---------------------------------------------------------------------------
# manifest.json
# ---------------------------------------------------------------------------


def _read_manifest(root: Path, report: VerifyReport) -> _Build | None:
    raw = (root / manifest.FILENAME).read_bytes()
    name = manifest.FILENAME
    try:
        content = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        report.add("manifest", name, "manifest_json", detail=str(err))
        return None
    if not isinstance(content, dict):
        report.add("manifest", name, "manifest_key", key="(top level)")
        return None
    if content.get("status") != "complete" or content.get("format_version") != (
        manifest.FORMAT_VERSION
    ):
        report.add(
            "manifest",
            name,
            "manifest_status",
            status=content.get("status"),
            version=content.get("format_version"),
            known=manifest.FORMAT_VERSION,
        )
        return None
    if durable.json_bytes(content) != raw:
        report.add("manifest", name, "json_form")
    if not manifest.seal_holds(content):
        report.add("manifest", name, "manifest_seal")
    try:
        return _build(root, content)
    except (KeyError, TypeError, ValueError) as err:
        report.add("manifest", name, "manifest_key", key=str(err).strip("'\""))
        return None


def _build(root: Path, content: dict) -> _Build:
    tokenizer, storage = content["tokenizer"], content["token_storage"]
    sizes = [int(size) for size in content["units"]["sizes"]]
    shards, unit_indexes = _listing(content["shards"]), _listing(content["unit_indexes"])
    for name in AUDIT_FILES:
        facts = content["audit_files"][name]
        int(facts["bytes"]), str(facts["sha256"])
    overflows = _read_jsonl(root / overflow_index.FILENAME)
    units, layout = content["units"], content["segment_spans"]
    int(content["source"]["max_line_bytes"])  # a deep verify reads lines with this limit
    manifest.recorded_encode(content)  # tokenizer.encode agrees with segment_spans.stored
    return _Build(
        root=root,
        content=content,
        sizes=sizes,
        samples_per_shard=int(content["output"]["samples_per_shard"]),
        dtype=np.dtype(storage["dtype"]).newbyteorder("<"),
        pad_id=int(tokenizer["pad_id"]),
        unk_id=None if tokenizer["unk_id"] is None else int(tokenizer["unk_id"]),
        eos_is_unk=bool(tokenizer["append_eos"]) and tokenizer["eos_id"] == tokenizer["unk_id"],
        vocab_size=int(tokenizer["vocab_size"]),
        sources=[str(path) for path in content["source"]["files"]],
        shards=shards,
        unit_indexes=unit_indexes,
        policy=str(units["on_overflow"]),
        planned_sizes=[int(size) for size in units["planned_sizes"]],
        extended_sizes=[int(size) for size in units["extended_sizes"]],
        span_width=int(layout["record_width"]) if layout["stored"] else 0,
        overflows=overflows,
        truncated=np.array(
            [r["sample_id"] for r in overflows if r.get("action") == "truncate"], dtype=np.int64
        ),
    )


def _listing(entries: list[dict]) -> list[_Shard]:
    return [
        _Shard(
            path=str(entry["path"]),
            unit=int(entry["unit_size"]),
            samples=int(entry["samples"]),
            bytes=int(entry["bytes"]),
            sha256=str(entry["sha256"]),
            spans=_spans_entry(entry["spans"], entry) if "spans" in entry else None,
        )
        for entry in entries
    ]


def _spans_entry(spans_file: dict, shard: dict) -> _Shard:
    """A shard's spans file, as a listing entry of the same unit and record count."""
    return _Shard(
        path=str(spans_file["path"]),
        unit=int(shard["unit_size"]),
        samples=int(shard["samples"]),
        bytes=int(spans_file["bytes"]),
        sha256=str(spans_file["sha256"]),
    )


# ---------------------------------------------------------------------------
# sample_index.jsonl
# ---------------------------------------------------------------------------


def _check_sample_index(build: _Build, report: VerifyReport, pool: ThreadPoolExecutor) -> _Index:
    """Read the index in blocks of whole lines (on ``pool``) and check whole columns at once."""
    scan = _IndexScan(build, report)
    path = build.root / sample_index.FILENAME
    if not path.is_file():
        report.add("sample_index", sample_index.FILENAME, "missing")
    else:
        # One open file for every range: the kernel reads ahead of it as of one sequential reader.
        with durable.open_sequential(path) as handle:
            size, step = os.fstat(handle.fileno()).st_size, _INDEX_BLOCK_BYTES
            ranges = [
                (handle.fileno(), start, min(start + step, size)) for start in range(0, size, step)
            ]
            for offset, length, columns in _in_order(pool, scan.read, ranges):
                scan.lines(_Lines(path, offset, length), columns)
    return scan.finish()


def _in_order(pool: ThreadPoolExecutor, work: Callable, items: Iterable) -> Iterator:
    """``work(item)`` of each item, run on ``pool``, the results in the items' order. A few
    items run ahead of the one taken, so memory stays bounded and every worker stays busy."""
    pending: deque[Future] = deque()
    for item in items:
        pending.append(pool.submit(work, item))
        if len(pending) > _AHEAD:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _parse_block(block: bytes, lines_before: int, report: VerifyReport) -> list[object]:
    """The rows of a block of whole lines; a line that does not parse is reported, becomes None."""
    body = block[:-1] if block.endswith(b"\n") else block
    try:
        return orjson.loads(b"[" + body.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        pass
    rows: list[object] = []
    for number, line in enumerate(body.split(b"\n"), start=lines_before + 1):
        try:
            rows.append(orjson.loads(line))
        except orjson.JSONDecodeError as err:
            report.add(
                "sample_index", sample_index.FILENAME, "index_line", line=number, problem=str(err)
            )
            rows.append(None)
    return rows


class _IndexScan:
    """Running state of the index check: where the writer puts the next sample of each unit."""

    def __init__(self, build: _Build, report: VerifyReport) -> None:
        self.build = build
        self.report = report
        self.lines_seen = 0
        self.sizes = np.asarray(build.sizes, dtype=np.int64)
        self.placed = np.zeros(len(build.sizes), dtype=np.int64)
        self.source_of = {path: i for i, path in enumerate(build.sources)}
        self.shard_of = {shard.path: position for position, shard in enumerate(build.shards)}
        self.shard_table = self._shard_table()
        self._readers = threading.local()
        self.columns: dict[str, list[np.ndarray]] = {
            key: [] for key in ("token_counts", "units", "files", "lines", "hashes")
        }
        self.record_counts = [np.full(s.samples, -1, dtype=np.int64) for s in build.shards]
        self.record_ids = [np.full(s.samples, -1, dtype=np.int64) for s in build.shards]

    def _shard_table(self) -> np.ndarray:
        """Manifest position of shard ``[unit, number]`` under the writer's names, -1 if unlisted."""
        table = np.full((self.sizes.size, len(self.build.shards) + 1), -1, dtype=np.int64)
        for unit, size in enumerate(self.build.sizes):
            for number in range(table.shape[1]):
                position = self.shard_of.get(shard_path(size, number))
                if position is None:
                    break
                table[unit, number] = position
        return table

    def read(self, part: tuple[int, int, int]) -> tuple[int, int, sample_index.Columns | None]:
        """The lines of the index that start in one part of it, (open file, start, end): their
        offset and size, and their columns when every one has the writer's exact form (any
        thread: each has its reader)."""
        reader = getattr(self._readers, "reader", None)
        if reader is None:
            reader = self._readers.reader = sample_index.ExactReader(
                self.build.sources, list(self.shard_of)
            )
        return reader.read_lines(*part)

    def lines(self, lines: _Lines, columns: sample_index.Columns | None) -> None:
        """Check a block of whole lines, from its ``columns`` read straight from its bytes, else
        parsed by orjson (the same columns, and every line that does not parse reported)."""
        if not lines.size:
            return
        if columns is not None:
            self.block(lines, columns)
        else:
            rows = _parse_block(lines.data(), self.lines_seen, self.report)
            self.block(rows, sample_index.parse_rows(rows, self.source_of, self.shard_of))

    def block(self, rows: Sequence[object], columns: sample_index.Columns) -> None:
        first = self.lines_seen
        self.lines_seen += columns.sample_id.size
        counts, sizes, lines = columns.token_count, columns.unit_size, columns.source_line
        units = np.minimum(np.searchsorted(self.sizes, sizes), self.sizes.size - 1)
        rules = {
            "unit_size is one of the build's units": columns.unit_size_ok
            & (self.sizes[units] == sizes),
            "token_count is an integer from 0 to unit_size": columns.token_count_ok
            & (counts >= 0)
            & (counts <= sizes),
            "source_file is an input of the manifest": columns.source_file >= 0,
            "source_line is a line number (1 or more)": columns.source_line_ok & (lines >= 1),
            "hash is a SHA-256 hex digest": columns.hash_ok,
        }
        good = np.logical_and.reduce(list(rules.values()))
        for position in np.flatnonzero(~good)[:_SHOWN_PER_CHECK].tolist():
            broken = next(rule for rule, holds in rules.items() if not holds[position])
            self._fail("index_line", first + position, problem=f"expected: {broken}")
        expected_ids = np.arange(first, self.lines_seen)
        wrong_ids = ~columns.sample_id_ok | (columns.sample_id != expected_ids)
        for position in np.flatnonzero(wrong_ids)[:_SHOWN_PER_CHECK].tolist():
            self._place(rows, first, position, "sample_id", int(expected_ids[position]))
        self._check_places(rows, first, good, units, counts, columns.shard_path, columns.shard_row)
        counts[~good], units[~good] = 0, 0
        values = (counts, units, columns.source_file, lines, columns.hash)
        for key, column in zip(self.columns, values, strict=True):
            self.columns[key].append(column)

    def _check_places(
        self,
        rows: Sequence[object],
        first: int,
        good: np.ndarray,
        units: np.ndarray,
        counts: np.ndarray,
        shards: np.ndarray,
        shard_rows: np.ndarray,
    ) -> None:
        """Each good sample must sit where the writer puts the next sample of its unit."""
        sequence = np.full(units.size, -1, dtype=np.int64)
        for unit in range(self.sizes.size):
            members = np.flatnonzero(good & (units == unit))
            sequence[members] = self.placed[unit] + np.arange(members.size)
            self.placed[unit] += members.size
        numbers, places = np.divmod(sequence, self.build.samples_per_shard)
        table = self.shard_table
        inside = (numbers >= 0) & (numbers < table.shape[1])
        wanted = np.where(inside, table[units, np.clip(numbers, 0, table.shape[1] - 1)], -1)
        wrong_shard = good & ((shards != wanted) | (wanted < 0))
        wrong_row = good & ~wrong_shard & (shard_rows != places)
        for position in np.flatnonzero(wrong_shard)[:_SHOWN_PER_CHECK].tolist():
            size = int(self.sizes[units[position]])
            path = shard_path(size, int(numbers[position]))
            self._place(rows, first, position, "shard_path", path)
        for position in np.flatnonzero(wrong_row)[:_SHOWN_PER_CHECK].tolist():
            self._place(rows, first, position, "shard_row", int(places[position]))
        placed = good & ~wrong_shard & ~wrong_row
        for shard in np.unique(wanted[placed]).tolist():
            members = placed & (wanted == shard)
            in_shard = places[members]
            self.record_counts[shard][in_shard] = counts[members]
            self.record_ids[shard][in_shard] = first + np.flatnonzero(members)

    def _fail(self, code: str, position: int, **facts: object) -> None:
        self.report.add("sample_index", sample_index.FILENAME, code, line=position + 1, **facts)

    def _place(
        self, rows: Sequence[object], first: int, position: int, key: str, want: object
    ) -> None:
        row = rows[position]
        actual = row.get(key) if isinstance(row, dict) else None
        self._fail(
            "index_place",
            first + position,
            sample_id=first + position,
            key=key,
            actual=actual,
            expected=want,
        )

    def finish(self) -> _Index:
        for unit, size in enumerate(self.build.sizes):
            records = sum(s.samples for s in self.build.shards if s.unit == size)
            if records != int(self.placed[unit]):
                self.report.add(
                    "sample_index",
                    sample_index.FILENAME,
                    "index_total",
                    samples=int(self.placed[unit]),
                    unit=size,
                    records=records,
                )
        self.report.samples = self.lines_seen
        joined = {
            key: np.concatenate(parts)
            if parts
            else np.zeros(0, dtype="S64" if key == "hashes" else np.int64)
            for key, parts in self.columns.items()
        }
        return _Index(**joined, record_counts=self.record_counts, record_ids=self.record_ids)


class _Lines(Sequence):
    """Lines of the index, by file offset and size; parsed only when a failure message needs a
    row (lines read straight from their bytes are valid JSON)."""

    def __init__(self, path: Path, offset: int, size: int) -> None:
        self.path, self.offset, self.size = path, offset, size
        self._rows: list[object] | None = None

    def data(self) -> bytes:
        with open(self.path, "rb") as handle:
            return os.pread(handle.fileno(), self.size, self.offset)

    def __len__(self) -> int:
        return len(self._parsed())

    def __getitem__(self, position: int) -> object:
        return self._parsed()[position]

    def _parsed(self) -> list[object]:
        if self._rows is None:
            self._rows = orjson.loads(b"[" + self.data()[:-1].replace(b"\n", b",") + b"]")
        return self._rows


# ---------------------------------------------------------------------------
# Shards
# ---------------------------------------------------------------------------


def _check_shards(
    build: _Build, index: _Index, report: VerifyReport, early: dict[int, tuple]
) -> dict[int, list[int]]:
    """Check each listed shard; return the UNK positions found, by sample id. A shard checked
    early (:func:`_early_shard_checks`) with the token counts and sample ids the index gives
    keeps those findings; any other is checked now."""
    unks: dict[int, list[int]] = {}
    for position, shard in _present_shards(build, index, report):
        counts, ids = index.record_counts[position], index.record_ids[position]
        future, early_counts, early_ids = early.get(position, (None, None, None))
        same = future is not None and np.array_equal(early_counts, counts)
        if same and np.array_equal(early_ids, ids):
            found, part = future.result()
        else:
            found, part = _check_shard(build, shard, counts, ids)
        unks.update(found)
        report.absorb(part)
    return unks


def _present_shards(build: _Build, index: _Index, report: VerifyReport) -> Iterator[tuple]:
    """Each listed shard's entry checked against the writer's rolling of shards; yields the
    (manifest position, shard) of each whose file is there."""
    numbers = dict.fromkeys(build.sizes, 0)
    per_unit = np.bincount(index.units, minlength=len(build.sizes))
    remaining = dict(zip(build.sizes, per_unit.tolist(), strict=True))
    for position, shard in enumerate(build.shards):
        width = shard.unit
        record_bytes = width * build.dtype.itemsize
        number = numbers.get(width, 0)
        numbers[width] = number + 1
        expected_samples = min(build.samples_per_shard, remaining.get(width, 0))
        remaining[width] = remaining.get(width, 0) - expected_samples
        expected_path = shard_path(width, number)
        if (
            width not in build.sizes
            or shard.path != expected_path
            or shard.samples != expected_samples
            or shard.bytes != shard.samples * record_bytes
        ):
            report.add(
                "shards",
                shard.path,
                "shard_entry",
                position=position,
                expected=expected_path,
                samples=expected_samples,
                records_bytes=expected_samples * record_bytes,
            )
        report.shards += 1
        report.shard_bytes += shard.bytes
        if not (build.root / shard.path).is_file():
            report.add("shards", shard.path, "missing")
            continue
        yield position, shard


def _early_shard_checks(build: _Build, pool: ThreadPoolExecutor) -> dict[int, tuple]:
    """Each shard's records checked on ``pool`` from the start, before sample_index.jsonl is
    read, with the token counts and sample ids its unit's index.npy gives (record k of a unit
    is row k % samples_per_shard of shard k // samples_per_shard). By manifest position:
    (future of the findings, the counts and ids used). A shard named otherwise than the writer
    names it, or whose unit index cannot be read, is left for later."""
    early: dict[int, tuple] = {}
    listed = {entry.unit: entry for entry in build.unit_indexes}
    entries: dict[int, np.ndarray | None] = {}
    per_shard = build.samples_per_shard
    for position, shard in enumerate(build.shards):
        entry = listed.get(shard.unit)
        if entry is None or entry.path != unit_index.index_path(shard.unit):
            continue
        if shard.unit not in entries:
            try:
                entries[shard.unit] = unit_index.load(build.root / entry.path)
            except (ValueError, OSError):
                entries[shard.unit] = None
        records = entries[shard.unit]
        number = _writer_number(shard)
        if records is None or number is None or not (build.root / shard.path).is_file():
            continue
        rows = slice(number * per_shard, number * per_shard + shard.samples)
        counts = records["token_count"][rows].astype(np.int64)
        ids = records["sample_id"][rows].astype(np.int64)
        if counts.size == shard.samples:
            early[position] = (pool.submit(_check_shard, build, shard, counts, ids), counts, ids)
    return early


def _writer_number(shard: _Shard) -> int | None:
    """The shard's number within its unit when its path is the one the writer gives it."""
    name = shard.path.rpartition("_")[2].removesuffix(".bin")
    if name.isdigit() and shard_path(shard.unit, int(name)) == shard.path:
        return int(name)
    return None


def _check_shard(
    build: _Build, shard: _Shard, counts: np.ndarray, ids: np.ndarray
) -> tuple[dict[int, list[int]], VerifyReport]:
    """Check one shard's records, given the token count and sample id of each (any thread):
    the UNK positions found and a report of its own, for the caller to take in order."""
    record_bytes = shard.unit * build.dtype.itemsize
    step = max(1, _READ_BYTES // record_bytes)
    # Read into this thread's buffer, reused: fresh pages would cost a fault each.
    buffer = getattr(_buffers, "buffer", None)
    if buffer is None or buffer.size < step * record_bytes:
        buffer = _buffers.buffer = np.empty(step * record_bytes, np.uint8)
    unks: dict[int, list[int]] = {}
    part = VerifyReport(directory="", deep=False)
    first = 0
    with durable.open_sequential(build.root / shard.path) as handle:
        # Until the end of the file: rows past the listed samples are a size failure already.
        while (
            whole := os.preadv(
                handle.fileno(), [buffer[: step * record_bytes]], first * record_bytes
            )
            // record_bytes
        ):
            records = buffer[: whole * record_bytes].view(build.dtype).reshape(whole, shard.unit)
            rows = slice(first, first + whole)
            _check_records(build, shard.path, records, (counts[rows], ids[rows]), first, unks, part)
            first += whole
    return unks, part


def _check_records(
    build: _Build,
    path: str,
    records: np.ndarray,
    samples: tuple[np.ndarray, np.ndarray],
    first_row: int,
    unks: dict[int, list[int]],
    report: VerifyReport,
) -> None:
    """PAD after each record's tokens, ids inside the vocabulary, and where UNK ids are.

    ``samples``: the token count and sample id of each record, from the index. The extremes of
    each record's tokens and tail prove the common case in two read-only passes; the slots at
    fault are looked for only where they prove nothing.
    """
    counts, ids = samples
    records = records[: counts.size]  # rows past the listed samples are a size failure already
    if not records.size:
        return
    width = records.shape[1]
    token_min, token_max, tail_min, tail_max = _extremes(records, counts)
    pad = build.pad_id
    # A record no sample points at (count -1) is an index failure already: no PAD check for it.
    no_tail = (counts < 0) | (counts >= width)
    if not (no_tail | ((tail_min == pad) & (tail_max == pad))).all():
        tail = (np.arange(width) >= counts[:, None]) & (counts >= 0)[:, None]
        bad = (records != pad) & tail
        _slot_failures(report, "padding", path, records, bad, samples, first_row, pad_id=pad)
    # Every slot is in one record's tokens or tail, so this is the largest id of the block.
    if max(int(token_max.max()), int(tail_max.max())) >= build.vocab_size:
        outside = records >= build.vocab_size
        _slot_failures(
            report, "vocabulary", path, records, outside, samples, first_row, vocab=build.vocab_size
        )
    if build.unk_id is None:  # the UNK tier is off
        return
    # UNK ids are rare: look for them only in records whose tokens span the UNK id (all slots
    # of a record no sample points at), then keep those inside their record's tokens.
    unk = build.unk_id
    maybe = np.flatnonzero((counts < 0) | ((counts > 0) & (token_min <= unk) & (token_max >= unk)))
    hit_rows, slots_hit = np.divmod(np.flatnonzero(records[maybe] == unk), width)
    rows = maybe[hit_rows]
    listed = counts[rows]
    hits = (slots_hit < listed) | (listed < 0)
    if build.eos_is_unk:
        # The appended EOS is not field text, unless truncation cut it off the record.
        hits &= ~((slots_hit == listed - 1) & ~np.isin(ids[rows], build.truncated))
    rows, slots_hit = rows[hits], slots_hit[hits].tolist()
    if not slots_hit:
        return
    # Hits come record by record: cut the slot list where the record changes.
    cuts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]).tolist()
    stops = [*cuts[1:], len(slots_hit)]
    for sample_id, start, stop in zip(ids[rows[cuts]].tolist(), cuts, stops, strict=True):
        unks[sample_id] = slots_hit[start:stop]


def _extremes(records: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per record: the smallest and largest id of its tokens, then of its tail (the slots from
    its token count on). An empty part gives some id of the record, which callers mask out.

    One ``reduceat`` per extreme over the flat block, cut at every record start and token
    count, reads each slot once and writes nothing per slot.
    """
    flat = records.reshape(-1)
    width = records.shape[1]
    cuts = np.repeat(np.arange(0, flat.size, width, dtype=np.int64), 2)
    cuts[1::2] += np.clip(counts, 0, width)
    # reduceat cannot start a part at the very end: a full last record's empty tail starts at
    # its last slot instead, so that slot joins its tokens below.
    full_last = cuts[-1] == flat.size
    cuts[-1] -= full_last
    parts = []
    for reduce in (np.minimum, np.maximum):
        extremes = reduce.reduceat(flat, cuts)
        if full_last:
            extremes[-2] = reduce(extremes[-2], extremes[-1])
        parts += [extremes[0::2], extremes[1::2]]
    token_min, tail_min, token_max, tail_max = parts
    return token_min, token_max, tail_min, tail_max


def _slot_failures(
    report: VerifyReport,
    code: str,
    path: str,
    records: np.ndarray,
    mask: np.ndarray,
    samples: tuple[np.ndarray, np.ndarray],
    first_row: int,
    **facts: int,
) -> None:
    """One failure per slot of ``mask`` (up to the shown limit), naming record, sample and id."""
    counts, ids = samples
    for row, slot in np.argwhere(mask)[:_SHOWN_PER_CHECK].tolist():
        report.add(
            code,
            path,
            code,
            row=first_row + row,
            sample_id=int(ids[row]),
            value=int(records[row, slot]),
            slot=slot,
            token_count=int(counts[row]),
            **facts,
        )


def _check_unit_indexes(build: _Build, index: _Index, report: VerifyReport) -> None:
    """Each filled unit's index.npy lists its records' sample ids and token counts, in order."""
    listed = {entry.unit: entry for entry in build.unit_indexes}
    for size in build.sizes:
        positions = [p for p, shard in enumerate(build.shards) if shard.unit == size]
        if not positions:
            continue
        relative = unit_index.index_path(size)
        entry = listed.get(size)
        if entry is None or entry.path != relative:
            report.add("unit_index", relative, "missing")
            continue
        path = build.root / relative
        if not path.is_file():
            report.add("unit_index", relative, "missing")
            continue
        try:
            entries = unit_index.load(path)
        except (ValueError, OSError) as err:
            report.add("unit_index", relative, "index_line", line=1, problem=str(err))
            continue
        for key, column in (("sample_id", index.record_ids), ("token_count", index.record_counts)):
            want = np.concatenate([column[p] for p in positions])
            got = np.asarray(entries[key], dtype=np.int64)
            if got.shape != want.shape:
                report.add(
                    "unit_index", relative, "index_file_count", actual=got.size, expected=want.size
                )
                break
            for record in np.flatnonzero(got != want)[:_SHOWN_PER_CHECK].tolist():
                report.add(
                    "unit_index",
                    relative,
                    "index_file_line",
                    line=record,
                    actual=f"{key} {got[record]}",
                    expected=f"{key} {want[record]}",
                )


def _check_spans(build: _Build, index: _Index, report: VerifyReport) -> None:
    """Each shard's spans file: listed, intact, and each record's stops rising to its count."""
    for position, shard in enumerate(build.shards):
        if not build.span_width:
            continue
        entry = shard.spans
        relative = shard.path.removesuffix(".bin") + spans.SUFFIX
        if entry is None or entry.path != relative or not (build.root / relative).is_file():
            report.add("spans", relative, "missing")
            continue
        data = np.fromfile(build.root / relative, dtype=spans.DTYPE)
        width = build.span_width
        if data.size != shard.samples * width:
            continue  # a size failure already
        records = spans.read_records(data, width)
        counts, ids = index.record_counts[position], index.record_ids[position]
        stops = records[:, 1:]
        bad_source = (records[:, 0] < 0) | (records[:, 0] >= len(build.sources))
        rising = (stops[:, :1] >= 0) & (np.diff(stops, axis=1) >= 0).all(axis=1)[:, None]
        bad_stops = ~rising[:, 0] | (stops[:, -1] != counts)
        for row in np.flatnonzero(bad_source)[:_SHOWN_PER_CHECK].tolist():
            report.add(
                "spans",
                relative,
                "spans_source",
                row=row,
                sample_id=int(ids[row]),
                source=int(records[row, 0]),
                count=len(build.sources),
            )
        for row in np.flatnonzero(bad_stops & (counts >= 0))[:_SHOWN_PER_CHECK].tolist():
            report.add(
                "spans",
                relative,
                "spans_record",
                row=row,
                sample_id=int(ids[row]),
                stops=stops[row].tolist(),
                token_count=int(counts[row]),
            )


def _check_overflow_index(build: _Build, index: _Index, report: VerifyReport) -> None:
    """Each overflow line names a sample of this build (or none, when skipped) at its place."""
    largest = max(build.planned_sizes)
    for line, row in enumerate(build.overflows, start=1):
        sample_id = row.get("sample_id")
        expected = {
            "action": build.policy,
            "max_unit_size": largest,
            "sample_id is null": build.policy == "skip",
        }
        actual = {
            "action": row.get("action"),
            "max_unit_size": row.get("max_unit_size"),
            "sample_id is null": sample_id is None,
        }
        if isinstance(sample_id, int) and 0 <= sample_id < index.token_counts.size:
            expected["source_line"] = int(index.lines[sample_id])
            actual["source_line"] = row.get("source_line")
            expected["source_file"] = build.sources[index.files[sample_id]]
            actual["source_file"] = row.get("source_file")
            if build.policy == "extend":
                expected["new_unit_size"] = build.sizes[index.units[sample_id]]
                actual["new_unit_size"] = row.get("new_unit_size")
        for key in expected:
            if actual[key] != expected[key]:
                report.add(
                    "overflow_index",
                    overflow_index.FILENAME,
                    "index_place",
                    line=line,
                    sample_id=sample_id,
                    key=key,
                    actual=actual[key],
                    expected=expected[key],
                )


def _read_jsonl(path: Path) -> list[dict]:
    """The rows of a small JSONL file; [] when absent or damaged (the digest check says so)."""
    try:
        rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    except (OSError, orjson.JSONDecodeError):
        return []
    return [row for row in rows if isinstance(row, dict)]


def _compare_digest(
    path: Path, relative: str, listed: dict, digest: str, report: VerifyReport, check: str
) -> None:
    """A file's size and ``digest`` (taken by the caller) against its listed ones."""
    actual = path.stat().st_size
    if actual != listed["bytes"]:
        report.add(check, relative, "size", actual=actual, listed=listed["bytes"])
    if digest != listed["sha256"]:
        report.add(check, relative, "sha256", actual=digest, listed=listed["sha256"])


def _check_unlisted(build: _Build, report: VerifyReport) -> None:
    """Nothing may lie in the build that the manifest does not account for."""
    expected = {manifest.FILENAME, *AUDIT_FILES}
    listed = {entry.path for entry in [*build.shards, *build.unit_indexes]}
    listed |= {shard.spans.path for shard in build.shards if shard.spans is not None}
    filled = {shard.unit for shard in build.shards}
    units = {unit_dir_name(size): size for size in build.sizes}
    for entry in sorted(build.root.iterdir()):
        name = entry.name
        if name in expected and entry.is_file():
            continue
        if name in units and entry.is_dir():
            for inner in sorted(entry.iterdir()):
                relative = f"{name}/{inner.name}"
                empty_marker = inner.name == EMPTY_UNIT and units[name] not in filled
                if relative not in listed and not empty_marker:
                    report.add("files", relative, "unlisted")
                elif empty_marker and inner.read_text("utf-8", "replace") != empty_unit_text(
                    units[name]
                ):
                    report.add("files", relative, "marker_text")
            continue
        leftover = name == STAGING and entry.is_dir()
        report.add("files", name, "staging" if leftover else "unlisted")


def _check_audit_files(build: _Build, report: VerifyReport) -> None:
    for name in AUDIT_FILES:
        if not (build.root / name).is_file():
            report.add("files", name, "missing")


class _Digests:
    """The size and SHA-256 of every file the manifest lists, hashed on a second thread.

    Hashing every byte is the bound verify is measured against (benchmarks/verify.py). File reads
    and hashlib release the GIL, so from the start of verify a second core hashes while the main
    thread checks the content, reading the same files (from the page cache) for its own purpose;
    the digests are compared at the end, in manifest order. A missing file is reported by the
    check that owns it.
    """

    def __init__(self, build: _Build) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1)  # one: the main thread has the other core
        self._files = [
            (check, relative, listed, self._pool.submit(durable.file_sha256, build.root / relative))
            for check, relative, listed in _listed_files(build)
            if (build.root / relative).is_file()
        ]

    def __enter__(self) -> _Digests:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def compare(self, root: Path, report: VerifyReport) -> None:
        """Report each file whose size or digest is not the listed one (waits for the hashes)."""
        for check, relative, listed, digest in self._files:
            _compare_digest(root / relative, relative, listed, digest.result(), report, check)


def _listed_files(build: _Build) -> list[tuple[str, str, dict]]:
    """(check, path, {"bytes", "sha256"}) of every file whose digest the manifest lists; a unit
    index or spans file listed under another name than the writer's is reported missing instead."""

    def facts(entry: _Shard) -> dict:
        return {"bytes": entry.bytes, "sha256": entry.sha256}

    files = [("shards", shard.path, facts(shard)) for shard in build.shards]
    for shard in build.shards if build.span_width else []:
        relative = shard.path.removesuffix(".bin") + spans.SUFFIX
        if shard.spans is not None and shard.spans.path == relative:
            files.append(("spans", relative, facts(shard.spans)))
    listed = {entry.unit: entry for entry in build.unit_indexes}
    filled = {shard.unit for shard in build.shards}
    for size in build.sizes:
        entry = listed.get(size)
        if size in filled and entry is not None and entry.path == unit_index.index_path(size):
            files.append(("unit_index", entry.path, facts(entry)))
    audit = build.content["audit_files"]
    return [("files", sample_index.FILENAME, audit[sample_index.FILENAME]), *files] + [
        ("files", name, audit[name]) for name in AUDIT_FILES if name != sample_index.FILENAME
    ]


# ---------------------------------------------------------------------------
# stats.json, histogram.json, duplicate_index.jsonl, unk_index.jsonl
# ---------------------------------------------------------------------------


def _check_stats(
    build: _Build,
    index: _Index,
    unks: dict[int, list[int]],
    groups: list[list[int]],
    report: VerifyReport,
) -> None:
    """Recount stats.json from the index, the shards' UNK ids and the duplicate groups."""
    actual = _read_json(build.root / stats.FILENAME, report, "stats")
    if actual is None:
        return
    counter = stats.StatsCounter(
        tuple(build.sizes), policy=build.policy, extended=list(build.extended_sizes)
    )
    counter.overflow(len(build.overflows))
    # blank_lines comes from the inputs alone: only a deep verify can count it again.
    blank_lines = actual.get("blank_lines") if isinstance(actual.get("blank_lines"), int) else 0
    counter.add(
        index.token_counts,
        index.units,
        blank_lines,
        sum(len(positions) for positions in unks.values()),
    )
    expected = counter.as_dict(
        token_dtype=build.content["token_storage"]["dtype"],
        bytes_per_token=build.dtype.itemsize,
        duplicate_groups=len(groups),
        duplicate_samples=sum(len(group) for group in groups),
        samples_with_unk=len(unks),
        shard_count=len(build.shards),
        shard_bytes=sum(shard.bytes for shard in build.shards),
    )
    for key in sorted(set(expected) | set(actual)):
        if actual.get(key) != expected.get(key):
            report.add(
                "stats",
                stats.FILENAME,
                "total",
                key=key,
                actual=actual.get(key),
                expected=expected.get(key),
            )
    shown = _read_json(build.root / histogram.FILENAME, report, "stats")
    wanted = histogram.histogram(build.sizes, counter.unit_counts.tolist())
    if shown is not None and shown != wanted:
        report.add("stats", histogram.FILENAME, "total", key="units", actual=shown, expected=wanted)


def _read_json(path: Path, report: VerifyReport, check: str) -> dict | None:
    if not path.is_file():
        return None  # reported by the digest check
    raw = path.read_bytes()
    try:
        content = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        report.add(check, path.name, "manifest_json", detail=str(err))
        return None
    if durable.json_bytes(content) != raw:
        report.add(check, path.name, "json_form")
    return content if isinstance(content, dict) else None


def _apart(check: Callable, *args: object) -> VerifyReport:
    """``check(*args, report)`` into a report of its own (any thread), for the caller to take
    in order."""
    part = VerifyReport(directory="", deep=False)
    check(*args, part)
    return part


def _check_duplicates(build: _Build, index: _Index) -> tuple[list[list[int]], VerifyReport]:
    """The duplicate groups of the index's hashes, and duplicate_index.jsonl checked against
    them (any thread: a report of its own, for the caller to take in order)."""
    groups = duplicate_index.groups([index.hashes.view(np.uint8).reshape(-1, 64)])
    return groups, _apart(_check_duplicate_index, build, index, groups)


def _check_duplicate_index(
    build: _Build, index: _Index, groups: list[list[int]], report: VerifyReport
) -> None:
    members = [i for ids in groups for i in ids]
    places = zip(members, index.files[members].tolist(), index.lines[members].tolist(), strict=True)
    locations = {i: {"source_file": build.sources[f], "source_line": n} for i, f, n in places}
    hashes = index.hashes[[ids[0] for ids in groups]].tolist()
    expected = [
        duplicate_index.group_line(digest.decode(), ids, locations)
        for digest, ids in zip(hashes, groups, strict=True)
    ]
    _compare_lines(build.root, duplicate_index.FILENAME, expected, report, "duplicate_index")


def _check_unk_index(
    build: _Build, index: _Index, unks: dict[int, list[int]], report: VerifyReport
) -> None:
    sources = [orjson.dumps(path).decode() for path in build.sources]
    ids = sorted(unks)
    hashes, files, lines = (
        column[ids].tolist() for column in (index.hashes, index.files, index.lines)
    )
    parts: list[str] = []
    # unk_parts takes samples of one source file: consecutive ids of one file at a time.
    for file, group in itertools.groupby(range(len(ids)), key=files.__getitem__):
        run = list(group)
        parts += unk_index.unk_parts(
            [hashes[k].decode() for k in run],
            sources[file],
            [lines[k] for k in run],
            [unks[ids[k]] for k in run],
        )
    expected = [unk_index.unk_line(i, part).encode() for i, part in zip(ids, parts, strict=True)]
    _compare_lines(build.root, unk_index.FILENAME, expected, report, "unk_index")


def _compare_lines(
    root: Path, name: str, expected: list[bytes], report: VerifyReport, check: str
) -> None:
    """The file must be exactly the ``expected`` lines (each with its newline), as their
    module writes them; a file that is not is compared line by line to say where."""
    path = root / name
    if not path.is_file():
        return  # reported by the digest check
    data = path.read_bytes()
    if data == b"".join(expected):
        return
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, (line, wanted) in enumerate(zip(lines, expected, strict=False), start=1):
        if line + b"\n" != wanted:
            report.add(
                check,
                name,
                "index_file_line",
                line=number,
                actual=line.decode("utf-8", "replace"),
                expected=wanted.decode().removesuffix("\n"),
            )
    if len(lines) != len(expected):
        report.add(check, name, "index_file_count", actual=len(lines), expected=len(expected))

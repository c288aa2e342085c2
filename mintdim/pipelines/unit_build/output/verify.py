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
Vietnamese. Shards are streamed in blocks of whole records, hashed and checked in one read, and
the index is parsed a block at a time with one orjson call; benchmarks/verify.py measures the
whole check against a bare SHA-256 of the same bytes. ``deep`` re-derives every record from the
inputs (output/deep_verify.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from mintdim.pipelines.unit_build.output import (
    duplicate_index,
    durable,
    histogram,
    manifest,
    overflow_index,
    sample_index,
    spans,
    staging,
    stats,
    unit_index,
    unk_index,
)
from mintdim.pipelines.unit_build.output.deep_verify import deep_check
from mintdim.pipelines.unit_build.output.dir import (
    AUDIT_FILES,
    EMPTY_UNIT,
    empty_unit_text,
)
from mintdim.pipelines.unit_build.output.duplicate_index import DuplicateTracker
from mintdim.pipelines.unit_build.output.reader import require_build
from mintdim.pipelines.unit_build.units.shard_writer import shard_path, unit_dir_name
from mintdim.shared.lang import Bilingual

__all__ = ["Failure", "VerifyReport", "require_build", "verify_build"]

_READ_BYTES = 8 << 20
"""Shards are read in blocks of whole records of about this size."""
_INDEX_BLOCK_BYTES = 8 << 20
"""sample_index.jsonl is parsed in blocks of whole lines of about this size."""
_BLOCKS_IN_FLIGHT = 2
"""Blocks read but not yet hashed, at most (each up to _READ_BYTES or _INDEX_BLOCK_BYTES)."""
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
        if sum(f.check == check for f in self.failures) >= _SHOWN_PER_CHECK:
            self.hidden[check] = self.hidden.get(check, 0) + 1
            return
        self.failures.append(Failure(check, path, code, facts))

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
    """The segment-span file beside the shard (output/spans.py), when spans are stored."""


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
    """Values per spans record (output/spans.py); 0 when the build stores no spans."""
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
    digests: bytes
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
    index = _check_sample_index(build, report)
    found_unks = _check_shards(build, index, report)
    _check_unit_indexes(build, index, report)
    _check_spans(build, index, report)
    _check_overflow_index(build, index, report)
    _check_unlisted(build, report)
    _check_audit_digests(build, report)
    groups = _check_stats(build, index, found_unks, report)
    _check_duplicate_index(build, index, groups, report)
    _check_unk_index(build, index, found_unks, report)
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


def _check_sample_index(build: _Build, report: VerifyReport) -> _Index:
    """Parse the index in blocks (one orjson call each) and check whole columns at once."""
    scan = _IndexScan(build, report)
    path = build.root / sample_index.FILENAME
    if not path.is_file():
        report.add("sample_index", sample_index.FILENAME, "missing")
    else:
        # The file's digest is taken from the same blocks (no second read of the largest index).
        with _BackgroundDigest() as digest, open(path, "rb") as handle:
            while block := handle.read(_INDEX_BLOCK_BYTES):
                if not block.endswith(b"\n"):
                    block += handle.readline()  # whole lines only
                digest.update(block)
                scan.lines(block)
        listed = build.content["audit_files"][sample_index.FILENAME]
        _compare_digest(path, sample_index.FILENAME, listed, digest.hexdigest(), report, "files")
    return scan.finish()


class _BackgroundDigest:
    """SHA-256 fed on its own thread, in order, while the caller checks the same blocks.

    hashlib releases the GIL on large buffers, and so do numpy's whole-array checks, so on two
    cores the hash of a block overlaps with the checks of the next (one read serves both).
    """

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._pool = ThreadPoolExecutor(max_workers=1)  # one worker: blocks are hashed in order
        self._pending: list = []

    def __enter__(self) -> _BackgroundDigest:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)

    def update(self, data: bytes) -> None:
        """Queue ``data`` (immutable bytes) for hashing after the blocks queued before it."""
        self._pending = [f for f in self._pending if not f.done()]
        if len(self._pending) >= _BLOCKS_IN_FLIGHT:  # bound memory if hashing falls behind
            self._pending.pop(0).result()
        self._pending.append(self._pool.submit(self._digest.update, data))

    def hexdigest(self) -> str:
        """The digest of every block queued so far (waits for them)."""
        for future in self._pending:
            future.result()
        self._pending = []
        return self._digest.hexdigest()


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
        self.line_form = _LineForm(self.source_of, self.shard_of)
        self.columns: dict[str, list[np.ndarray]] = {
            key: [] for key in ("token_counts", "units", "files", "lines")
        }
        self.digests = bytearray()
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

    def lines(self, block: bytes) -> None:
        """Check a block of whole lines: vectorised when every line has the writer's exact form,
        else through orjson (the same columns, and every line that does not parse reported)."""
        fast = self.line_form.read(block)
        if fast is not None:
            self.block(*fast)
        else:
            rows = _parse_block(block, self.lines_seen, self.report)
            self.block(rows, _row_columns(rows, self.source_of, self.shard_of))

    def block(self, rows: Sequence[object], columns: _Columns) -> None:
        first = self.lines_seen
        self.lines_seen += len(rows)
        ids, ids_ok, counts, counts_ok, sizes, sizes_ok, lines, lines_ok = columns[:8]
        shard_rows, files, shards, digests, hashes_ok = columns[8:]
        units = np.minimum(np.searchsorted(self.sizes, sizes), self.sizes.size - 1)
        rules = {
            "unit_size is one of the build's units": sizes_ok & (self.sizes[units] == sizes),
            "token_count is an integer from 0 to unit_size": counts_ok
            & (counts >= 0)
            & (counts <= sizes),
            "source_file is an input of the manifest": files >= 0,
            "source_line is a line number (1 or more)": lines_ok & (lines >= 1),
            "hash is a SHA-256 hex digest": hashes_ok,
        }
        good = np.logical_and.reduce(list(rules.values()))
        for position in np.flatnonzero(~good)[:_SHOWN_PER_CHECK].tolist():
            broken = next(rule for rule, holds in rules.items() if not holds[position])
            self._fail("index_line", first + position, problem=f"expected: {broken}")
        expected_ids = np.arange(first, first + len(rows))
        for position in np.flatnonzero(~ids_ok | (ids != expected_ids))[:_SHOWN_PER_CHECK]:
            self._place(rows, first, int(position), "sample_id", int(expected_ids[position]))
        self._check_places(rows, first, good, units, counts, shards, shard_rows)
        counts[~good], units[~good] = 0, 0
        for key, column in zip(self.columns, (counts, units, files, lines), strict=True):
            self.columns[key].append(column)
        self.digests += digests

    def _check_places(
        self,
        rows: list[object],
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

    def _place(self, rows: list[object], first: int, position: int, key: str, want: object) -> None:
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
            key: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            for key, parts in self.columns.items()
        }
        return _Index(
            **joined,
            digests=bytes(self.digests),
            record_counts=self.record_counts,
            record_ids=self.record_ids,
        )


_Columns = tuple
"""ids, ids_ok, token counts, ok, unit sizes, ok, source lines, ok, shard rows, source file
numbers, shard numbers (-1 where unknown), digests, hashes_ok: the columns the index checks use."""


def _row_columns(
    rows: list[object], source_of: dict[str, int], shard_of: dict[str, int]
) -> _Columns:
    """The columns of rows parsed by orjson (any shape: what is not as expected reads as -1)."""
    columns = [_ints(rows, key) for key in ("sample_id", "token_count", "unit_size", "source_line")]
    return (
        *(part for column in columns for part in column),
        _ints(rows, "shard_row")[0],
        _lookup(rows, "source_file", source_of),
        _lookup(rows, "shard_path", shard_of),
        *_digests(rows),
    )


class _LazyRows(Sequence):
    """The rows of a block read by :class:`_LineForm`: a line is parsed only for a failure message."""

    def __init__(self, block: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        self._block, self._starts, self._ends = block, starts, ends

    def __len__(self) -> int:
        return self._starts.size

    def __getitem__(self, position: int) -> object:
        return orjson.loads(self._block[self._starts[position] : self._ends[position]])


class _LineForm:
    """Reads a block of sample_index lines straight from its bytes, with whole-column numpy
    operations, when every line has the exact form output/sample_index.py writes.

    Each line is pinned from both ends: the keys in their order (sample_index.KEYS), integers in
    canonical digits, a lower-case hex digest, a source file and a shard path spelled exactly as
    orjson spells one of the manifest's; only ``empty_fields`` between them is free, and each
    distinct value of it must be one JSON value. Such a line parses to exactly these columns, so
    the result equals orjson's. Any other block returns None and goes through orjson.
    """

    def __init__(self, source_of: dict[str, int], shard_of: dict[str, int]) -> None:
        self.sources = {orjson.dumps(path): number for path, number in source_of.items()}
        self.shards = {orjson.dumps(path): number for path, number in shard_of.items()}
        keys = [f'"{key}":'.encode() for key in sample_index.KEYS]
        # Every part matched at once is narrower than this (the digest, integers, paths, keys).
        self.widest = max(65, *(len(text) + 1 for text in [*self.sources, *self.shards]))
        self.keys = dict(
            zip(sample_index.KEYS, [b"{" + keys[0]] + [b"," + k for k in keys[1:]], strict=True)
        )

    def read(self, block: bytes) -> tuple[Sequence[object], _Columns] | None:
        if not block.endswith(b"\n"):
            return None
        data = np.frombuffer(block, dtype=np.uint8)
        ends = np.flatnonzero(data == ord("\n"))
        starts = np.r_[0, ends[:-1] + 1]
        padded = _Padded(data, self.widest)
        cut = _Cut(padded, starts.copy())
        keys = self.keys
        cut.literal(keys["sample_id"])
        ids = cut.integer()
        cut.literal(keys["hash"] + b'"')
        digests = cut.hex_digest()
        cut.literal(b'"' + keys["token_count"])
        counts = cut.integer()
        cut.literal(keys["unit_size"])
        sizes = cut.integer()
        cut.literal(keys["source_file"])
        files = cut.choice(self.sources)
        cut.literal(keys["source_line"])
        lines = cut.integer()
        cut.literal(keys["empty_fields"])
        free_from = cut.at
        # From the end of each line backwards: }, shard_row, the shard path.
        back = _Cut(padded, ends - 1)
        back.literal_before(b"}")
        shard_rows = back.integer_before()
        back.literal_before(keys["shard_row"])
        shards = back.choice_before(self.shards)
        back.literal_before(keys["shard_path"])
        free_to = back.at + 1
        if not (cut.ok.all() and back.ok.all() and (free_to > free_from).all()):
            return None
        for value in {
            block[a:b] for a, b in zip(free_from.tolist(), free_to.tolist(), strict=True)
        }:
            try:
                orjson.loads(value)
            except orjson.JSONDecodeError:
                return None
        every = np.ones(starts.size, dtype=bool)
        columns = (ids, every, counts, every, sizes, every, lines, every, shard_rows)
        return _LazyRows(block, starts, ends), (*columns, files, shards, digests, every)


class _Padded:
    """A block's bytes with a margin each side, read as rows of bytes at many positions at once."""

    def __init__(self, data: np.ndarray, margin: int) -> None:
        self.margin = margin
        self.padded = np.zeros(data.size + 2 * margin, dtype=np.uint8)
        self.padded[margin : margin + data.size] = data
        self.rows = np.lib.stride_tricks.sliding_window_view(self.padded, margin)
        self.limit = data.size

    def _index(self, at: np.ndarray) -> np.ndarray:
        # Clipped into the margins: a broken line may point outside the block; it fails anyway.
        return np.clip(at, -self.margin, self.limit) + self.margin

    def window(self, at: np.ndarray, width: int) -> np.ndarray:
        """The ``width`` bytes from each position (width up to the margin)."""
        return self.rows[self._index(at), :width]

    def equal(self, at: np.ndarray, text: bytes) -> np.ndarray:
        """Where the bytes from each position are ``text`` (one fixed-width compare per line)."""
        view = np.ndarray(
            shape=(self.padded.size - len(text) + 1,),
            dtype=f"S{len(text)}",
            buffer=self.padded,
            strides=(1,),
        )
        # An "S" compare ignores trailing NULs; no text ends in one, and the data's NULs differ.
        return view[self._index(at)] == text


class _Cut:
    """A position in each line of a block, moved over expected parts; ``ok`` where all matched."""

    _DIGITS = 18
    """Longest integer read: below 2**62 like the orjson path's, and beyond any real count."""

    def __init__(self, data: _Padded, at: np.ndarray) -> None:
        self.data, self.at = data, at
        self.ok = np.ones(at.size, dtype=bool)

    def _matches(self, at: np.ndarray, text: bytes) -> np.ndarray:
        return self.data.equal(at, text)

    def literal(self, text: bytes) -> None:
        self.ok &= self._matches(self.at, text)
        self.at = self.at + len(text)

    def literal_before(self, text: bytes) -> None:
        """``text`` ends at the position; move before it."""
        self.ok &= self._matches(self.at - len(text) + 1, text)
        self.at = self.at - len(text)

    def _number(self, start: np.ndarray, width: np.ndarray) -> np.ndarray:
        digits = self.data.window(start, self._DIGITS).astype(np.int64) - ord("0")
        # Canonical JSON integers: 1 to _DIGITS digits, no leading zero.
        self.ok &= (width >= 1) & (width <= self._DIGITS) & ((width == 1) | (digits[:, 0] != 0))
        value = np.zeros(start.size, dtype=np.int64)
        for place in range(min(self._DIGITS, int(width.max(initial=0)))):
            value = np.where(place < width, value * 10 + digits[:, place], value)
        return value

    def _is_digit(self, at: np.ndarray) -> np.ndarray:
        window = self.data.window(at, self._DIGITS + 1)
        return (window >= ord("0")) & (window <= ord("9"))

    def integer(self) -> np.ndarray:
        # The first non-digit of the window ends the run; a window of digits only fails (width 0).
        width = np.argmin(self._is_digit(self.at), axis=1)
        value = self._number(self.at, width)
        self.at = self.at + width
        return value

    def integer_before(self) -> np.ndarray:
        """The run of digits ending at the position; move before it."""
        width = np.argmin(self._is_digit(self.at - self._DIGITS)[:, ::-1], axis=1)
        value = self._number(self.at + 1 - width, width)
        self.at = self.at - width
        return value

    def hex_digest(self) -> bytes:
        text = self.data.window(self.at, 64).astype(np.int16)
        decimal = (text >= ord("0")) & (text <= ord("9"))
        self.ok &= (decimal | ((text >= ord("a")) & (text <= ord("f")))).all(axis=1)
        nibbles = np.where(decimal, text - ord("0"), text - ord("a") + 10).astype(np.uint8)
        self.at = self.at + 64
        return ((nibbles[:, 0::2] << 4) | nibbles[:, 1::2]).tobytes()

    def _choice(self, options: dict[bytes, int], before: bool) -> np.ndarray:
        found = np.full(self.at.size, -1, dtype=np.int64)
        width = np.zeros(self.at.size, dtype=np.int64)
        # A JSON string ends at its first unescaped quote: at most one option matches.
        for text, number in options.items():
            hit = self._matches(self.at - len(text) + 1 if before else self.at, text)
            found[hit], width[hit] = number, len(text)
        self.ok &= found >= 0
        self.at = self.at - width if before else self.at + width
        return found

    def choice(self, options: dict[bytes, int]) -> np.ndarray:
        """Which of ``options`` starts at the position (-1 for none); move past it."""
        return self._choice(options, before=False)

    def choice_before(self, options: dict[bytes, int]) -> np.ndarray:
        """Which of ``options`` ends at the position; move before it."""
        return self._choice(options, before=True)


def _ints(rows: list[object], key: str) -> tuple[np.ndarray, np.ndarray]:
    """A column of integers and where it holds one; anything else reads as -1."""
    try:
        array = np.array([row[key] for row in rows])
        if array.dtype.kind == "i":
            return array.astype(np.int64), np.ones(array.size, dtype=bool)
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    values = [row.get(key) if isinstance(row, dict) else None for row in rows]
    ok = np.array([type(v) is int and abs(v) < 1 << 62 for v in values], dtype=bool)
    return np.array([v if k else -1 for v, k in zip(values, ok, strict=True)], dtype=np.int64), ok


def _lookup(rows: list[object], key: str, table: dict[str, int]) -> np.ndarray:
    """A column of strings turned into their numbers in ``table``; anything else is -1."""
    try:
        return np.array([table[row[key]] for row in rows], dtype=np.int64)
    except (KeyError, TypeError):
        values = [row.get(key) if isinstance(row, dict) else None for row in rows]
        return np.array([table.get(v, -1) if isinstance(v, str) else -1 for v in values])


def _digests(rows: list[object]) -> tuple[bytes, np.ndarray]:
    """The 32-byte digests of the ``hash`` column (zeros where none) and where one is valid."""
    size = hashlib.sha256().digest_size
    try:
        joined = "".join([row["hash"] for row in rows])
        if len(joined) == 2 * size * len(rows):
            digests = bytes.fromhex(joined)
            if len(digests) == size * len(rows):
                return digests, np.ones(len(rows), dtype=bool)
    except (KeyError, TypeError, ValueError):
        pass
    parts, ok = [], []
    for row in rows:
        text = row.get("hash") if isinstance(row, dict) else None
        try:
            digest = bytes.fromhex(text) if isinstance(text, str) and len(text) == 2 * size else b""
        except ValueError:
            digest = b""
        ok.append(len(digest) == size)
        parts.append(digest if len(digest) == size else bytes(size))
    return b"".join(parts), np.array(ok, dtype=bool)


# ---------------------------------------------------------------------------
# Shards
# ---------------------------------------------------------------------------


def _check_shards(build: _Build, index: _Index, report: VerifyReport) -> dict[int, list[int]]:
    """Check each listed shard; return the UNK positions found, by sample id."""
    unks: dict[int, list[int]] = {}
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
        _check_shard(build, position, shard, index, unks, report)
    return unks


def _check_shard(
    build: _Build,
    position: int,
    shard: _Shard,
    index: _Index,
    unks: dict[int, list[int]],
    report: VerifyReport,
) -> None:
    path = build.root / shard.path
    if not path.is_file():
        report.add("shards", shard.path, "missing")
        return
    actual = path.stat().st_size
    if actual != shard.bytes:
        report.add("shards", shard.path, "size", actual=actual, listed=shard.bytes)
    width = shard.unit
    record_bytes = width * build.dtype.itemsize
    counts = index.record_counts[position]
    ids = index.record_ids[position]
    first_row = 0
    slots = np.arange(width)
    block_records = max(1, _READ_BYTES // record_bytes)
    with _BackgroundDigest() as digest, open(path, "rb") as handle:
        while data := handle.read(block_records * record_bytes):
            digest.update(data)
            whole = len(data) // record_bytes
            records = np.frombuffer(data, dtype=build.dtype, count=whole * width)
            records = records.reshape(whole, width)
            rows = slice(first_row, first_row + whole)
            _check_records(
                build,
                shard.path,
                records,
                (counts[rows], ids[rows]),
                first_row,
                slots,
                unks,
                report,
            )
            first_row += whole
    if digest.hexdigest() != shard.sha256:
        report.add("shards", shard.path, "sha256", actual=digest.hexdigest(), listed=shard.sha256)


def _check_records(
    build: _Build,
    path: str,
    records: np.ndarray,
    samples: tuple[np.ndarray, np.ndarray],
    first_row: int,
    slots: np.ndarray,
    unks: dict[int, list[int]],
    report: VerifyReport,
) -> None:
    """PAD after each record's tokens, ids inside the vocabulary, and where UNK ids are.

    ``samples``: the token count and sample id of each record, from the index.
    """
    counts, ids = samples
    known = counts.size
    records = records[:known]  # rows past the listed samples are a size failure already
    # A record no sample points at (count -1) is an index failure already: skip it here.
    tail = (slots >= counts[:, None]) & (counts >= 0)[:, None]
    # any() first: argwhere over a whole block costs more than the hash when all is well.
    bad = (records != build.pad_id) & tail
    if bad.any():
        _slot_failures(
            report, "padding", path, records, bad, samples, first_row, pad_id=build.pad_id
        )
    if records.size and int(records.max()) >= build.vocab_size:
        outside = records >= build.vocab_size
        _slot_failures(
            report, "vocabulary", path, records, outside, samples, first_row, vocab=build.vocab_size
        )
    if build.unk_id is None:  # the UNK tier is off
        return
    # UNK ids are rare: find them in one flat pass, then keep those inside their record's
    # tokens (not in the PAD tail; a record no sample points at keeps all).
    rows, slots_hit = np.divmod(np.flatnonzero(records == build.unk_id), records.shape[1])
    listed = counts[rows]
    hits = (slots_hit < listed) | (listed < 0)
    if build.eos_is_unk:
        # The appended EOS is not field text, unless truncation cut it off the record.
        hits &= ~((slots_hit == listed - 1) & ~np.isin(ids[rows], build.truncated))
    rows, slots_hit = rows[hits], slots_hit[hits]
    if rows.size:
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        for row, positions in zip(
            rows[starts].tolist(), np.split(slots_hit, starts[1:]), strict=True
        ):
            unks[int(ids[row])] = positions.tolist()


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
        _check_digest(path, relative, entry.bytes, entry.sha256, report, "unit_index")
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
        _check_digest(build.root / relative, relative, entry.bytes, entry.sha256, report, "spans")
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


def _check_digest(
    path: Path, relative: str, size: int, sha256: str, report: VerifyReport, check: str
) -> None:
    listed = {"bytes": size, "sha256": sha256}
    _compare_digest(path, relative, listed, durable.file_sha256(path), report, check)


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
        leftover = name == staging.DIRNAME and entry.is_dir()
        report.add("files", name, "staging" if leftover else "unlisted")


def _check_audit_digests(build: _Build, report: VerifyReport) -> None:
    for name in AUDIT_FILES:
        if name == sample_index.FILENAME and (build.root / name).is_file():
            continue  # hashed while the index was parsed
        path = build.root / name
        listed = build.content["audit_files"][name]
        if not path.is_file():
            report.add("files", name, "missing")
            continue
        _check_digest(path, name, listed["bytes"], listed["sha256"], report, "files")


# ---------------------------------------------------------------------------
# stats.json, histogram.json, duplicate_index.jsonl, unk_index.jsonl
# ---------------------------------------------------------------------------


def _check_stats(
    build: _Build, index: _Index, unks: dict[int, list[int]], report: VerifyReport
) -> list[list[int]]:
    """Recount stats.json from the index and shards; return the duplicate groups."""
    tracker = DuplicateTracker()
    tracker.add(bytes(index.digests))
    groups = tracker.groups()
    actual = _read_json(build.root / stats.FILENAME, report, "stats")
    if actual is None:
        return groups
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
    return groups


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


def _check_duplicate_index(
    build: _Build, index: _Index, groups: list[list[int]], report: VerifyReport
) -> None:
    expected = [
        {
            "hash": bytes(index.digests[ids[0] * 32 : ids[0] * 32 + 32]).hex(),
            "count": len(ids),
            "samples": [
                {
                    "sample_id": i,
                    "source_file": build.sources[index.files[i]],
                    "source_line": int(index.lines[i]),
                }
                for i in ids
            ],
        }
        for ids in groups
    ]
    _compare_lines(build.root, duplicate_index.FILENAME, expected, report, "duplicate_index")


def _check_unk_index(
    build: _Build, index: _Index, unks: dict[int, list[int]], report: VerifyReport
) -> None:
    expected = [
        {
            "sample_id": i,
            "hash": bytes(index.digests[i * 32 : i * 32 + 32]).hex(),
            "source_file": build.sources[index.files[i]],
            "source_line": int(index.lines[i]),
            "unk_count": len(unks[i]),
            "unk_positions": unks[i],
        }
        for i in sorted(unks)
    ]
    _compare_lines(build.root, unk_index.FILENAME, expected, report, "unk_index")


def _compare_lines(
    root: Path, name: str, expected: list[dict], report: VerifyReport, check: str
) -> None:
    """Each line of an index file must be exactly the compact JSON of its expected row."""
    path = root / name
    if not path.is_file():
        return  # reported by the digest check
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, (line, want) in enumerate(zip(lines, expected, strict=False), start=1):
        wanted = orjson.dumps(want)
        if line != wanted:
            report.add(
                check,
                name,
                "index_file_line",
                line=number,
                actual=line.decode("utf-8", "replace"),
                expected=wanted.decode(),
            )
    if len(lines) != len(expected):
        report.add(check, name, "index_file_count", actual=len(lines), expected=len(expected))

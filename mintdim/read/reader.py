"""Reading a finished unit-build directory back: manifest, samples as a sequence, each unit's records.

The reader uses the same file names and dtype rule as the writers, and refuses a directory that
is not a finished build (no manifest, an unknown format version, or a listed shard that is
missing, not a whole number of records, or of another size than the manifest lists: one
``stat`` per shard). Tokens are never copied: shards are memory-mapped and ``build[i]`` is a
view into them. Sample ids, units and token counts come from the binary unit indexes
(build/formats/unit_index.py), so nothing here parses JSONL unless asked for ``samples()``::

    build = open_build("./artifacts/instruction_units")
    len(build)                      # number of samples
    build[0]                        # sample 0's exact tokens (numpy view, no PAD)
    build[10:20]                    # samples 10 to 19: a list of such views
    build.units                     # {unit_size: sample count}
    build.segments(0)               # [("literal", 0, 5), ("instruction", 5, 40), ...] if stored
    build.packed                    # True for units(pack=True): several samples per row
    build.row_samples(512, 3)       # a packed unit's row 3: its (sample_id, start, length)
    for batch in build.loader(tokens_per_batch=16384):   # see read/loader.py
        ...
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import orjson

from mintdim.build.formats import boundaries, manifest, sample_index, spans, unit_index
from mintdim.build.formats.layout import UNIT_BUILD_FAILED
from mintdim.build.formats.shards import shard_path, spans_path
from mintdim.build.segments import segment_names
from mintdim.errors import BuildReadError, LoaderOptionError, NoSegmentSpansError, NotABuildError
from mintdim.options import is_int, is_path
from mintdim.read.loader import RowColumns, UnitLoader, new_loader
from mintdim.read.rows import RowRuns

__all__ = ["UnitBuild", "loader", "open_build", "require_build"]


class UnitBuild:
    """A finished output directory, opened read-only; a sequence of its samples' tokens
    (``len``, ``build[i]``, ``build[i:j]``, iteration)."""

    def __init__(self, path: Path, content: dict) -> None:
        self.path = path
        self.manifest = content
        storage = content["token_storage"]
        self.dtype = np.dtype(storage["dtype"]).newbyteorder("<")
        self.pad_id: int = content["tokenizer"]["pad_id"]
        self.samples_per_shard: int = content["output"]["samples_per_shard"]
        counts = {entry["unit_size"]: entry["samples"] for entry in content["unit_indexes"]}
        self.units: dict[int, int] = {
            size: counts.get(size, 0) for size in content["units"]["sizes"]
        }
        """Each declared unit size (ascending) with its number of samples."""
        self.packed: bool = "pack" in content["units"]
        """Several whole samples per row (``units(pack=True)``, build/formats/boundaries.py)."""
        self._open_state()

    def _open_state(self) -> None:
        # Memory maps and lookup tables are opened on first use and never pickled: a copy sent
        # to a worker process maps the files itself instead of carrying their bytes.
        self._shards: dict[str, np.ndarray] = {}
        self._indexes: dict[int, np.ndarray] = {}
        self._columns: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._places: tuple[np.ndarray, np.ndarray] | None = None
        self._bounds: dict[int, boundaries.Boundaries] = {}
        self._rows: dict[int, RowColumns] = {}
        self._runs: dict[int, RowRuns] = {}

    def __getstate__(self) -> dict:
        return {"path": self.path, "content": self.manifest}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"], state["content"])

    def __len__(self) -> int:
        return sum(self.units.values())

    @overload
    def __getitem__(self, sample_id: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, sample_id: slice) -> list[np.ndarray]: ...

    def __getitem__(self, sample_id: int | slice) -> np.ndarray | list[np.ndarray]:
        """The exact tokens of one sample (no PAD): a read-only view into its shard.

        A slice gives a list of those views, one per sample in the slice's order (samples differ
        in length, so they make no single array).
        """
        count = len(self)
        if isinstance(sample_id, slice):
            return [self[i] for i in range(count)[sample_id]]
        if not is_int(sample_id):
            raise TypeError(f"sample ids are integers or slices, got {type(sample_id).__name__}")
        index = int(sample_id) + count if sample_id < 0 else int(sample_id)
        if not 0 <= index < count:
            raise IndexError(f"sample id {sample_id} out of range for {count} samples")
        units, positions = self._sample_places()
        size = list(self.units)[units[index]]
        position = int(positions[index])
        if self.packed:
            row, start, length = self._packed_place(size, position)
            return self.unit_record(size, row)[start : start + length]
        length = int(self.unit_index(size)["token_count"][position])
        return self.unit_record(size, position)[:length]

    def _packed_place(self, unit_size: int, entry: int) -> tuple[int, int, int]:
        """Entry ``entry`` of a packed unit's boundary index: its row, start and length."""
        bounds = self.boundaries(unit_size)
        row = int(np.searchsorted(bounds.offsets, entry, side="right")) - 1
        found = bounds.entries[entry]
        return row, int(found["start"]), int(found["length"])

    def boundaries(self, unit_size: int) -> boundaries.Boundaries:
        """A packed unit's boundary index (row offsets, then each row's samples), memory-mapped."""
        if unit_size not in self._bounds:
            if not self.units.get(unit_size):
                empty = np.empty(0, dtype=boundaries.ENTRY)
                self._bounds[unit_size] = boundaries.Boundaries(np.zeros(1, np.int64), empty)
            else:
                for relative in (boundaries.offsets_path, boundaries.samples_path):
                    self._size(self.path / relative(unit_size))
                try:
                    self._bounds[unit_size] = boundaries.load(self.path, unit_size)
                except (ValueError, OSError) as err:
                    path = self.path / boundaries.offsets_path(unit_size)
                    raise _read_error(self.path, path, "boundaries", detail=str(err)) from err
        return self._bounds[unit_size]

    def row_samples(self, unit_size: int, row: int) -> np.ndarray:
        """A packed unit's row ``row``: its samples' ``(sample_id, start, length)`` in order."""
        bounds = self.boundaries(unit_size)
        return bounds.entries[int(bounds.offsets[row]) : int(bounds.offsets[row + 1])]

    def records(self) -> dict[int, int]:
        """Each unit size with its records: rows when packed, else samples."""
        if not self.packed:
            return dict(self.units)
        return {size: self.boundaries(size).rows for size in self.units}

    def row_runs(self, unit_size: int) -> RowRuns:
        """A packed unit's runs (each sample, each row's PAD), row by row (cached): the loader
        slices a batch's from them."""
        if unit_size not in self._runs:
            rows = self.row_columns(unit_size)
            segments = rows.entries.copy()
            segments[:, 0] = np.repeat(np.arange(rows.fill.size), np.diff(rows.offsets))
            self._runs[unit_size] = RowRuns(segments, rows.fill, unit_size)
        return self._runs[unit_size]

    def row_columns(self, unit_size: int) -> RowColumns:
        """A packed unit's boundary index as plain int64 arrays, and each row's fill (cached)."""
        if unit_size not in self._rows:
            bounds = self.boundaries(unit_size)
            table = np.zeros((bounds.entries.size, 4), dtype=np.int64)
            for column, key in enumerate(("start", "length", "sample_id"), start=1):
                table[:, column] = bounds.entries[key]
            offsets = np.array(bounds.offsets, dtype=np.int64)
            self._rows[unit_size] = RowColumns(offsets, table, bounds.fill())
        return self._rows[unit_size]

    def segments(self, sample_id: int) -> list[tuple[str, int, int]]:
        """A sample's segments in order as ``(name, start, stop)`` token positions, covering
        ``[0, token_count)``: fields by field name, literals as ``"literal"``, the appended EOS as
        ``"eos"`` (kinds and literal texts: manifest ``source.sequence_templates``). Needs a
        build whose tokenizer set ``encode`` (spans file format: build/formats/spans.py)."""
        layout = self.manifest.get("segment_spans", {})
        if not layout.get("stored"):
            raise NoSegmentSpansError(directory=str(self.path))
        self[sample_id]  # the same id checks as the tokens
        units, positions = self._sample_places()
        size = list(self.units)[units[sample_id]]
        entry = int(positions[sample_id])
        if self.packed:  # one span record per sample, row after row, in each shard
            row = self._packed_place(size, entry)[0]
            shard = row // self.samples_per_shard
            entry -= int(self.boundaries(size).offsets[shard * self.samples_per_shard])
        else:
            shard, entry = divmod(entry, self.samples_per_shard)
        record = self.shard_spans(size, shard)[entry]
        names = self.sequence_names()[int(record[0])]
        stops = record[1 : 1 + len(names)].tolist()
        return list(zip(names, [0, *stops[:-1]], stops, strict=True))

    def sequence_names(self) -> list[list[str]] | None:
        """Per input file, its segments' names in order; None when the build stores no spans."""
        if not self.manifest.get("segment_spans", {}).get("stored"):
            return None
        return [segment_names(entry) for entry in self.manifest["source"]["sequence_templates"]]

    def shard_spans(self, unit_size: int, number: int) -> np.ndarray:
        """Shard ``number``'s span records, ``[records, 1 + span_width]`` int32 (build/formats/spans.py)."""
        relative = spans_path(unit_size, number)
        if relative not in self._shards:
            self._size(self.path / relative)  # a missing file is a damaged build: BuildReadError
            data = np.memmap(self.path / relative, dtype=spans.DTYPE, mode="r")
            width = self.manifest["segment_spans"]["record_width"]
            self._shards[relative] = spans.read_records(np.asarray(data), width)
        return self._shards[relative]

    def unit_index(self, unit_size: int) -> np.ndarray:
        """One unit's entries (``sample_id``, ``token_count``) in record order; empty if none."""
        if unit_size not in self._indexes:
            if self.units[unit_size]:
                path = self.path / unit_index.index_path(unit_size)
                self._size(path)
                try:
                    entries = unit_index.load(path)
                except (ValueError, OSError) as err:
                    raise _read_error(self.path, path, "unit_index", detail=str(err)) from err
            else:
                entries = np.empty(0, dtype=unit_index.DTYPE)
            self._indexes[unit_size] = entries
        return self._indexes[unit_size]

    def unit_record(self, unit_size: int, position: int) -> np.ndarray:
        """Record ``position`` of a unit (tokens then PAD), a view into its shard."""
        shard, row = divmod(position, self.samples_per_shard)
        return self.shard(unit_size, shard)[row]

    def unit_columns(self, unit_size: int) -> tuple[np.ndarray, np.ndarray]:
        """A unit's sample ids and token counts in record order, as int64 arrays (cached)."""
        if unit_size not in self._columns:
            entries = self.unit_index(unit_size)
            # Plain contiguous copies, not np.memmap views: every batch the loader reads indexes
            # them.
            self._columns[unit_size] = (
                np.array(entries["sample_id"], dtype=np.int64),
                np.array(entries["token_count"], dtype=np.int64),
            )
        return self._columns[unit_size]

    def shard(self, unit_size: int, number: int) -> np.ndarray:
        """Shard ``number`` of a unit as a read-only [records, unit_size] array over its file."""
        return self._shard(shard_path(unit_size, number), unit_size)

    def _sample_places(self) -> tuple[np.ndarray, np.ndarray]:
        """Per sample id: the index of its unit in ``units`` and its record position there (a
        packed unit: its entry in the boundary index)."""
        if self._places is None:
            count = len(self)
            units = np.empty(count, dtype=np.int16)
            positions = np.empty(count, dtype=np.int64)
            for number, size in enumerate(self.units):
                if self.packed:
                    ids = self.boundaries(size).entries["sample_id"]
                else:
                    ids = self.unit_index(size)["sample_id"]
                units[ids] = number
                positions[ids] = np.arange(ids.size)
            self._places = units, positions
        return self._places

    def samples(self) -> Iterator[dict]:
        """Every sample_index.jsonl row, in sample_id order."""
        with open(self.path / sample_index.FILENAME, "rb") as handle:
            for line in handle:
                yield orjson.loads(line)

    def record(self, row: dict) -> np.ndarray:
        """The whole fixed-width record of a sample: tokens, then PAD up to unit_size (a packed
        build's: the row holding it)."""
        width = row["unit_size"]
        shard = self._shard(row["shard_path"], width)
        return shard[row["shard_row"]]

    def tokens(self, row: dict) -> np.ndarray:
        """A sample's tokens without padding (a packed build's: from ``row_start`` in its row)."""
        start = row.get(sample_index.ROW_START, 0)
        return self.record(row)[start : start + row["token_count"]]

    def loader(self, **options: object) -> UnitLoader:
        """Unit-homogeneous training batches over this build: the options of :func:`loader`."""
        return new_loader([self], **options)

    def _size(self, path: Path) -> int:
        """A listed file's size; a missing one is a damaged build, not a bare OSError."""
        try:
            return path.stat().st_size
        except FileNotFoundError as err:
            raise _read_error(self.path, path, "missing_file") from err

    def _check_shard(self, relative: str, width: int, listed: int | None = None) -> int:
        """A shard's size, which must be a whole number of records (and ``listed``, if given)."""
        path = self.path / relative
        size = self._size(path)
        record_bytes = width * self.dtype.itemsize
        if size % record_bytes:
            raise _read_error(self.path, path, "short_shard", size=size, record_bytes=record_bytes)
        if listed is not None and size != listed:
            raise _read_error(self.path, path, "shard_size", size=size, listed=listed)
        return size

    def _shard(self, relative: str, width: int) -> np.ndarray:
        if relative not in self._shards:
            path = self.path / relative
            # Checked again: the file may have changed since open_build.
            size = self._check_shard(relative, width)
            record_bytes = width * self.dtype.itemsize
            mapped = np.memmap(
                path, dtype=self.dtype, mode="r", shape=(size // record_bytes, width)
            )
            # A plain ndarray over the map: slices and gathers come out as ordinary arrays.
            self._shards[relative] = np.asarray(mapped)
        return self._shards[relative]


# The options, their documentation and the signature are new_loader's; this adds paths as builds.
@functools.wraps(new_loader)
def loader(builds: Sequence[UnitBuild | str | Path], **options: object) -> UnitLoader:
    if is_path(builds) or isinstance(builds, UnitBuild) or not isinstance(builds, Iterable):
        raise LoaderOptionError(option="builds", value=builds, problem="builds")
    return new_loader([b if isinstance(b, UnitBuild) else open_build(b) for b in builds], **options)


def open_build(path: str | Path) -> UnitBuild:
    """Open a finished build; anything else raises a named error that says which file and why.

    ``NotABuildError`` when the directory holds no finished build (missing, a file, a failed
    build, no manifest) or ``path`` is no path (a str or os.PathLike); ``BuildReadError`` when the manifest is damaged or of another format
    version, when a shard it lists is missing, not a whole number of records or of another size
    than listed, or when a unit index turns out missing or damaged on first use.
    """
    root = require_build(path)
    manifest_path = root / manifest.FILENAME
    content = _read_manifest(root, manifest_path)
    try:
        build = UnitBuild(root, content)
        listed = [
            (entry["path"], entry["unit_size"], entry["bytes"]) for entry in content["shards"]
        ]
    except (KeyError, TypeError) as err:
        raise _read_error(root, manifest_path, "manifest_field", detail=str(err)) from err
    for relative, width, size in listed:
        build._check_shard(relative, width, size)
    return build


def require_build(directory: str | Path) -> Path:
    """The build's path; ``NotABuildError`` (saying why) when no finished build is there."""
    if not is_path(directory):
        kind = type(directory).__name__
        raise NotABuildError(directory=repr(directory), reason="not_a_path", kind=kind)
    root = Path(directory)
    if not (root / manifest.FILENAME).is_file():
        raise NotABuildError(directory=str(directory), reason=_not_a_build_reason(root))
    return root


def _not_a_build_reason(root: Path) -> str:
    if not root.exists():
        return "missing"
    if not root.is_dir():
        return "not_directory"
    if any(root.glob(f"*/{UNIT_BUILD_FAILED}")):
        return "failed"
    return "no_manifest"


def _read_manifest(root: Path, manifest_path: Path) -> dict:
    try:
        content = orjson.loads(manifest_path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise _read_error(root, manifest_path, "manifest_json", detail=str(err)) from err
    if not isinstance(content, dict):
        detail = type(content).__name__
        raise _read_error(root, manifest_path, "manifest_json", detail=detail)
    if content.get("format_version") != manifest.FORMAT_VERSION:
        version = repr(content.get("format_version"))
        raise _read_error(
            root, manifest_path, "version", detail=version, known=manifest.FORMAT_VERSION
        )
    if content.get("status") != "complete":
        raise _read_error(root, manifest_path, "status", detail=repr(content.get("status")))
    return content


def _read_error(root: Path, path: Path, problem: str, **facts: object) -> BuildReadError:
    return BuildReadError(directory=str(root), path=str(path), problem=problem, **facts)

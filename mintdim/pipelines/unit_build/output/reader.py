"""Reading a finished unit-build directory back: manifest, sample index, and each sample's tokens.

The reader uses the same file names and dtype rule as the writers, and refuses a directory that
is not a finished build (no manifest, an unknown format version, or a shard whose size is not a
whole number of records). Tests read every build through it, and so can training code::

    build = open_build("./artifacts/instruction_units")
    for row in build.samples():
        tokens = build.tokens(row)          # numpy array of exactly row["token_count"] ids
        spans = build.segments(row["sample_id"])  # [("instruction", 0, 12), ...] if stored
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import orjson

from mintdim.pipelines.unit_build.output import manifest, sample_index, spans
from mintdim.pipelines.unit_build.segments import segment_names

__all__ = ["UnitBuild", "open_build"]


class UnitBuild:
    """A finished output directory, opened read-only."""

    def __init__(self, path: Path, content: dict) -> None:
        self.path = path
        self.manifest = content
        storage = content["token_storage"]
        self.dtype = np.dtype(storage["dtype"]).newbyteorder("<")
        self.pad_id: int = content["tokenizer"]["pad_id"]
        self._shards: dict[str, np.memmap] = {}
        self._rows: list[dict] | None = None

    def segments(self, sample_id: int) -> list[tuple[str, int, int]]:
        """A sample's segments in order as ``(name, start, stop)`` token positions, covering
        ``[0, token_count)``: field segments by field name, literals as ``"literal"``, the
        appended EOS as ``"eos"`` (kinds and literal texts: manifest ``sequence_templates``).
        Needs a build whose tokenizer set ``encode``."""
        if not self.manifest.get("segment_spans", {}).get("stored"):
            raise ValueError(
                f"{self.path}: this build stores no segment spans; build it with the tokenizer "
                'key encode: "whole" or "segments"'
            )
        row = self._row(sample_id)
        width = self.manifest["segment_spans"]["record_width"]
        relative = row["shard_path"].removesuffix(".bin") + spans.SUFFIX
        record = self._spans(relative, width)[row["shard_row"]]
        names = segment_names(self.manifest["source"]["sequence_templates"][int(record[0])])
        stops = record[1 : 1 + len(names)].tolist()
        return [
            (name, start, stop)
            for name, start, stop in zip(names, [0, *stops[:-1]], stops, strict=True)
        ]

    def _row(self, sample_id: int) -> dict:
        if self._rows is None:
            self._rows = list(self.samples())
        return self._rows[sample_id]

    def _spans(self, relative: str, width: int) -> np.ndarray:
        if relative not in self._shards:
            data = np.memmap(self.path / relative, dtype=spans.DTYPE, mode="r")
            self._shards[relative] = spans.read_records(data, width)
        return self._shards[relative]

    def samples(self) -> Iterator[dict]:
        """Every sample_index.jsonl row, in sample_id order."""
        with open(self.path / sample_index.FILENAME, "rb") as handle:
            for line in handle:
                yield orjson.loads(line)

    def record(self, row: dict) -> np.ndarray:
        """The whole fixed-width record of a sample: tokens, then PAD up to unit_size."""
        width = row["unit_size"]
        shard = self._shard(row["shard_path"], width)
        return np.asarray(shard[row["shard_row"]])

    def tokens(self, row: dict) -> np.ndarray:
        """A sample's tokens without padding."""
        return self.record(row)[: row["token_count"]]

    def _shard(self, relative: str, width: int) -> np.ndarray:
        if relative not in self._shards:
            path = self.path / relative
            size = path.stat().st_size
            record_bytes = width * self.dtype.itemsize
            if size % record_bytes:
                raise ValueError(
                    f"{path}: {size} bytes is not a whole number of {record_bytes}-byte records"
                )
            self._shards[relative] = np.memmap(
                path, dtype=self.dtype, mode="r", shape=(size // record_bytes, width)
            )
        return self._shards[relative]


def open_build(path: str | Path) -> UnitBuild:
    """Open a finished build; a directory without a complete manifest is refused."""
    root = Path(path)
    manifest_path = root / manifest.FILENAME
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{manifest_path}: no manifest, so this is not a finished build")
    content = orjson.loads(manifest_path.read_bytes())
    if (
        content.get("status") != "complete"
        or content.get("format_version") != manifest.FORMAT_VERSION
    ):
        raise ValueError(
            f"{manifest_path}: status {content.get('status')!r}, format_version "
            f"{content.get('format_version')!r}; this reader knows complete builds of version "
            f"{manifest.FORMAT_VERSION}"
        )
    return UnitBuild(root, content)

"""The data side of ``mintdim inspect``: what a finished build holds (its totals, a table and a bar
chart of its units) and one sample (source, place, segments, ids, decoded text), read from the
build's own files, as the lines the command prints. cli/inspect.py is the command around it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import orjson

from mintdim.build.contracts import TokenizerSpec
from mintdim.build.formats import sample_index, stats
from mintdim.build.tokenizer import load_encoder
from mintdim.errors import MintDimError
from mintdim.paths import resolve
from mintdim.read.reader import UnitBuild
from mintdim.shared.human import human_bytes
from mintdim.shared.lang import Bilingual

__all__ = ["sample", "summary"]

_BAR_WIDTH = 40
_SHOWN_IDS = 32

_T = {
    "title": Bilingual("build {directory}", "bản build {directory}"),
    "tokenizer": Bilingual(
        "tokenizer    {kind} {path} (vocabulary {vocab}, PAD {pad}, UNK {unk}, {dtype})",
        "tokenizer    {kind} {path} (từ vựng {vocab}, PAD {pad}, UNK {unk}, {dtype})",
    ),
    "inputs": Bilingual("inputs       {files}", "đầu vào      {files}"),
    "samples": Bilingual(
        "samples      {samples:,} ({tokens:,} tokens in {slots:,} slots, padding {ratio:.2%})",
        "mẫu          {samples:,} ({tokens:,} token trong {slots:,} ô, padding {ratio:.2%})",
    ),
    "shards": Bilingual(
        "shards       {shards:,} ({size}), {per_shard:,} samples per shard",
        "shard        {shards:,} ({size}), {per_shard:,} mẫu mỗi shard",
    ),
    "audit": Bilingual(
        "audit        {groups:,} duplicate groups ({duplicates:,} samples), {unk:,} samples with "
        "UNK, {blank:,} blank lines skipped",
        "kiểm tra     {groups:,} nhóm trùng lặp ({duplicates:,} mẫu), {unk:,} mẫu có UNK, "
        "bỏ qua {blank:,} dòng trống",
    ),
    "header": Bilingual(
        "unit | samples | tokens | padding | shards | bytes",
        "unit | mẫu | token | padding | shard | byte",
    ),
    "chart": Bilingual("samples per unit", "số mẫu theo unit"),
    "sample": Bilingual("sample {sample_id}", "mẫu {sample_id}"),
    "source": Bilingual("source       {file}:{line}", "nguồn        {file}:{line}"),
    "source_row": Bilingual("source       {file}, row {line}", "nguồn        {file}, hàng {line}"),
    "place": Bilingual(
        "place        {shard} row {row} (unit {unit}: {count} tokens, {pad} PAD)",
        "vị trí       {shard} dòng {row} (unit {unit}: {count} token, {pad} PAD)",
    ),
    "hash": Bilingual("sha256       {hash}", "sha256       {hash}"),
    "ids": Bilingual("token ids    {ids}", "token id     {ids}"),
    "more_ids": Bilingual("... ({more} more)", "... (thêm {more})"),
    "segments": Bilingual("segments", "các đoạn"),
    "segment": Bilingual(
        "  {name}: tokens {start} to {stop}", "  {name}: token {start} đến {stop}"
    ),
    "text": Bilingual("decoded text", "văn bản giải mã"),
    "no_tokenizer": Bilingual(
        "(no decoded text: {reason})",
        "(không có văn bản giải mã: {reason})",
    ),
    "tokenizer_missing": Bilingual("{path} not found from {cwd}", "không tìm thấy {path} từ {cwd}"),
}


def summary(directory: str, build: UnitBuild) -> Iterator[str]:
    """The lines of ``mintdim inspect DIR``: totals, a table and a bar chart of the units."""
    content = build.manifest
    totals = orjson.loads((build.path / stats.FILENAME).read_bytes())
    tokenizer = content["tokenizer"]
    yield _T["title"].render(directory=directory)
    yield _T["tokenizer"].render(
        kind=tokenizer["type"],
        path=tokenizer["path"],
        vocab=tokenizer["vocab_size"],
        pad=tokenizer["pad_id"],
        unk=tokenizer["unk_id"],
        dtype=content["token_storage"]["dtype"],
    )
    yield _T["inputs"].render(files=", ".join(content["source"]["files"]))
    yield _T["samples"].render(
        samples=totals["total_samples"],
        tokens=totals["total_tokens"],
        slots=totals["total_slots"],
        ratio=totals["padding_ratio"],
    )
    yield _T["shards"].render(
        shards=totals["shard_count"],
        size=human_bytes(totals["shard_bytes"]),
        per_shard=build.samples_per_shard,
    )
    yield _T["audit"].render(
        groups=totals["duplicate_groups"],
        duplicates=totals["duplicate_samples"],
        unk=totals["samples_with_unk"],
        blank=totals["blank_lines"],
    )
    rows = _unit_rows(build)
    yield ""
    yield _table(_T["header"].render().split(" | "), rows)
    yield ""
    yield _T["chart"].render()
    yield _chart({row[0]: int(row[1].replace(",", "")) for row in rows})


def _unit_rows(build: UnitBuild) -> list[list[str]]:
    """Per unit: size, samples, tokens, padding (ratio), shards, bytes."""
    shards: dict[int, list[dict]] = {}
    for entry in build.manifest["shards"]:
        shards.setdefault(entry["unit_size"], []).append(entry)
    rows = []
    for size, samples in build.units.items():
        _, counts = build.unit_columns(size)
        tokens = int(counts.sum())
        slots = samples * size
        pad = slots - tokens
        rows.append(
            [
                str(size),
                f"{samples:,}",
                f"{tokens:,}",
                f"{pad:,} ({pad / slots:.1%})" if slots else "0",
                str(len(shards.get(size, []))),
                human_bytes(sum(entry["bytes"] for entry in shards.get(size, []))),
            ]
        )
    return rows


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * width for width in widths], *rows]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True))
        for line in lines
    )


def _chart(counts: dict[str, int]) -> str:
    """One bar per unit, scaled to the largest; a unit with samples always shows a mark."""
    largest = max(counts.values(), default=0) or 1
    label = max(len(name) for name in counts)
    lines = []
    for name, count in counts.items():
        length = count * _BAR_WIDTH / largest
        bar = "█" * int(length) or ("▏" if count else "")
        lines.append(f"{name.rjust(label)} │{bar} {count:,}")
    return "\n".join(lines)


def sample(build: UnitBuild, sample_id: int) -> Iterator[str]:
    """The lines of ``mintdim inspect DIR --sample ID`` for a sample of the build (0 to
    ``len(build) - 1``): its source, place, hash, segments, ids and decoded text."""
    with open(build.path / sample_index.FILENAME, "rb") as handle:
        row = orjson.loads(next(itertools.islice(handle, sample_id, None)))
    tokens = build.tokens(row).tolist()
    yield _T["sample"].render(sample_id=sample_id)
    source = build.manifest["source"]
    listed = dict(zip(source["files"], source["inputs"], strict=True)).get(row["source_file"], {})
    # A Parquet input's records are rows: "row 13", never "d.parquet:13" (a line).
    text = _T["source_row" if listed.get("format") == "parquet" else "source"]
    yield text.render(file=row["source_file"], line=row["source_line"])
    yield _T["place"].render(
        shard=row["shard_path"],
        row=row["shard_row"],
        unit=row["unit_size"],
        count=row["token_count"],
        pad=row["unit_size"] - row["token_count"],
    )
    yield _T["hash"].render(hash=row["hash"])
    if build.sequence_names() is not None:
        yield _T["segments"].render()
        for name, start, stop in build.segments(sample_id):
            yield _T["segment"].render(name=name, start=start, stop=stop)
    shown = " ".join(map(str, tokens[:_SHOWN_IDS]))
    if len(tokens) > _SHOWN_IDS:
        shown += " " + _T["more_ids"].render(more=len(tokens) - _SHOWN_IDS)
    yield _T["ids"].render(ids=shown)
    yield ""
    yield _T["text"].render() + ":"
    yield _decoded(build, tokens)


def _decoded(build: UnitBuild, tokens: list[int]) -> str:
    tokenizer = build.manifest["tokenizer"]
    path = tokenizer["path"]
    spec = TokenizerSpec(
        kind=tokenizer["type"], path=path, abs_path=str(resolve(path, "manifest tokenizer.path"))
    )
    if not Path(spec.abs_path).is_file():
        missing = _T["tokenizer_missing"].render(path=path, cwd=Path.cwd())
        return _T["no_tokenizer"].render(reason=missing)
    try:
        return load_encoder(spec).decode(tokens)
    except MintDimError as err:
        return _T["no_tokenizer"].render(reason=str(err).splitlines()[0])

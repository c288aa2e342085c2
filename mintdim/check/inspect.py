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
from mintdim.build.formats.shards import shard_path
from mintdim.build.tokenizer import load_encoder
from mintdim.errors import MintDimError
from mintdim.paths import resolve
from mintdim.read.reader import UnitBuild
from mintdim.shared.human import human_bytes
from mintdim.shared.lang import Bilingual

__all__ = ["packed_row", "sample", "summary"]

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
    "packed_shards": Bilingual(
        "shards       {shards:,} ({size}), {per_shard:,} rows per shard",
        "shard        {shards:,} ({size}), {per_shard:,} hàng mỗi shard",
    ),
    "audit": Bilingual(
        "audit        {groups:,} duplicate groups ({duplicates:,} samples), {unk:,} samples with "
        "UNK, {blank:,} blank lines skipped",
        "kiểm tra     {groups:,} nhóm trùng lặp ({duplicates:,} mẫu), {unk:,} mẫu có UNK, "
        "bỏ qua {blank:,} dòng trống",
    ),
    "packed": Bilingual(
        "packed       {rows:,} rows, the fewest any packing could use: {bound:,} ({algorithm})",
        "packed       {rows:,} hàng, ít nhất mà mọi cách pack cần: {bound:,} ({algorithm})",
    ),
    "packed_header": Bilingual(
        "unit | samples | rows | tokens | padding | shards | bytes",
        "unit | mẫu | hàng | token | padding | shard | byte",
    ),
    "packed_place": Bilingual(
        "place        {shard} row {row} from slot {start} (unit {unit}: {count} tokens; the row "
        "holds {held} samples, then {pad} PAD)",
        "vị trí       {shard} hàng {row} từ ô {start} (unit {unit}: {count} token; hàng này "
        "chứa {held} mẫu, rồi {pad} PAD)",
    ),
    "row": Bilingual(
        "unit {unit}, row {row} ({shard} row {shard_row}): {held} samples, {tokens:,} tokens, "
        "{pad:,} PAD",
        "unit {unit}, hàng {row} ({shard} hàng {shard_row}): {held} mẫu, {tokens:,} token, "
        "{pad:,} PAD",
    ),
    "row_sample": Bilingual(
        "  slots {start} to {stop}: sample {sample_id} ({file}:{line})",
        "  ô {start} đến {stop}: mẫu {sample_id} ({file}:{line})",
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
    yield _T["packed_shards" if build.packed else "shards"].render(
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
    packing = totals.get("packing")
    if packing:
        yield _T["packed"].render(
            rows=sum(packing["rows"].values()),
            bound=sum(packing["lower_bound_rows"].values()),
            algorithm=f"{packing['algorithm']} v{packing['version']}",
        )
    rows = _unit_rows(build)
    header = _T["packed_header" if build.packed else "header"].render().split(" | ")
    yield ""
    yield _table(header, rows)
    yield ""
    yield _T["chart"].render()
    yield _chart({row[0]: int(row[1].replace(",", "")) for row in rows})


def _unit_rows(build: UnitBuild) -> list[list[str]]:
    """Per unit: size, samples, (a packed build's rows,) tokens, padding (ratio), shards,
    bytes."""
    shards: dict[int, list[dict]] = {}
    for entry in build.manifest["shards"]:
        shards.setdefault(entry["unit_size"], []).append(entry)
    rows = []
    for size, samples in build.units.items():
        _, counts = build.unit_columns(size)
        tokens = int(counts.sum())
        records = build.records()[size]
        slots = records * size
        pad = slots - tokens
        rows.append(
            [
                str(size),
                f"{samples:,}",
                *([f"{records:,}"] if build.packed else []),
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
    if build.packed:
        number = int(row["shard_path"].rpartition("_")[2].removesuffix(".bin"))
        held = build.row_samples(
            row["unit_size"], number * build.samples_per_shard + row["shard_row"]
        )
        yield _T["packed_place"].render(
            shard=row["shard_path"],
            row=row["shard_row"],
            start=row[sample_index.ROW_START],
            unit=row["unit_size"],
            count=row["token_count"],
            held=len(held),
            pad=row["unit_size"] - int(held["length"].sum()),
        )
    else:
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


def packed_row(build: UnitBuild, unit_size: int, row: int) -> Iterator[str]:
    """The lines of ``mintdim inspect DIR --row UNIT ROW``: a packed row and its samples."""
    held = build.row_samples(unit_size, row)
    number, in_shard = divmod(row, build.samples_per_shard)
    tokens = int(held["length"].sum())
    yield _T["row"].render(
        unit=unit_size,
        row=row,
        shard=shard_path(unit_size, number),
        shard_row=in_shard,
        held=len(held),
        tokens=tokens,
        pad=unit_size - tokens,
    )
    wanted = set(held["sample_id"].tolist())
    places = {}
    with open(build.path / sample_index.FILENAME, "rb") as handle:
        for sample_id, line in enumerate(handle):
            if sample_id in wanted:
                places[sample_id] = orjson.loads(line)
    for sample_id, start, length in held.tolist():
        source = places[sample_id]
        yield _T["row_sample"].render(
            start=start,
            stop=start + length,
            sample_id=sample_id,
            file=source["source_file"],
            line=source["source_line"],
        )


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

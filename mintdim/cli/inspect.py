"""``mintdim inspect DIR``: what a finished build holds, per unit and as a bar chart; ``--sample ID`` shows one sample."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import click

from mintdim.check.inspect import packed_row, sample, summary
from mintdim.cli.bilingual import Command, PathType, language_option, option
from mintdim.errors import NotABuildError
from mintdim.read.reader import UnitBuild, open_build, require_build
from mintdim.shared.lang import Bilingual

__all__ = ["inspect"]

_BAD_ID = Bilingual(
    "sample {sample_id} does not exist: this build holds samples 0 to {last}",
    "mẫu {sample_id} không tồn tại: bản build này có các mẫu từ 0 đến {last}",
)

_HELP = {
    "inspect": Bilingual(
        "Summarise a finished build: totals, a per-unit table and a bar chart of the units.\n\n"
        "With --sample ID, show that sample instead: its source location, place, segments (when "
        "the build stores them), token ids and decoded text.",
        "Tóm tắt một bản build đã xong: các tổng, bảng theo từng unit và biểu đồ cột các unit."
        "\n\n"
        "Với --sample ID, hiện mẫu đó thay vào: vị trí nguồn, chỗ nằm, các đoạn (khi bản build "
        "lưu chúng), các token id và văn bản giải mã.",
    ),
    "sample": Bilingual("Show one sample: ID.", "Hiện một mẫu: ID."),
    "row": Bilingual(
        "Show one row of a packed build: UNIT ROW (its samples, their slots and sources).",
        "Hiện một hàng của bản build packed: UNIT ROW (các mẫu, ô và nguồn của chúng).",
    ),
}
_BAD_ROW = Bilingual(
    "unit {unit} row {row} does not exist: this build's packed units are {units}",
    "unit {unit} hàng {row} không tồn tại: các unit packed của bản build này là {units}",
)


@click.command(cls=Command, text=_HELP["inspect"])
@click.argument("directory", type=PathType(path_type=str))
@option("--sample", "sample_id", type=int, default=None, text=_HELP["sample"])
@option("--row", "row", type=int, nargs=2, default=None, text=_HELP["row"])
@language_option
def inspect(directory: str, sample_id: int | None, row: tuple[int, int] | None) -> None:
    """``mintdim inspect``; its help is ``_HELP["inspect"]``."""
    try:
        require_build(directory)
        build = open_build(directory)
    except NotABuildError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    if row is not None:
        lines = _row(build, *row)
    elif sample_id is None:
        lines = summary(directory, build)
    elif 0 <= sample_id < len(build):
        lines = sample(build, sample_id)
    else:
        last = len(build) - 1
        raise click.BadParameter(
            _BAD_ID.render(sample_id=sample_id, last=last), param_hint="--sample"
        )
    for line in lines:
        click.echo(line)


def _row(build: UnitBuild, unit: int, row: int) -> Iterator[str]:
    records = build.records() if build.packed else {}
    if not 0 <= row < records.get(unit, 0):
        units = ", ".join(f"{size} (0-{count - 1})" for size, count in records.items())
        raise click.BadParameter(
            _BAD_ROW.render(unit=unit, row=row, units=units or "-"), param_hint="--row"
        )
    return packed_row(build, unit, row)

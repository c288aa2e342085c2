"""``mintdim verify DIR``: check a finished build (or a split: mintdim/cli/split.py; or a
decontamination: mintdim/cli/decontaminate.py), exit 0 when intact, 1 with every failure, 2 when
DIR is no build."""

from __future__ import annotations

import sys

import click
import orjson

from mintdim.check.verify import VerifyReport, verify_build
from mintdim.cli.bilingual import Command, PathType, language_option, option
from mintdim.decontaminate.check import is_decontamination
from mintdim.errors import NotABuildError
from mintdim.shared.lang import Bilingual
from mintdim.split.check import is_split

__all__ = ["verify"]

_OK = Bilingual(
    "verify {directory}: OK: {samples} samples, {shards} shards ({mib:.1f} MiB), every check holds",
    "verify {directory}: OK: {samples} mẫu, {shards} shard ({mib:.1f} MiB), mọi kiểm tra đều đạt",
)
_DEEP_OK = Bilingual(
    "every record equals the reference encoding of its input line, and every input matches its "
    "fingerprint",
    "mọi bản ghi đều bằng mã hóa tham chiếu của dòng đầu vào, và mọi file đầu vào khớp dấu vân tay",
)
_FAILED = Bilingual(
    "verify {directory}: FAILED: {count} checks do not hold",
    "verify {directory}: THẤT BẠI: {count} kiểm tra không đạt",
)
_SKIPPED = {
    "manifest": Bilingual(
        "the other checks did not run: the manifest cannot guide them",
        "các kiểm tra khác không chạy: manifest không đủ để dẫn đường",
    ),
    "deep": Bilingual(
        "--deep did not run: fix the failures above first",
        "--deep không chạy: hãy sửa các lỗi trên trước",
    ),
}


_HELP = {
    "verify": Bilingual(
        "Check a finished build: manifest, shard sizes and SHA-256, padding, indexes and stats. "
        "For a split (mintdim split): its three builds, its files and every invariant of its "
        "verification.json; for a decontamination (mintdim decontaminate): its files, its clean "
        "build and its verification.json.\n\n"
        "Exit status: 0 when every check holds, 1 when any fails (each failure listed), 2 when "
        "DIRECTORY holds no finished build or split.",
        "Kiểm tra một bản build đã xong: manifest, kích thước và SHA-256 của shard, padding, "
        "các index và thống kê. Với một phân chia (mintdim split): ba bản build, các file của nó "
        "và mọi bất biến của verification.json; với một kết quả khử nhiễm (mintdim "
        "decontaminate): các file của nó, bản build sạch và verification.json.\n\n"
        "Mã thoát: 0 khi mọi kiểm tra đều đạt, 1 khi có kiểm tra không đạt (liệt kê từng lỗi), "
        "2 khi DIRECTORY không chứa bản build hay phân chia hoàn chỉnh nào.",
    ),
    "deep": Bilingual(
        "Also re-read the inputs (fingerprints must match), re-render and re-encode every sample "
        "with the reference tokenizer, and compare every record.",
        "Đọc lại cả các file đầu vào (dấu vân tay phải khớp), dựng lại và mã hóa lại mọi mẫu "
        "bằng tokenizer tham chiếu, rồi so sánh từng bản ghi.",
    ),
    "json": Bilingual("Print the report as JSON on stdout.", "In báo cáo dạng JSON ra stdout."),
    "workers": Bilingual(
        "Processes re-deriving the records with --deep (default: every core); the report is the "
        "same for every count.",
        "Số tiến trình tính lại các bản ghi khi có --deep (mặc định: mọi lõi CPU); báo cáo như "
        "nhau với mọi số lượng.",
    ),
}


@click.command(cls=Command, text=_HELP["verify"])
@click.argument("directory", type=PathType(file_okay=True, dir_okay=True, path_type=str))
@option("--deep", is_flag=True, text=_HELP["deep"])
@option("--json", "as_json", is_flag=True, text=_HELP["json"])
@option("--workers", type=click.IntRange(min=1), default=None, text=_HELP["workers"])
@language_option
def verify(directory: str, deep: bool, as_json: bool, workers: int | None) -> None:
    """``mintdim verify``; its help is ``_HELP["verify"]``."""
    if is_split(directory):
        from mintdim.cli.split import verify_split_directory

        verify_split_directory(directory, as_json, deep)
    if is_decontamination(directory):
        from mintdim.cli.decontaminate import verify_decontamination_directory

        verify_decontamination_directory(directory, as_json)
    try:
        report = verify_build(directory, deep=deep, workers=workers)
    except NotABuildError as err:
        click.echo(str(err), err=True)
        sys.exit(2)
    if as_json:
        click.echo(orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        _print(report)
    sys.exit(0 if report.ok else 1)


def _print(report: VerifyReport) -> None:
    if report.ok:
        click.echo(
            _OK.render(
                directory=report.directory,
                samples=report.samples,
                shards=report.shards,
                mib=report.shard_bytes / (1 << 20),
            )
        )
        if report.deep:
            click.echo(_DEEP_OK.render())
        return
    count = len(report.failures) + sum(report.hidden.values())
    click.echo(_FAILED.render(directory=report.directory, count=count))
    for line in report.lines():
        click.echo(f"- {line}")
    if report.skipped:
        click.echo(_SKIPPED[report.skipped].render())

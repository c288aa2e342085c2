"""``mintdim split BUILD --groups GROUPS --out SPLIT --seed N``: train, validation and test builds
that share no group (``mintdim.split``); and how ``mintdim verify`` shows a split's report.

Exit status: 0 when the split is written and verified; 1 for an error, with nothing that looks
complete left behind; 2 when BUILD or GROUPS holds no finished build or groups.
"""

from __future__ import annotations

import sys

import click
import orjson

from mintdim.cli.bilingual import Command, PathType, language_option, option
from mintdim.cli.group import reported
from mintdim.errors import SplitRatioError
from mintdim.shared.lang import Bilingual
from mintdim.split.check import SplitReport, verify_split
from mintdim.split.threeway import split as run_split

__all__ = ["show_split_report", "split", "verify_split_directory"]

_TEXT = {
    "done": Bilingual(
        "split {build} -> {out} (seed {seed}): every check of verification.json holds",
        "split {build} -> {out} (seed {seed}): mọi kiểm tra của verification.json đều đạt",
    ),
    "line": Bilingual(
        "  {split}: {groups} groups, {samples} samples, {tokens} tokens ({share:.2%} of tokens)",
        "  {split}: {groups} nhóm, {samples} mẫu, {tokens} token ({share:.2%} số token)",
    ),
    "misses": Bilingual(
        "{unmet} unmet targets and {gaps} coverage gaps: see {path}",
        "{unmet} mục tiêu không đạt và {gaps} khoảng trống: xem {path}",
    ),
    "all_met": Bilingual(
        "every target met; report: {path}", "mọi mục tiêu đều đạt; báo cáo: {path}"
    ),
    "ok": Bilingual(
        "verify {directory}: OK: split of {samples} samples (train {train}, validation "
        "{validation}, test {test}); every build, file and invariant holds",
        "verify {directory}: OK: phân chia {samples} mẫu (train {train}, validation "
        "{validation}, test {test}); mọi bản build, file và bất biến đều đạt",
    ),
    "failed": Bilingual(
        "verify {directory}: FAILED: {count} checks do not hold",
        "verify {directory}: THẤT BẠI: {count} kiểm tra không đạt",
    ),
    "deep": Bilingual(
        "--deep checks a build against its inputs; a split's records are checked against the "
        "input build they were copied from",
        "--deep kiểm tra một bản build với dữ liệu đầu vào; bản ghi của phân chia được kiểm tra "
        "với bản build đầu vào mà chúng được chép từ đó",
    ),
}

_HELP = {
    "split": Bilingual(
        "Split a finished build into train, validation and test builds that share no group: "
        "whole groups allocated by seed (stratified with --stratify), records copied byte for "
        "byte, an independent verification, and manifest.json (with the training_files "
        "allowlist) written last into the fresh directory --out.",
        "Chia một bản build đã xong thành các bản build train, validation và test không chung "
        "nhóm nào: nhóm được phân nguyên vẹn theo seed (phân tầng với --stratify), bản ghi được "
        "chép nguyên từng byte, một bước kiểm tra độc lập, và manifest.json (với danh sách "
        "training_files) được ghi sau cùng vào thư mục mới --out.",
    ),
    "groups": Bilingual(
        "The groups of this build (mintdim group).", "Các nhóm của bản build này (mintdim group)."
    ),
    "out": Bilingual(
        "The split directory to make (absent or empty).",
        "Thư mục phân chia sẽ tạo (chưa có hoặc rỗng).",
    ),
    "seed": Bilingual(
        "Seed of the allocation: the same inputs, groups and seed give the same split.",
        "Seed của phép phân bổ: cùng đầu vào, nhóm và seed cho cùng một phân chia.",
    ),
    "ratios": Bilingual(
        "Shares of groups for train, validation and test (each >= 0, summing to 1).",
        "Tỉ lệ nhóm cho train, validation và test (mỗi tỉ lệ >= 0, tổng bằng 1).",
    ),
    "stratify": Bilingual(
        "A source-record field (or source_file) whose values get their own targets.",
        "Một field của bản ghi nguồn (hoặc source_file) mà mỗi giá trị có mục tiêu riêng.",
    ),
    "ratios_for": Bilingual(
        "STRATUM=train=..,validation=..,test=..: other shares for one stratum; repeatable.",
        "STRATUM=train=..,validation=..,test=..: tỉ lệ khác cho một tầng; có thể lặp lại.",
    ),
    "window": Bilingual(
        "Cut validation and test into evaluation windows of at most W+1 ids "
        "(evaluation-windows.jsonl).",
        "Cắt validation và test thành các cửa sổ đánh giá tối đa W+1 id "
        "(evaluation-windows.jsonl).",
    ),
    "workers": Bilingual(
        "Threads of the verification pass (the output is the same for every count).",
        "Số luồng của bước kiểm tra (kết quả như nhau với mọi số lượng).",
    ),
}


def _ratios_for(values: tuple[str, ...]) -> dict[str, str]:
    overrides = {}
    for value in values:
        stratum, separator, shares = value.partition("=")
        if not separator:
            raise SplitRatioError(option="--ratios-for", value=value, problem="form")
        overrides[stratum] = shares
    return overrides


@click.command(
    cls=Command, text=_HELP["split"], context_settings={"help_option_names": ["-h", "--help"]}
)
@click.argument("build", type=PathType(file_okay=False, path_type=str))
@option(
    "--groups", required=True, type=PathType(file_okay=False, path_type=str), text=_HELP["groups"]
)
@option("--out", required=True, type=PathType(path_type=str), text=_HELP["out"])
@option("--seed", required=True, type=int, text=_HELP["seed"])
@option(
    "--ratios",
    default="train=0.98,validation=0.01,test=0.01",
    show_default=True,
    text=_HELP["ratios"],
)
@option("--stratify", default=None, text=_HELP["stratify"])
@option("--ratios-for", "ratios_for", multiple=True, text=_HELP["ratios_for"])
@option("--window", default=None, type=int, text=_HELP["window"])
@option("--workers", default=1, show_default=True, type=int, text=_HELP["workers"])
@language_option
def split(
    build: str,
    groups: str,
    out: str,
    seed: int,
    ratios: str,
    stratify: str | None,
    ratios_for: tuple[str, ...],
    window: int | None,
    workers: int,
) -> None:
    """``mintdim split``; its help is ``_HELP["split"]``."""
    with reported():
        result = run_split(
            build,
            groups,
            out,
            seed=seed,
            ratios=ratios,
            stratify=stratify,
            ratios_by_stratum=_ratios_for(ratios_for),
            window=window,
            workers=workers,
        )
    report = result.report
    click.echo(_TEXT["done"].render(build=build, out=out, seed=seed))
    for name, facts in report["splits"].items():
        click.echo(_TEXT["line"].render(split=name, share=facts["share_of_tokens"], **facts))
    path = f"{out}/REPORT.md"
    unmet, gaps = len(report["unmet_targets"]), len(report["coverage_gaps"])
    if unmet or gaps:
        click.echo(_TEXT["misses"].render(unmet=unmet, gaps=gaps, path=path))
    else:
        click.echo(_TEXT["all_met"].render(path=path))


def verify_split_directory(directory: str, as_json: bool, deep: bool) -> None:
    """``mintdim verify SPLIT``: print the report and exit 0 (it holds), 1 or 2 (no split)."""
    with reported():
        found = verify_split(directory)
    if as_json:
        click.echo(orjson.dumps(found.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        if deep:
            click.echo(_TEXT["deep"].render())
        show_split_report(found)
    sys.exit(0 if found.ok else 1)


def show_split_report(found: SplitReport) -> None:
    """The report of ``mintdim verify SPLIT`` in the language in use."""
    if found.ok:
        samples = found.samples
        click.echo(
            _TEXT["ok"].render(directory=found.directory, samples=sum(samples.values()), **samples)
        )
        click.echo(found.input_line())
        return
    lines = found.lines()
    click.echo(_TEXT["failed"].render(directory=found.directory, count=len(lines)))
    for line in lines:
        click.echo(f"- {line}")
    click.echo(found.input_line())

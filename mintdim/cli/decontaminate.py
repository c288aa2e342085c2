"""``mintdim decontaminate BUILD --against FILE:FIELD,... --out DIR``: find, report and remove the
training samples that hold benchmark items (``mintdim.decontaminate``); and how ``mintdim verify``
shows a decontamination directory.

Exit status: 0 when the directory is written and verified; 1 for an error, with nothing that
looks complete left behind; 2 when BUILD holds no finished build.
"""

from __future__ import annotations

import sys

import click
import orjson

from mintdim.cli.bilingual import Command, PathType, language_option, option
from mintdim.cli.group import reported
from mintdim.decontaminate.check import DecontaminationReport, verify_decontamination
from mintdim.decontaminate.job import decontaminate as run_decontaminate
from mintdim.decontaminate.settings import MATCHES, against_option
from mintdim.shared.lang import Bilingual

__all__ = ["decontaminate", "verify_decontamination_directory"]

_TEXT = {
    "done": Bilingual(
        "decontaminate {build} -> {out}: {removed} of {samples} samples removed; every check of "
        "verification.json holds",
        "decontaminate {build} -> {out}: loại {removed} trên {samples} mẫu; mọi kiểm tra của "
        "verification.json đều đạt",
    ),
    "line": Bilingual(
        "  {name}: {contaminated} of {items} items contaminated ({percent:.2f} %), "
        "{too_short} values too short to check",
        "  {name}: {contaminated} trên {items} mục bị nhiễm ({percent:.2f} %), {too_short} giá "
        "trị quá ngắn để kiểm",
    ),
    "report": Bilingual("Report: {path}", "Báo cáo: {path}"),
    "ok": Bilingual(
        "verify {directory}: OK: decontamination ({removed} samples removed, clean build of "
        "{retained}); every file and invariant holds",
        "verify {directory}: OK: kết quả khử nhiễm (loại {removed} mẫu, bản build sạch "
        "{retained} mẫu); mọi file và bất biến đều đạt",
    ),
    "failed": Bilingual(
        "verify {directory}: FAILED: {count} checks do not hold",
        "verify {directory}: THẤT BẠI: {count} kiểm tra không đạt",
    ),
}

_HELP = {
    "decontaminate": Bilingual(
        "Find the samples of a finished build that hold benchmark items (n-grams of the build's "
        "own tokens, or of normalised words with --match words), report both sides (which "
        "samples, which items), and write the build without them (clean/), an independent "
        "verification and, last, manifest.json into the fresh directory --out.",
        "Tìm các mẫu của một bản build đã xong có chứa mục benchmark (n-gram của chính token "
        "của bản build, hoặc của từ đã chuẩn hóa với --match words), báo cáo cả hai phía (mẫu "
        "nào, mục nào), rồi ghi bản build không có chúng (clean/), một bước kiểm tra độc lập "
        "và cuối cùng manifest.json vào thư mục mới --out.",
    ),
    "against": Bilingual(
        "A benchmark file and the fields to match, PATH:FIELD[,FIELD...] (JSONL, compressed "
        "JSONL or Parquet; a field holds a string or a list of strings); repeatable.",
        "Một file benchmark và các field cần so, PATH:FIELD[,FIELD...] (JSONL, JSONL nén hoặc "
        "Parquet; mỗi field chứa chuỗi hoặc danh sách chuỗi); có thể lặp lại.",
    ),
    "out": Bilingual(
        "The directory to make (absent or empty).", "Thư mục sẽ tạo (chưa có hoặc rỗng)."
    ),
    "ngram": Bilingual("Length of the n-grams matched.", "Độ dài n-gram được so."),
    "min_matches": Bilingual(
        "Distinct n-grams of one item a sample must hold to be removed.",
        "Số n-gram khác nhau của một mục mà mẫu phải chứa để bị loại.",
    ),
    "min_tokens": Bilingual(
        "Shortest value matched whole (values shorter than the n-gram).",
        "Giá trị ngắn nhất được so nguyên (giá trị ngắn hơn n-gram).",
    ),
    "item_coverage": Bilingual(
        "Coverage of a value that marks its item contaminated.",
        "Độ phủ của một giá trị khiến mục của nó bị coi là nhiễm.",
    ),
    "match": Bilingual(
        "tokens: the build's own token ids; words: normalised words of the rendered text.",
        "tokens: chính id token của bản build; words: từ đã chuẩn hóa của văn bản đã dựng.",
    ),
    "report_only": Bilingual(
        "Write the report and the item lists, but no clean build.",
        "Ghi báo cáo và danh sách mục, nhưng không ghi bản build sạch.",
    ),
    "workers": Bilingual(
        "Threads of the search (the output is the same for every count).",
        "Số luồng tìm kiếm (kết quả như nhau với mọi số lượng).",
    ),
}


@click.command(
    cls=Command,
    text=_HELP["decontaminate"],
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("build", type=PathType(file_okay=False, path_type=str))
@option("--against", "against", multiple=True, required=True, text=_HELP["against"])
@option("--out", required=True, type=PathType(path_type=str), text=_HELP["out"])
@option("--ngram", default=13, show_default=True, type=int, text=_HELP["ngram"])
@option("--min-matches", default=1, show_default=True, type=int, text=_HELP["min_matches"])
@option("--min-tokens", default=8, show_default=True, type=int, text=_HELP["min_tokens"])
@option("--item-coverage", default=0.5, show_default=True, type=float, text=_HELP["item_coverage"])
@option(
    "--match", default="tokens", show_default=True, type=click.Choice(MATCHES), text=_HELP["match"]
)
@option("--report-only", is_flag=True, text=_HELP["report_only"])
@option("--workers", default=1, show_default=True, type=int, text=_HELP["workers"])
@language_option
def decontaminate(
    build: str,
    against: tuple[str, ...],
    out: str,
    ngram: int,
    min_matches: int,
    min_tokens: int,
    item_coverage: float,
    match: str,
    report_only: bool,
    workers: int,
) -> None:
    """``mintdim decontaminate``; its help is ``_HELP["decontaminate"]``."""
    with reported():
        result = run_decontaminate(
            build,
            out,
            against=[against_option(text) for text in against],
            ngram=ngram,
            min_matches=min_matches,
            min_tokens=min_tokens,
            item_coverage=item_coverage,
            match=match,
            report_only=report_only,
            workers=workers,
        )
    content = result.report
    click.echo(
        _TEXT["done"].render(
            build=build, out=out, removed=content["removed"], samples=content["samples"]
        )
    )
    for entry in content["benchmarks"]:
        click.echo(_TEXT["line"].render(**entry))
    click.echo(_TEXT["report"].render(path=f"{out}/REPORT.md"))


def verify_decontamination_directory(directory: str, as_json: bool) -> None:
    """``mintdim verify DIR`` on a decontamination: print the report and exit 0 (it holds), 1
    or 2 (no complete decontamination)."""
    with reported():
        found = verify_decontamination(directory)
    if as_json:
        click.echo(orjson.dumps(found.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        show_report(found)
    sys.exit(0 if found.ok else 1)


def show_report(found: DecontaminationReport) -> None:
    """The report of ``mintdim verify DIR`` in the language in use."""
    if found.ok:
        retained = "-" if found.retained is None else found.retained
        click.echo(
            _TEXT["ok"].render(directory=found.directory, removed=found.removed, retained=retained)
        )
    else:
        lines = found.lines()
        click.echo(_TEXT["failed"].render(directory=found.directory, count=len(lines)))
        for line in lines:
            click.echo(f"- {line}")
    if rerun := found.rerun_line():
        click.echo(rerun)

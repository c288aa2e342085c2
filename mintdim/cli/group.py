"""``mintdim group BUILD --out GROUPS``: frozen groups of related samples (``mintdim.group``).

Exit status: 0 when the groups are written; 1 for an error (a bad option value, a joins line,
an input that changed since the build, ...), nothing written; 2 when BUILD holds no finished
build.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from mintdim.cli.bilingual import Command, PathType, language_option, option
from mintdim.errors import MintDimError, NotABuildError, SplitDirectoryError
from mintdim.shared.lang import Bilingual
from mintdim.split.group import group as run_group
from mintdim.split.report import BOUNDED_SEARCH

__all__ = ["group", "reported"]

_TEXT = {
    "done": Bilingual(
        "group {build} -> {out}: {samples} samples in {groups} groups; confirmed edges: {edges}",
        "group {build} -> {out}: {samples} mẫu trong {groups} nhóm; các liên kết đã xác nhận: "
        "{edges}",
    ),
    "near": Bilingual(
        "near-duplicates: {reviewed} samples reviewed, {comparisons} candidate pairs compared; "
        "{confirmed} joins confirmed ({same_significant_text} by the same significant text, "
        "{confirmed_but_exact_text} already exact text); the caps skipped "
        "{pairs_skipped_by_max_postings} + {pairs_over_max_candidates} pairs",
        "bản gần trùng: đã xét {reviewed} mẫu, so sánh {comparisons} cặp ứng viên; xác nhận "
        "{confirmed} liên kết ({same_significant_text} do cùng văn bản có nghĩa, "
        "{confirmed_but_exact_text} đã trùng khớp văn bản); các giới hạn đã bỏ qua "
        "{pairs_skipped_by_max_postings} + {pairs_over_max_candidates} cặp",
    ),
    "report": Bilingual("Report: {path}", "Báo cáo: {path}"),
}

_HELP = {
    "group": Bilingual(
        "Link the samples of a finished build into frozen groups a split never separates: "
        "declared keys (--key, --alias-rule), the same text up to whitespace, near-duplicates "
        "(character 5-grams of the text without punctuation and whitespace: a bounded search, "
        "then an exact rule) and manual joins (--joins). Writes groups.json, joins.jsonl, "
        "report.json, REPORT.md and, last, manifest.json into the fresh directory --out.",
        "Liên kết các mẫu của một bản build đã xong thành các nhóm cố định mà phép phân chia "
        "không bao giờ tách ra: khóa khai báo (--key, --alias-rule), cùng văn bản khi bỏ qua "
        "khoảng trắng, bản gần trùng (5-gram ký tự của văn bản đã bỏ dấu câu và khoảng trắng: "
        "tìm có giới hạn, rồi một quy tắc chính xác) và liên kết thủ công (--joins). Ghi "
        "groups.json, joins.jsonl, report.json, REPORT.md và cuối cùng manifest.json vào thư "
        "mục mới --out.",
    ),
    "out": Bilingual(
        "The groups directory to make (absent or empty).",
        "Thư mục nhóm sẽ tạo (chưa có hoặc rỗng).",
    ),
    "key": Bilingual(
        "A source-record field whose equal values link samples (NFKC, case-folded, whitespace "
        "collapsed); repeatable.",
        "Một field của bản ghi nguồn mà giá trị bằng nhau thì liên kết các mẫu (NFKC, không "
        "phân biệt hoa thường, gộp khoảng trắng); có thể lặp lại.",
    ),
    "alias_rule": Bilingual(
        "'REGEX=>REPLACEMENT' canonicalizing key values further (e.g. volume suffixes); "
        "repeatable, applied in order.",
        "'REGEX=>REPLACEMENT' chuẩn hóa thêm giá trị khóa (ví dụ hậu tố số quyển); có thể lặp "
        "lại, áp dụng theo thứ tự.",
    ),
    "near": Bilingual("Search and confirm near-duplicates.", "Tìm và xác nhận các bản gần trùng."),
    "joins": Bilingual(
        'A reviewer\'s JSONL of manual joins: {{"a": id, "b": id, "reason": "..."}} per line.',
        'File JSONL các liên kết thủ công của người rà soát: mỗi dòng {{"a": id, "b": id, '
        '"reason": "..."}}.',
    ),
    "min_chars": Bilingual(
        "Near-duplicate rule: the shorter sample's least significant characters.",
        "Quy tắc gần trùng: số ký tự có nghĩa tối thiểu của mẫu ngắn hơn.",
    ),
    "min_distinct": Bilingual(
        "Near-duplicate rule: the shorter sample's least distinct 5-grams.",
        "Quy tắc gần trùng: số 5-gram khác nhau tối thiểu của mẫu ngắn hơn.",
    ),
    "coverage": Bilingual(
        "Near-duplicate rule: the least share of the shorter sample's 5-grams found in the other.",
        "Quy tắc gần trùng: tỉ lệ tối thiểu 5-gram của mẫu ngắn hơn có trong mẫu kia.",
    ),
    "sketch_size": Bilingual(
        "Search: values of each sample's MinHash signature.",
        "Tìm kiếm: số giá trị trong chữ ký MinHash của mỗi mẫu.",
    ),
    "band_rows": Bilingual(
        "Search: signature values per LSH band (more: fewer, closer candidates).",
        "Tìm kiếm: số giá trị chữ ký mỗi band LSH (nhiều hơn: ít ứng viên hơn, giống nhau hơn).",
    ),
    "min_shared": Bilingual(
        "Search: the least band buckets two samples share to be compared.",
        "Tìm kiếm: số bucket band chung tối thiểu để hai mẫu được so sánh.",
    ),
    "max_postings": Bilingual(
        "Search cap: a bucket with more samples is compared as a star (its first sample with "
        "each other one).",
        "Giới hạn tìm kiếm: bucket có nhiều mẫu hơn được so sánh theo hình sao (mẫu đầu tiên "
        "với từng mẫu còn lại).",
    ),
    "max_candidates": Bilingual(
        "Search cap: candidates kept per sample, most shared buckets first.",
        "Giới hạn tìm kiếm: số ứng viên giữ lại cho mỗi mẫu, nhiều bucket chung nhất trước.",
    ),
    "workers": Bilingual(
        "Processes computing sketches (the output is the same for every count).",
        "Số tiến trình tính sketch (kết quả như nhau với mọi số lượng).",
    ),
}


@contextmanager
def reported() -> Iterator[None]:
    """A MintDim error is shown as its message: exit 2 when an input directory holds no
    finished build, groups or split, else 1; no traceback."""
    try:
        yield
    except MintDimError as err:
        click.echo(err.message(), err=True)
        sys.exit(2 if isinstance(err, NotABuildError | SplitDirectoryError) else 1)


@click.command(
    cls=Command, text=_HELP["group"], context_settings={"help_option_names": ["-h", "--help"]}
)
@click.argument("build", type=PathType(file_okay=False, path_type=str))
@option("--out", required=True, type=PathType(path_type=str), text=_HELP["out"])
@option("--key", "keys", multiple=True, text=_HELP["key"])
@option("--alias-rule", "alias_rules", multiple=True, text=_HELP["alias_rule"])
@option(
    "--near-duplicates/--no-near-duplicates", default=True, show_default=True, text=_HELP["near"]
)
@option("--joins", type=PathType(dir_okay=False, path_type=str), text=_HELP["joins"])
@option("--min-chars", default=200, show_default=True, type=int, text=_HELP["min_chars"])
@option("--min-distinct", default=100, show_default=True, type=int, text=_HELP["min_distinct"])
@option("--coverage", default=0.9, show_default=True, type=float, text=_HELP["coverage"])
@option("--sketch-size", default=40, show_default=True, type=int, text=_HELP["sketch_size"])
@option("--band-rows", default=5, show_default=True, type=int, text=_HELP["band_rows"])
@option("--min-shared", default=1, show_default=True, type=int, text=_HELP["min_shared"])
@option("--max-postings", default=128, show_default=True, type=int, text=_HELP["max_postings"])
@option("--max-candidates", default=128, show_default=True, type=int, text=_HELP["max_candidates"])
@option("--workers", default=1, show_default=True, type=int, text=_HELP["workers"])
@language_option
def group(build: str, out: str, **settings: object) -> None:
    """``mintdim group``; its help is ``_HELP["group"]``."""
    with reported():
        result = run_group(build, out, **settings)
    edges = ", ".join(f"{kind} {count}" for kind, count in result.edges.items())
    click.echo(
        _TEXT["done"].render(
            build=build, out=out, samples=result.samples, groups=result.groups, edges=edges
        )
    )
    near = result.report["near_duplicates"]
    if near["enabled"]:
        click.echo(_TEXT["near"].render(**near))
    click.echo(BOUNDED_SEARCH.render())
    click.echo(_TEXT["report"].render(path=f"{out}/REPORT.md"))

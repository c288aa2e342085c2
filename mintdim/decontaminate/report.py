"""``report.json`` and ``REPORT.md`` of a decontamination: per benchmark its items, the
contaminated ones and the values too short to check; per input file of the build the samples
removed; a few hits side by side as text. REPORT.md is report.json for a person, in English
then Vietnamese (every line from a :class:`Bilingual`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from mintdim.decontaminate.findings import Pairs
from mintdim.decontaminate.prepare import Prepared
from mintdim.decontaminate.words import normal_words
from mintdim.read.reader import open_build
from mintdim.shared.lang import Bilingual

__all__ = ["REPORT_JSON", "REPORT_MD", "content", "examples", "markdown"]

REPORT_JSON = "report.json"
REPORT_MD = "REPORT.md"
_EXAMPLES = 3
"""Hits shown per benchmark: its longest shared runs."""
_SHOWN_CHARS = 400

_T = {
    "title": Bilingual("# Decontamination of {path}", "# Khử nhiễm {path}"),
    "rule": Bilingual(
        "Match: {match}; n-gram {ngram}; a sample is removed when it holds at least "
        "{min_matches} checked n-grams of one item; values of {min_tokens} to {ngram_less} "
        "{unit} are matched whole; an item is contaminated when a value's coverage reaches "
        "{item_coverage}.",
        "So khớp: {match}; n-gram {ngram}; một mẫu bị loại khi chứa ít nhất {min_matches} "
        "n-gram đã kiểm của một mục; giá trị dài {min_tokens} đến {ngram_less} {unit} được so "
        "nguyên; một mục bị nhiễm khi độ phủ của một giá trị đạt {item_coverage}.",
    ),
    "benchmarks": Bilingual("## Benchmarks", "## Các benchmark"),
    "benchmark": Bilingual(
        "- {name} ({path}): {items} items, {contaminated} contaminated ({percent:.2f} %); "
        "{values} values, {too_short} too short to check; {skipped} n-grams skipped for "
        "carrying no content; {pairs} sample hits",
        "- {name} ({path}): {items} mục, {contaminated} mục bị nhiễm ({percent:.2f} %); "
        "{values} giá trị, {too_short} giá trị quá ngắn để kiểm; bỏ qua {skipped} n-gram "
        "không mang nội dung; {pairs} lượt trúng trong mẫu",
    ),
    "files": Bilingual("## Input files of the build", "## Các file đầu vào của bản build"),
    "file": Bilingual(
        "- {file}: {samples} samples, {removed} removed",
        "- {file}: {samples} mẫu, loại {removed} mẫu",
    ),
    "total": Bilingual(
        "{removed} of {samples} samples removed; clean build: {clean}",
        "Loại {removed} trên {samples} mẫu; bản build sạch: {clean}",
    ),
    "no_clean": Bilingual("none (--report-only)", "không có (--report-only)"),
    "examples": Bilingual("## Hits, side by side", "## Các lượt trúng, đặt cạnh nhau"),
    "example": Bilingual(
        "### {benchmark} item {item} in sample {sample_id} ({source_file}:{source_line})\n\n"
        "{shared} n-grams shared, longest run {longest} {unit}.\n\n"
        "Training sample:\n\n```text\n{sample_text}\n```\n\nBenchmark ({field}):\n\n"
        "```text\n{item_text}\n```",
        "### {benchmark}, mục {item} trong mẫu {sample_id} ({source_file}:{source_line})\n\n"
        "Chung {shared} n-gram, đoạn dài nhất {longest} {unit}.\n\n"
        "Mẫu huấn luyện:\n\n```text\n{sample_text}\n```\n\nBenchmark ({field}):\n\n"
        "```text\n{item_text}\n```",
    ),
    "none": Bilingual("No hit.", "Không có lượt trúng nào."),
    "limits": Bilingual(
        "Exact n-gram matching finds copies, not paraphrases or translations; see "
        "docs/decontamination.md for the rules and their limits.",
        "So khớp n-gram chính xác tìm được bản chép, không tìm được bản diễn đạt lại hay bản "
        "dịch; xem docs/decontamination.md về các quy tắc và giới hạn của chúng.",
    ),
}
_UNITS = {
    "tokens": Bilingual("tokens", "token"),
    "words": Bilingual("words", "từ"),
}


def examples(prepared: Prepared, found: Pairs, texts: Mapping[int, str]) -> list[dict]:
    """Per benchmark, its :data:`_EXAMPLES` pairs with the longest shared runs, as text: the
    run in the sample (decoded tokens, or normalised words: among the samples whose text the
    scan kept, ``scan.KEPT_TEXTS``) and the item's first value."""
    cat, samples = prepared.catalogue, prepared.samples
    bench_of = np.searchsorted(cat.item_start, found.item, side="right") - 1
    order = np.lexsort((found.item, found.sample, -found.longest, bench_of))
    if prepared.encoder is None:  # words: among the samples whose text the scan kept
        order = order[np.isin(found.sample[order], np.fromiter(texts, np.int64, len(texts)))]
    chosen = [
        int(k) for b in range(len(cat.benchmarks)) for k in order[bench_of[order] == b][:_EXAMPLES]
    ]
    build = open_build(samples.path) if prepared.encoder is not None else None
    shown = []
    for k in chosen:
        sample, item, b = int(found.sample[k]), int(found.item[k]), int(bench_of[k])
        start, stop = int(found.longest_start[k]), int(found.longest_start[k] + found.longest[k])
        if build is not None and prepared.encoder is not None:
            tokens = build[sample][: int(samples.token_counts[sample])]
            sample_text = prepared.encoder.decode(tokens[start:stop].tolist())
        else:
            sample_text = " ".join(normal_words(texts[sample])[start:stop])
        benchmark = cat.benchmarks[b]
        position = item - int(cat.item_start[b])
        shown.append(
            {
                **samples.where(sample),
                "benchmark": benchmark.against.name,
                "item": benchmark.lines[position],
                "shared": int(found.ngrams_shared[k]),
                "longest": int(found.longest[k]),
                "sample_text": sample_text[:_SHOWN_CHARS],
                "field": benchmark.labels[position][0],
                "item_text": benchmark.values[position][0][:_SHOWN_CHARS],
            }
        )
    return shown


def content(
    prepared: Prepared,
    found: Pairs,
    shares: np.ndarray,
    contaminated: list[np.ndarray],
    removed: np.ndarray,
    shown: list[dict],
) -> dict[str, object]:
    """report.json."""
    cat, samples, settings = prepared.catalogue, prepared.samples, prepared.settings
    bench_of_value = np.searchsorted(cat.item_start, cat.value_item, side="right") - 1
    bench_of_pair = np.searchsorted(cat.item_start, found.item, side="right") - 1
    benchmarks = []
    for b, benchmark in enumerate(cat.benchmarks):
        values = bench_of_value == b
        items = len(benchmark.lines)
        benchmarks.append(
            {
                "name": benchmark.against.name,
                "path": benchmark.against.path,
                "fields": list(benchmark.against.fields),
                "items": items,
                "contaminated": int(contaminated[b].size),
                "percent": round(100 * contaminated[b].size / items, 4),
                "values": int(values.sum()),
                "too_short": int(cat.too_short[values].sum()),
                "unchecked": int((np.isnan(shares) & values).sum()),
                "skipped": int(cat.skipped[values].sum()),
                "pairs": int((bench_of_pair == b).sum()),
            }
        )
    per_file = np.bincount(samples.files, minlength=len(samples.sources))
    removed_per_file = np.bincount(samples.files[removed], minlength=len(samples.sources))
    return {
        "build": {"path": samples.shown, "manifest_sha256": samples.manifest_sha256},
        "options": settings.record(),
        "samples": samples.count,
        "removed": int(removed.size),
        "benchmarks": benchmarks,
        "files": [
            {"file": name, "samples": int(n), "removed": int(r)}
            for name, n, r in zip(samples.sources, per_file, removed_per_file, strict=True)
        ],
        "examples": shown,
    }


def markdown(report: Mapping) -> str:
    """REPORT.md: English, then Vietnamese."""

    def lines(lang: str) -> Iterator[str]:
        options = report["options"]
        unit = _UNITS[options["match"]].render(lang)
        yield _T["title"].render(lang, path=report["build"]["path"])
        yield ""
        yield _T["rule"].render(lang, unit=unit, ngram_less=options["ngram"] - 1, **options)
        yield ""
        clean = "clean/" if not options["report_only"] else _T["no_clean"].render(lang)
        yield _T["total"].render(
            lang, removed=report["removed"], samples=report["samples"], clean=clean
        )
        yield ""
        yield _T["benchmarks"].render(lang)
        yield ""
        for entry in report["benchmarks"]:
            yield _T["benchmark"].render(lang, **entry)
        yield ""
        yield _T["files"].render(lang)
        yield ""
        for entry in report["files"]:
            yield _T["file"].render(lang, **entry)
        yield ""
        yield _T["examples"].render(lang)
        yield ""
        if not report["examples"]:
            yield _T["none"].render(lang)
            yield ""
        for entry in report["examples"]:
            yield _T["example"].render(lang, unit=unit, **entry)
            yield ""
        yield _T["limits"].render(lang)

    return "\n".join([*lines("en"), "", "---", "", *lines("vi")]) + "\n"

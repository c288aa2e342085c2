"""``REPORT.md`` of a grouping and of a split: report.json for a person, in English then
Vietnamese (every line from a :class:`Bilingual`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from mintdim.shared.lang import Bilingual

__all__ = ["BOUNDED_SEARCH", "REPORT_JSON", "REPORT_MD", "groups_markdown", "split_markdown"]

REPORT_JSON = "report.json"
REPORT_MD = "REPORT.md"

BOUNDED_SEARCH = Bilingual(
    "This is a bounded candidate search, not an exhaustive identity or semantic-duplicate "
    "guarantee: near-duplicates are looked for only among pairs sharing a MinHash band, within "
    "the caps reported, so containment in much longer texts, paraphrases and unknown aliases can "
    "remain undetected, and equal titles or keys can join unrelated works.",
    "Đây là một phép tìm ứng viên có giới hạn, không phải bảo đảm đầy đủ về trùng lặp danh "
    "tính hay ngữ nghĩa: bản gần trùng chỉ được tìm giữa các cặp có chung một band MinHash, "
    "trong các giới hạn được báo cáo, nên văn bản nằm trong một văn bản dài hơn nhiều, các cách "
    "diễn đạt lại và các alias chưa biết có thể không được phát hiện, còn tiêu đề hay khóa "
    "trùng nhau có thể nối các tác phẩm không liên quan.",
)

_T = {
    "groups_title": Bilingual("# Groups of {path}", "# Các nhóm của {path}"),
    "groups_summary": Bilingual(
        "{samples} samples in {count} groups: {singletons} alone, {shared} in groups of two or "
        "more; the largest has {largest} samples.",
        "{samples} mẫu trong {count} nhóm: {singletons} mẫu đứng riêng, {shared} mẫu trong các "
        "nhóm từ hai mẫu trở lên; nhóm lớn nhất có {largest} mẫu.",
    ),
    "edges": Bilingual("## Confirmed edges", "## Các liên kết đã xác nhận"),
    "edge_kind": Bilingual("- {kind}: {count}", "- {kind}: {count}"),
    "keys": Bilingual("## Declared keys", "## Các khóa khai báo"),
    "key_line": Bilingual(
        "- {field}: {with_value} samples with a value ({missing} missing or empty), {distinct} "
        "distinct values{after}",
        "- {field}: {with_value} mẫu có giá trị ({missing} thiếu hoặc rỗng), {distinct} giá trị "
        "khác nhau{after}",
    ),
    "after_alias": Bilingual(
        ", {count} after the alias rules", ", còn {count} sau các quy tắc alias"
    ),
    "alias_rules": Bilingual("Alias rules: {rules}", "Quy tắc alias: {rules}"),
    "exact": Bilingual(
        "## Exact text (up to whitespace)\n\n{texts} texts shared by {samples} samples.",
        "## Văn bản trùng khớp (bỏ qua khoảng trắng)\n\n{texts} văn bản dùng chung bởi "
        "{samples} mẫu.",
    ),
    "near_off": Bilingual(
        "## Near-duplicates\n\nNot searched (near_duplicates=False).",
        "## Bản gần trùng\n\nKhông tìm (near_duplicates=False).",
    ),
    "near": Bilingual(
        "## Near-duplicates\n\n"
        "Rule: the shorter sample has at least {min_chars} significant characters and "
        "{min_distinct} distinct 5-grams, and at least {coverage} of them occur in the other.\n\n"
        "- samples: {samples}; too short to review: {too_short}; reviewed: {reviewed} "
        "(and {same_significant_text} with the same significant text as an earlier one)\n"
        "- signatures: MinHash of {sketch_size} values in bands of {band_rows}; buckets shared by "
        "two or more samples: {buckets}\n"
        "- cap max_postings={max_postings}: {buckets_over_max_postings} buckets compared as a "
        "star, {pairs_skipped_by_max_postings} pairs skipped\n"
        "- pairs sharing fewer than min_shared={min_shared} buckets: {pairs_below_min_shared}\n"
        "- cap max_candidates={max_candidates}: {pairs_over_max_candidates} pairs skipped\n"
        "- comparisons: {comparisons}; confirmed: {confirmed} ({confirmed_but_exact_text} of them "
        "joined as exact text already); rejected for too few distinct 5-grams: "
        "{rejected_min_distinct}; rejected for coverage: {rejected_coverage}",
        "## Bản gần trùng\n\n"
        "Quy tắc: mẫu ngắn hơn có ít nhất {min_chars} ký tự có nghĩa và {min_distinct} 5-gram "
        "khác nhau, và ít nhất {coverage} trong số đó xuất hiện trong mẫu kia.\n\n"
        "- số mẫu: {samples}; quá ngắn để xét: {too_short}; đã xét: {reviewed} "
        "(và {same_significant_text} mẫu có văn bản có nghĩa giống một mẫu trước)\n"
        "- chữ ký: MinHash {sketch_size} giá trị, chia band mỗi band {band_rows}; bucket chung "
        "của hai mẫu trở lên: {buckets}\n"
        "- giới hạn max_postings={max_postings}: {buckets_over_max_postings} bucket được so "
        "sánh theo hình sao, bỏ qua {pairs_skipped_by_max_postings} cặp\n"
        "- cặp có ít hơn min_shared={min_shared} bucket chung: {pairs_below_min_shared}\n"
        "- giới hạn max_candidates={max_candidates}: bỏ qua {pairs_over_max_candidates} cặp\n"
        "- số lần so sánh: {comparisons}; đã xác nhận: {confirmed} ({confirmed_but_exact_text} "
        "cặp đã được nối là văn bản trùng khớp); bị loại vì quá ít 5-gram khác nhau: "
        "{rejected_min_distinct}; bị loại vì độ phủ: {rejected_coverage}",
    ),
    "manual": Bilingual(
        "## Manual joins\n\n{edges} joins from {file}.",
        "## Liên kết thủ công\n\n{edges} liên kết từ {file}.",
    ),
    "largest": Bilingual("## The {count} largest groups", "## {count} nhóm lớn nhất"),
    "largest_line": Bilingual(
        "- group {group}: {size} samples; edges {edges}",
        "- nhóm {group}: {size} mẫu; liên kết {edges}",
    ),
    "member": Bilingual(
        "  - sample {sample_id}: {source_file}:{source_line}",
        "  - mẫu {sample_id}: {source_file}:{source_line}",
    ),
    "member_row": Bilingual(
        "  - sample {sample_id}: {source_file}, row {source_line}",
        "  - mẫu {sample_id}: {source_file}, hàng {source_line}",
    ),
    "more": Bilingual("  - ... and {count} more", "  - ... và {count} mẫu khác"),
    "guarantee": Bilingual("## What this does not guarantee", "## Điều này không bảo đảm"),
}


def _both(lines: Callable[[str], Iterator[str]]) -> str:
    """The document in English, then in Vietnamese."""
    return "\n".join([*lines("en"), "", "---", "", *lines("vi")]) + "\n"


def groups_markdown(content: Mapping, row_files: frozenset[str] = frozenset()) -> str:
    """REPORT.md of a grouping, from its report.json content; ``row_files``: the inputs whose
    records are rows (Parquet), shown as "row N", never as a line."""
    groups, near = content["groups"], content["near_duplicates"]

    def lines(lang: str) -> Iterator[str]:
        yield _T["groups_title"].render(lang, path=content["build"]["path"])
        yield ""
        yield _T["groups_summary"].render(
            lang,
            samples=content["build"]["samples"],
            count=groups["count"],
            singletons=groups["singletons"],
            shared=groups["samples_in_shared_groups"],
            largest=groups["largest"],
        )
        yield ""
        yield _T["edges"].render(lang)
        yield ""
        for kind, count in content["edges"].items():
            yield _T["edge_kind"].render(lang, kind=kind, count=count)
        if content["keys"]:
            yield ""
            yield _T["keys"].render(lang)
            yield ""
            for name, facts in content["keys"].items():
                after = facts["distinct_after_alias_rules"]
                yield _T["key_line"].render(
                    lang,
                    field=name,
                    with_value=facts["samples_with_value"],
                    missing=facts["missing_or_empty"],
                    distinct=facts["distinct_values"],
                    after="" if after is None else _T["after_alias"].render(lang, count=after),
                )
            if content["alias_rules"]:
                yield ""
                yield _T["alias_rules"].render(lang, rules=", ".join(content["alias_rules"]))
        yield ""
        yield _T["exact"].render(
            lang, texts=content["exact"]["texts_shared"], samples=content["exact"]["samples"]
        )
        yield ""
        yield (_T["near"].render(lang, **near) if near["enabled"] else _T["near_off"].render(lang))
        if content["manual"]["file"] is not None:
            yield ""
            yield _T["manual"].render(lang, **content["manual"])
        yield from _largest(lang, content["largest_groups"], row_files)
        yield ""
        yield _T["guarantee"].render(lang)
        yield ""
        yield BOUNDED_SEARCH.render(lang)

    return _both(lines)


def _largest(lang: str, largest: list[dict], row_files: frozenset[str]) -> Iterator[str]:
    if not largest:
        return
    yield ""
    yield _T["largest"].render(lang, count=len(largest))
    yield ""
    for entry in largest:
        edges = ", ".join(f"{kind} {n}" for kind, n in entry["edges"].items() if n)
        yield _T["largest_line"].render(lang, group=entry["group"], size=entry["size"], edges=edges)
        for member in entry["members"]:
            text = _T["member_row" if member["source_file"] in row_files else "member"]
            yield text.render(lang, **member)
        if entry["size"] > len(entry["members"]):
            yield _T["more"].render(lang, count=entry["size"] - len(entry["members"]))


_S = {
    "title": Bilingual("# Split of {path}", "# Phân chia của {path}"),
    "policy": Bilingual(
        "Seed {seed}; ratios {ratios}; {stratified}; {windows}.",
        "Seed {seed}; tỉ lệ {ratios}; {stratified}; {windows}.",
    ),
    "stratified": Bilingual("stratified by {field}", "phân tầng theo {field}"),
    "not_stratified": Bilingual("not stratified", "không phân tầng"),
    "windows_of": Bilingual(
        "evaluation windows of at most {ids} ids", "cửa sổ đánh giá tối đa {ids} id"
    ),
    "no_windows": Bilingual("no evaluation windows", "không có cửa sổ đánh giá"),
    "splits": Bilingual("## Splits", "## Các phần"),
    "split_header": Bilingual(
        "| split | groups | samples | tokens | share of groups | share of tokens |",
        "| phần | nhóm | mẫu | token | tỉ lệ nhóm | tỉ lệ token |",
    ),
    "strata": Bilingual("## Strata (sparse first)", "## Các tầng (thưa trước)"),
    "stratum_header": Bilingual(
        "| stratum | split | target share | target groups | groups | samples | tokens |",
        "| tầng | phần | tỉ lệ mục tiêu | số nhóm mục tiêu | nhóm | mẫu | token |",
    ),
    "unmet": Bilingual("## Unmet targets", "## Các mục tiêu không đạt"),
    "unmet_line": Bilingual(
        "- {stratum}: {split} has {groups} groups, the target is {target_groups}",
        "- {stratum}: {split} có {groups} nhóm, mục tiêu là {target_groups}",
    ),
    "gaps": Bilingual("## Coverage gaps", "## Các khoảng trống"),
    "gap_line": Bilingual(
        "- {stratum}: no group in {split}, though the stratum aims for it",
        "- {stratum}: không có nhóm nào trong {split}, dù tầng này nhắm tới nó",
    ),
    "all_met": Bilingual(
        "Every target was met and every split a stratum aims for got a group.",
        "Mọi mục tiêu đều đạt và mọi phần mà một tầng nhắm tới đều có nhóm.",
    ),
    "review": Bilingual("## Duplicate review", "## Rà soát trùng lặp"),
    "review_line": Bilingual(
        "{groups} groups of two or more samples, {across} across strata; join edges: {edges} "
        "(each inside one split: {by_split}).",
        "{groups} nhóm từ hai mẫu trở lên, {across} nhóm trải qua nhiều tầng; liên kết: {edges} "
        "(mỗi liên kết nằm trong một phần: {by_split}).",
    ),
    "windows": Bilingual("## Evaluation windows", "## Các cửa sổ đánh giá"),
    "window_line": Bilingual(
        "- {split}: {windows} windows of at most {ids} ids over {samples} samples "
        "({predicted_tokens} predicted tokens, {short_windows} shorter windows, "
        "{samples_without_window} samples too short to predict)",
        "- {split}: {windows} cửa sổ, mỗi cửa sổ tối đa {ids} id, trên {samples} mẫu "
        "({predicted_tokens} token được dự đoán, {short_windows} cửa sổ ngắn hơn, "
        "{samples_without_window} mẫu quá ngắn để dự đoán)",
    ),
    "verified": Bilingual(
        "verification.json: every check holds.", "verification.json: mọi kiểm tra đều đạt."
    ),
}


def split_markdown(content: Mapping) -> str:
    """REPORT.md of a split, from its report.json content."""
    policy = content["policy"]

    def lines(lang: str) -> Iterator[str]:
        yield _S["title"].render(lang, path=content["build"]["path"])
        yield ""
        ratios = ", ".join(f"{name}={share:g}" for name, share in policy["ratios"].items())
        field, window = policy["stratify"], policy["window"]
        yield _S["policy"].render(
            lang,
            seed=content["seed"],
            ratios=ratios,
            stratified=(
                _S["stratified"].render(lang, field=field) if field else _S["not_stratified"]
            ),
            windows=_S["windows_of"].render(lang, ids=window + 1) if window else _S["no_windows"],
        )
        yield ""
        yield _S["splits"].render(lang)
        yield ""
        yield _S["split_header"].render(lang)
        yield "|---|---:|---:|---:|---:|---:|"
        for name, facts in content["splits"].items():
            yield (
                f"| {name} | {facts['groups']} | {facts['samples']} | {facts['tokens']} | "
                f"{facts['share_of_groups']:.2%} | {facts['share_of_tokens']:.2%} |"
            )
        yield ""
        yield _S["strata"].render(lang)
        yield ""
        yield _S["stratum_header"].render(lang)
        yield "|---|---|---:|---:|---:|---:|---:|"
        for entry in content["strata"]:
            for name in entry["groups_by_split"]:
                yield (
                    f"| {entry['stratum'] or '-'} | {name} | {entry['ratios'][name]:g} | "
                    f"{entry['target_groups'][name]} | {entry['groups_by_split'][name]} | "
                    f"{entry['samples_by_split'][name]} | {entry['tokens_by_split'][name]} |"
                )
        yield from _misses(lang, content)
        review = content["duplicate_review"]
        yield ""
        yield _S["review"].render(lang)
        yield ""
        yield _S["review_line"].render(
            lang,
            groups=review["groups_of_two_or_more"],
            across=content["groups_across_strata"],
            edges=", ".join(f"{kind} {n}" for kind, n in review["edges"].items()),
            by_split=", ".join(f"{name} {n}" for name, n in review["edges_by_split"].items()),
        )
        if content["windows"]:
            yield ""
            yield _S["windows"].render(lang)
            yield ""
            for name, facts in content["windows"].items():
                yield _S["window_line"].render(lang, split=name, ids=facts["window"] + 1, **facts)
        yield ""
        yield _S["verified"].render(lang)

    return _both(lines)


def _misses(lang: str, content: Mapping) -> Iterator[str]:
    if not content["unmet_targets"] and not content["coverage_gaps"]:
        yield ""
        yield _S["all_met"].render(lang)
        return
    if content["unmet_targets"]:
        yield ""
        yield _S["unmet"].render(lang)
        yield ""
        for miss in content["unmet_targets"]:
            yield _S["unmet_line"].render(lang, **{**miss, "stratum": miss["stratum"] or "-"})
    if content["coverage_gaps"]:
        yield ""
        yield _S["gaps"].render(lang)
        yield ""
        for gap in content["coverage_gaps"]:
            yield _S["gap_line"].render(lang, **{**gap, "stratum": gap["stratum"] or "-"})

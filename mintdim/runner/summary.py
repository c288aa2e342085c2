"""Padding summaries: one build's figures, and the sweep table that ranks jobs by padding.

A build summary is computed from the ``BuildResult`` that ``job.run()`` returns (the same numbers
as each output's stats.json) plus the bytes the output directories take on disk. The sweep table
(``sweep_summary.json`` / ``sweep_summary.md``) lists one row per job, least padding first, with
failed jobs after the others. Both hold no timestamps and no absolute paths of the sweep, so the
same sweep gives byte-identical summaries (``outputs_examples/`` relies on it). Every text here
is in the current language (``lang=`` / ``MINTDIM_LANG``); the ``built ...`` line goes through
the ``mintdim.runner`` logger.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mintdim.shared.human import human_bytes
from mintdim.shared.lang import Bilingual
from mintdim.shared.log import get_logger, show

__all__ = [
    "build_summary",
    "dir_bytes",
    "dumps",
    "error_headline",
    "render_markdown",
    "show_built",
    "sweep_document",
]

_log = get_logger("runner")

BUILT = Bilingual(
    en="built {path}: {samples:,} samples, {tokens:,} tokens in {slots:,} slots, "
    "{pad_tokens:,} pad tokens (padding {padding_ratio:.2%}), {shard_count} shard(s), "
    "{size} on disk",
    vi="đã build {path}: {samples:,} mẫu, {tokens:,} token trong {slots:,} slot, "
    "{pad_tokens:,} token PAD (padding {padding_ratio:.2%}), {shard_count} shard, "
    "{size} trên đĩa",
)

PACKED = Bilingual(
    en="packed {path}: {rows:,} rows of units {sizes}, the fewest any packing could use: "
    "{lower_bound:,} ({algorithm})",
    vi="đã pack {path}: {rows:,} hàng của unit {sizes}, ít nhất mà mọi cách pack cần: "
    "{lower_bound:,} ({algorithm})",
)

_TITLE = Bilingual(en="# MintDim sweep summary", vi="# Tổng kết sweep MintDim")
_COUNTS = Bilingual(
    en="{total} jobs ({state}): {completed} completed, {failed} failed. Ranked from least padding.",
    vi="{total} job ({state}): {completed} hoàn tất, {failed} thất bại. Xếp từ ít padding nhất.",
)
_FINISHED = Bilingual(en="finished", vi="đã xong")
_RUNNING = Bilingual(en="running", vi="đang chạy")
_HEADER = Bilingual(
    en="| rank | job | overrides | sizes | samples | tokens | total slots | pad tokens "
    "| padding ratio | bytes on disk | output |",
    vi="| hạng | job | override | sizes | số mẫu | token | tổng slot | token PAD "
    "| tỉ lệ padding | dung lượng trên đĩa | output |",
)
_DEFAULTS = Bilingual(en="(defaults)", vi="(mặc định)")
_FAILED = Bilingual(en="FAILED: {headline}", vi="THẤT BẠI: {headline}")
_OVERFLOWING = Bilingual(en=" ({count:,} overflowing samples)", vi=" ({count:,} mẫu bị tràn)")
_PICTURES = Bilingual(en="Pictures: {links}", vi="Hình: {links}")
_SWEEP_PICTURE = Bilingual(en="padding per unit set", vi="padding theo bộ unit")
_PLAN_PICTURE = Bilingual(
    en="job {job}: token lengths and planned units", vi="job {job}: độ dài token và unit đã lập"
)

_TOTALS = ("samples", "tokens", "slots", "pad_tokens", "shard_bytes", "bytes_on_disk")


def dir_bytes(path: str | os.PathLike[str]) -> int:
    """Total size of the regular files below ``path`` (0 when it does not exist)."""
    root = Path(path)
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0


def build_summary(result: Any) -> dict[str, Any]:
    """Figures of one finished build: per output directory, then totals over all of them."""
    outputs = []
    for out in result.outputs:
        stats = out.stats
        outputs.append(
            {
                "path": out.path,
                "sizes": sorted(int(size) for size in stats["unit_distribution"]),
                "samples": stats["total_samples"],
                "tokens": stats["total_tokens"],
                "slots": stats["total_slots"],
                "pad_tokens": stats["pad_tokens"],
                "padding_ratio": stats["padding_ratio"],
                "shard_count": stats["shard_count"],
                "shard_bytes": stats["shard_bytes"],
                "bytes_on_disk": dir_bytes(out.path),
                "samples_with_unk": stats["samples_with_unk"],
                "duplicate_samples": stats["duplicate_samples"],
                **({"packing": stats["packing"]} if "packing" in stats else {}),
            }
        )
    totals = {key: sum(o[key] for o in outputs) for key in _TOTALS}
    # Rounded like stats.json's own padding_ratio (6 decimals), so one output's figures agree.
    ratio = totals["pad_tokens"] / totals["slots"] if totals["slots"] else 0.0
    totals["padding_ratio"] = round(ratio, 6)
    return {"outputs": outputs, **totals}


def show_built(summary: dict[str, Any]) -> None:
    """Log one ``built <dir>: ...`` line per output directory of a build summary."""
    for out in summary["outputs"]:
        show(_log, BUILT, size=human_bytes(out["bytes_on_disk"]), **out)
        packing = out.get("packing")
        if packing:
            show(
                _log,
                PACKED,
                path=out["path"],
                rows=sum(packing["rows"].values()),
                sizes=", ".join(packing["rows"]),
                lower_bound=sum(packing["lower_bound_rows"].values()),
                algorithm=packing["algorithm"],
            )


def error_headline(message: str) -> str:
    """``"ErrorName: its sentence"``: the first two lines of a full error message, on one line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if len(lines) >= 2 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else "error"


def _rank_key(row: dict[str, Any]) -> tuple[Any, ...]:
    if row["status"] == "completed":
        return (0, row["padding_ratio"], row["job"])
    return (1, 0.0, row["job"])


def sweep_document(rows: list[dict[str, Any]], finished: bool) -> dict[str, Any]:
    """The content of sweep_summary.json: counts, the best job, and the ranked rows."""
    ranked = sorted(rows, key=_rank_key)
    done = [r for r in ranked if r["status"] == "completed"]
    return {
        "finished": finished,
        "jobs_total": len(ranked),
        "jobs_completed": len(done),
        "jobs_failed": len(ranked) - len(done),
        "least_padding_job": done[0]["job"] if done else None,
        "jobs": ranked,
    }


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(doc: dict[str, Any]) -> str:
    """sweep_summary.md: a heading, one line of counts, and the ranked table."""
    lines = [
        _TITLE.render(),
        "",
        _COUNTS.render(
            total=doc["jobs_total"],
            state=_FINISHED if doc["finished"] else _RUNNING,
            completed=doc["jobs_completed"],
            failed=doc["jobs_failed"],
        ),
        "",
        _HEADER.render(),
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for rank, row in enumerate(doc["jobs"], start=1):
        overrides = " ".join(row["overrides"]) or _DEFAULTS.render()
        if row["status"] != "completed":
            headline = row["error_headline"]
            if row.get("overflowing_samples") is not None:
                headline += _OVERFLOWING.render(count=row["overflowing_samples"])
            failed = _FAILED.render(headline=_cell(headline))
            lines.append(f"| - | {row['job']} | {_cell(overrides)} | {failed} | | | | | | | |")
            continue
        sizes = " / ".join(",".join(str(s) for s in sizes) for sizes in row["sizes"])
        lines.append(
            "| "
            + " | ".join(
                _cell(c)
                for c in (
                    rank,
                    row["job"],
                    overrides,
                    sizes,
                    f"{row['samples']:,}",
                    f"{row['tokens']:,}",
                    f"{row['slots']:,}",
                    f"{row['pad_tokens']:,}",
                    f"{row['padding_ratio']:.2%}",
                    human_bytes(row["bytes_on_disk"]),
                    " ; ".join(row["outputs"]),
                )
            )
            + " |"
        )
    links = [f"[{_SWEEP_PICTURE.render()}]({doc['picture']})"] if doc.get("picture") else []
    for row in doc["jobs"]:
        for picture in row.get("pictures", []):
            links.append(f"[{_PLAN_PICTURE.render(job=row['job'])}]({picture})")
    if links:
        lines += ["", _PICTURES.render(links=" · ".join(links))]
    return "\n".join(lines) + "\n"


def dumps(doc: dict[str, Any]) -> str:
    """Deterministic JSON text for sweep_summary.json."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

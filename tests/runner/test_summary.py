"""The sweep table: ranking, failed rows, rendering, and rows of other launches left out."""

from __future__ import annotations

import json

from mintdim.errors import UnitOverflowError
from mintdim.runner.callbacks import JOB_FILE, SUMMARY_JSON, SUMMARY_MD, write_summary
from mintdim.runner.summary import (
    error_headline,
    render_markdown,
    sweep_document,
)

OVERFLOW = UnitOverflowError.summary.en


def row(job: int, ratio: float | None, **extra: object) -> dict:
    if ratio is None:
        return {
            "job": job,
            "overrides": [f"units.sizes=[[{job}]]"],
            "job_dir": str(job),
            "status": "failed",
            "error_type": "UnitOverflowError",
            "error_headline": f"UnitOverflowError: {OVERFLOW}",
            "error": f"UnitOverflowError:\n{OVERFLOW}",
            **extra,
        }
    return {
        "job": job,
        "overrides": [f"units=u{job}"],
        "job_dir": str(job),
        "status": "completed",
        "sizes": [[64, 128]],
        "samples": 10,
        "tokens": 900,
        "slots": 1000,
        "pad_tokens": 100,
        "padding_ratio": ratio,
        "shard_bytes": 2000,
        "bytes_on_disk": 4096,
        "outputs": [f"{job}/build"],
        **extra,
    }


def test_rows_are_ranked_from_least_padding_with_failures_last() -> None:
    doc = sweep_document([row(0, 0.5), row(1, None), row(2, 0.1), row(3, 0.5)], finished=True)
    assert [r["job"] for r in doc["jobs"]] == [2, 0, 3, 1]
    assert (doc["jobs_total"], doc["jobs_completed"], doc["jobs_failed"]) == (4, 3, 1)
    assert doc["least_padding_job"] == 2


def test_markdown_table_shows_every_column_and_the_failure() -> None:
    text = render_markdown(sweep_document([row(0, 0.25), row(1, None)], finished=True))
    lines = text.splitlines()
    assert lines[0] == "# MintDim sweep summary"
    assert "2 jobs (finished): 1 completed, 1 failed. Ranked from least padding." in lines
    header = next(line for line in lines if line.startswith("| rank"))
    for column in (
        "overrides",
        "sizes",
        "samples",
        "tokens",
        "total slots",
        "pad tokens",
        "padding ratio",
        "bytes on disk",
        "output",
    ):
        assert f"| {column} |" in header
    assert (
        "| 1 | 0 | units=u0 | 64,128 | 10 | 900 | 1,000 | 100 | 25.00% | 4.0 KiB | 0/build |"
        in text
    )
    assert (
        f"| - | 1 | units.sizes=[[1]] | FAILED: UnitOverflowError: {OVERFLOW} | | | | | | | |"
        in text
    )


def test_no_jobs_and_no_completed_jobs() -> None:
    doc = sweep_document([row(0, None)], finished=True)
    assert doc["least_padding_job"] is None
    assert "FAILED" in render_markdown(doc)
    assert sweep_document([], finished=False)["jobs_total"] == 0


def test_helpers() -> None:
    assert (
        error_headline("UnitOverflowError:\nToo long.\n\nSample:\nx")
        == "UnitOverflowError: Too long."
    )
    assert error_headline("plain message") == "plain message"


def test_write_summary_keeps_only_this_launchs_rows(tmp_path) -> None:
    for job, ratio, launch in ((0, 0.3, "new"), (1, 0.2, "new"), (2, 0.0, "old")):
        job_dir = tmp_path / str(job)
        job_dir.mkdir()
        (job_dir / JOB_FILE).write_text(json.dumps(row(job, ratio, launch=launch)))
    doc = write_summary(tmp_path, "new", finished=False)
    assert [r["job"] for r in doc["jobs"]] == [1, 0]
    assert doc["finished"] is False
    written = json.loads((tmp_path / SUMMARY_JSON).read_text())
    assert written == doc
    assert all("launch" not in r for r in written["jobs"])
    assert (tmp_path / SUMMARY_MD).read_text() == render_markdown(doc)
    assert not list(tmp_path.glob(".*.tmp"))

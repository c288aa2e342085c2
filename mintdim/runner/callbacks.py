"""The Hydra callback that writes ``sweep_summary.json`` / ``sweep_summary.md`` for a multirun.

Registered in ``conf/config.yaml`` under ``hydra.callbacks.sweep_summary``. How it copes with
Hydra's behaviour (hydra-core 1.3, checked with the basic and joblib launchers):

- ``on_job_end`` runs for every job, failed ones included, in the process that ran the job
  (a joblib worker, a Ray worker ...). It writes the job's row next to the job
  (``<job dir>/mintdim_job.json``) and rebuilds the summary from all rows of this launch,
  under a file lock, replacing the files atomically.
- ``on_multirun_end`` is skipped by Hydra when any job failed (the sweeper re-raises the first
  job error instead). The command line therefore calls :func:`finish_pending_sweep` when a
  multirun ends with an error, so the table is still finalized and printed.
- Rows carry the launch's timestamp (``launch``, resolved from ``${now:...}`` and shared by
  every job of one launch), so rows left in a reused sweep directory are never mixed in.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hydra.core.utils import JobReturn, JobStatus
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from mintdim.errors import UnitOverflowError
from mintdim.runner.pictures import sweep_picture
from mintdim.runner.summary import dumps, error_headline, render_markdown, sweep_document
from mintdim.shared.durable import write_renamed
from mintdim.shared.lang import Bilingual
from mintdim.shared.log import get_logger, show

try:  # POSIX; elsewhere the summary is rebuilt without a lock.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["JOB_FILE", "SUMMARY_JSON", "SUMMARY_MD", "SweepSummary", "finish_pending_sweep"]

JOB_FILE = "mintdim_job.json"
SUMMARY_JSON = "sweep_summary.json"
SUMMARY_MD = "sweep_summary.md"

_log = get_logger("runner")

WRITTEN = Bilingual(
    en="Sweep summary written to {json} and {md}",
    vi="Đã ghi tổng kết sweep vào {json} và {md}",
)
REUSED_DIR = Bilingual(
    en="[mintdim] warning: {sweep} already holds a sweep summary (a reused hydra.sweep.dir); "
    "this launch's jobs need new output directories and only they are summarised.",
    vi="[mintdim] cảnh báo: {sweep} đã có một tổng kết sweep (hydra.sweep.dir được dùng lại); "
    "các job của lần chạy này cần thư mục output mới và chỉ chúng được tổng kết.",
)
NO_SUMMARY = Bilingual(
    en="job did not return a build summary", vi="job không trả về bản tổng kết build"
)
JOB_FAILED = Bilingual(
    en="[mintdim] job {job} failed: {headline}",
    vi="[mintdim] job {job} thất bại: {headline}",
)

# The sweep this process started, until it is summarised: set by on_multirun_start (which always
# runs in the launching process), cleared by on_multirun_end or finish_pending_sweep.
_pending: dict[str, Any] = {}


def _sweep_dir(config: DictConfig) -> Path:
    path = Path(str(config.hydra.sweep.dir))
    return path if path.is_absolute() else Path(str(config.hydra.runtime.cwd)) / path


def _relative(path: str, base: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(base.resolve()).as_posix()
    except ValueError:
        return path


def job_row(config: DictConfig, job_return: JobReturn, launch: str) -> dict[str, Any]:
    """One row of the table for a finished or failed job."""
    hc = config.hydra
    sweep = _sweep_dir(config)
    row: dict[str, Any] = {
        "job": int(hc.job.num),
        "overrides": list(hc.overrides.task),
        "job_dir": _relative(str(hc.runtime.output_dir), sweep),
    }
    if job_return.status == JobStatus.COMPLETED and isinstance(job_return.return_value, dict):
        summary = job_return.return_value
        row.update(
            status="completed",
            sizes=[o["sizes"] for o in summary["outputs"]],
            samples=summary["samples"],
            tokens=summary["tokens"],
            slots=summary["slots"],
            pad_tokens=summary["pad_tokens"],
            padding_ratio=summary["padding_ratio"],
            shard_bytes=summary["shard_bytes"],
            bytes_on_disk=summary["bytes_on_disk"],
            outputs=[_relative(o["path"], sweep) for o in summary["outputs"]],
            pictures=[f"{row['job_dir']}/{name}" for name in summary.get("pictures", [])],
        )
    else:
        error = job_return._return_value  # the exception; .return_value would re-raise it
        message = str(error) if error is not None else NO_SUMMARY.render()
        row.update(
            status="failed",
            error_type=type(error).__name__,
            error_headline=error_headline(message),
            error=message,
        )
        if isinstance(error, UnitOverflowError):
            row["overflowing_samples"] = error.count
    row["launch"] = launch
    return row


@contextlib.contextmanager
def _locked(sweep: Path) -> Iterator[None]:
    sweep.mkdir(parents=True, exist_ok=True)
    with open(sweep / ".sweep_summary.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _rows(sweep: Path, launch: str) -> list[dict[str, Any]]:
    """The job rows of one launch (without their launch stamp)."""
    rows = []
    for path in sorted(sweep.rglob(JOB_FILE)):
        row = json.loads(path.read_text(encoding="utf-8"))
        if row.get("launch") == launch:
            rows.append({k: v for k, v in row.items() if k != "launch"})
    return rows


def write_summary(sweep: Path, launch: str, finished: bool) -> dict[str, Any]:
    """Rebuild both summary files from this launch's job rows; return the JSON document."""
    with _locked(sweep):
        doc = sweep_document(_rows(sweep, launch), finished=finished)
        if finished:
            doc["picture"] = sweep_picture(sweep, doc)
        write_renamed(sweep / SUMMARY_JSON, dumps(doc).encode("utf-8"))
        write_renamed(sweep / SUMMARY_MD, render_markdown(doc).encode("utf-8"))
    return doc


def _print_table(sweep: Path, doc: dict[str, Any]) -> None:
    print(render_markdown(doc), end="", flush=True)
    print(WRITTEN.render(json=sweep / SUMMARY_JSON, md=SUMMARY_MD), flush=True)


class SweepSummary(Callback):
    """Summarise every job of a multirun, ranked from least padding."""

    def __init__(self, launch: str = "", **_: Any) -> None:
        self.launch = str(launch)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        sweep = _sweep_dir(config)
        if (sweep / SUMMARY_JSON).exists():
            show(_log, REUSED_DIR, logging.WARNING, sweep=sweep)
        _pending.update(sweep=sweep, launch=self.launch)

    def on_job_end(self, config: DictConfig, job_return: JobReturn, **kwargs: Any) -> None:
        if config.hydra.mode != RunMode.MULTIRUN:
            return
        row = job_row(config, job_return, self.launch)
        job_dir = Path(str(config.hydra.runtime.output_dir))
        job_dir.mkdir(parents=True, exist_ok=True)
        write_renamed(
            job_dir / JOB_FILE,
            (json.dumps(row, indent=2, ensure_ascii=False) + "\n").encode("utf-8"),
        )
        if row["status"] == "failed":
            show(_log, JOB_FAILED, logging.ERROR, job=row["job"], headline=row["error_headline"])
        write_summary(_sweep_dir(config), self.launch, finished=False)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        finish_pending_sweep()


def finish_pending_sweep() -> dict[str, Any] | None:
    """Finalize and print the summary of the sweep this process started, if one is pending."""
    if not _pending:
        return None
    sweep, launch = _pending["sweep"], _pending["launch"]
    _pending.clear()
    if not _rows(sweep, launch):
        return None  # no job ran (e.g. a job's config failed to compose): nothing to rank
    doc = write_summary(sweep, launch, finished=True)
    _print_table(sweep, doc)
    return doc

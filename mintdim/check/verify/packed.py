"""A packed build's rows (``units(pack=True)``): each unit's boundary index read and checked.

Read first (:func:`read_rows`), so the other checks know each row's fill and samples: the index
check where each sample belongs, the shard check where PAD begins and which sample an UNK id
is in. Checked once the index is read (:func:`check_rows`):

- every sample of the unit (as sample_index.jsonl places it) is in exactly one row, once;
- each row's samples lie back to back from slot 0, never past the width, each as long as its
  token count;
- the rows are exactly the ones the recorded algorithm (``units/packing.py``) gives for the
  unit's samples' token counts, in sample id order: so nothing here trusts the writer's
  bookkeeping.
"""

from __future__ import annotations

import numpy as np

from mintdim.build.formats import boundaries
from mintdim.build.formats.boundaries import Boundaries
from mintdim.build.units.packing import ALGORITHM, VERSION, pack
from mintdim.check.report import SHOWN_PER_CHECK, VerifyReport
from mintdim.check.verify.manifest import Build

__all__ = ["check_rows", "packing_stats", "read_rows"]


def read_rows(build: Build, report: VerifyReport) -> dict[int, Boundaries]:
    """Each filled packed unit's rows; a unit whose index is missing or unreadable is reported
    and left out (its shards are then checked as if empty of samples)."""
    listed = {entry.path for entry in build.boundary_indexes}
    filled = {shard.unit for shard in build.shards}
    found: dict[int, Boundaries] = {}
    for size in build.sizes if build.packed else []:
        if size not in filled:
            continue
        paths = (boundaries.offsets_path(size), boundaries.samples_path(size))
        absent = [p for p in paths if p not in listed or not (build.root / p).is_file()]
        if absent:
            for path in absent:
                report.add("boundaries", path, "missing")
            continue
        try:
            loaded = boundaries.load(build.root, size)
        except (ValueError, OSError) as err:
            report.add("boundaries", paths[0], "index_line", line=1, problem=str(err))
            continue
        found[size] = loaded
    return found


def check_rows(
    build: Build,
    rows: dict[int, Boundaries],
    units: np.ndarray,
    token_counts: np.ndarray,
    report: VerifyReport,
) -> None:
    """Each unit's rows against its samples: ``units`` (index into ``build.sizes``) and
    ``token_counts`` of every sample, by id, from sample_index.jsonl."""
    for unit, size in enumerate(build.sizes):
        if size not in rows:
            continue
        own = rows[size]
        relative = boundaries.samples_path(size)
        members = np.flatnonzero(units == unit)
        if not _each_once(own, members, size, relative, report):
            continue
        _layout(own, token_counts, size, relative, report)
        packed = pack(token_counts[members], size)
        if own.holds(packed, members):
            continue
        row = _first_difference(packed.offsets, members[packed.samples], own)
        report.add("boundaries", relative, "packing", unit=size, row=row, algorithm=ALGORITHM)


def _each_once(
    own: Boundaries, members: np.ndarray, size: int, relative: str, report: VerifyReport
) -> bool:
    """Whether the rows hold each of ``members`` exactly once (reported when not)."""
    ids, counts = np.unique(own.sample_id, return_counts=True)
    if np.array_equal(ids, members) and (counts == 1).all():
        return True
    shown = SHOWN_PER_CHECK
    report.add(
        "boundaries",
        relative,
        "row_samples",
        unit=size,
        missing=np.setdiff1d(members, ids)[:shown].tolist(),
        extra=np.setdiff1d(ids, members)[:shown].tolist(),
        repeated=ids[counts > 1][:shown].tolist(),
    )
    return False


def _layout(
    own: Boundaries, token_counts: np.ndarray, size: int, relative: str, report: VerifyReport
) -> None:
    """Each row's samples back to back from 0, within the width, as long as their counts."""
    row_of = own.row_of()
    first = np.zeros(own.sample_id.size, dtype=bool)
    held = np.diff(own.offsets) > 0
    first[own.offsets[:-1][held]] = True
    previous_end = np.concatenate(([0], own.start[:-1] + own.length[:-1]))
    wanted_start = np.where(first, 0, previous_end)
    problems = {
        "a sample does not start where the one before it ends (slot 0 for the first)": (
            own.start != wanted_start
        ),
        f"a sample runs past the unit's {size} slots": own.start + own.length > size,
        "a sample's length is not its token_count in sample_index.jsonl": (
            own.length != token_counts[own.sample_id]
        ),
    }
    for problem, bad in problems.items():
        for row in np.unique(row_of[bad])[:SHOWN_PER_CHECK].tolist():
            report.add("boundaries", relative, "row_layout", unit=size, row=row, problem=problem)


def _first_difference(offsets: np.ndarray, ids: np.ndarray, own: Boundaries) -> int:
    """The first row whose samples differ between the expected packing and ``own``."""
    for row in range(max(offsets.size, own.offsets.size) - 1):
        if row + 1 >= offsets.size or row + 1 >= own.offsets.size:
            return row
        want = ids[offsets[row] : offsets[row + 1]]
        have = own.sample_id[own.offsets[row] : own.offsets[row + 1]]
        if not np.array_equal(want, have):
            return row
    return 0  # same samples, other starts: the layout check names the row


def packing_stats(build: Build, rows: dict[int, Boundaries], tokens_by_unit: np.ndarray) -> dict:
    """stats.json's ``packing`` as the rows give it (``tokens_by_unit``: by index into sizes)."""
    filled = {size: own for size, own in rows.items() if own.sample_id.size}
    tokens = dict(zip(build.sizes, tokens_by_unit.tolist(), strict=True))
    return {
        "algorithm": ALGORITHM,
        "version": VERSION,
        "rows": {str(size): own.rows for size, own in filled.items()},
        "lower_bound_rows": {str(size): -(-tokens[size] // size) for size in filled},
    }

"""Packing whole samples into rows (``units/packing.py``): the same rows as a brute-force
best-fit decreasing, every sample once, no row over its width, and near the lower bound on every
real corpus with real tokenizers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim.build.units.packing import pack
from tests.conftest import CORPORA, corpora_file
from tests.unit_build.helpers import reference_encoder


def brute_force(lengths: list[int], width: int) -> list[list[int]]:
    """Best-fit decreasing the slow, obvious way: every open row looked at for every sample;
    the least room that holds it, ties to the row that reached that room last."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    rooms: list[int] = []
    reached: list[int] = []
    rows: list[list[int]] = []
    for clock, i in enumerate(order, start=1):
        fitting = [r for r, room in enumerate(rooms) if room >= lengths[i]]
        if fitting:
            row = min(fitting, key=lambda r: (rooms[r], -reached[r]))
        else:
            rooms.append(width)
            reached.append(0)
            rows.append([])
            row = len(rows) - 1
        rooms[row] -= lengths[i]
        reached[row] = clock
        rows[row].append(i)
    return rows


def polished(lengths: list[int], rows: list[list[int]], width: int) -> list[list[int]]:
    """The polish after best-fit decreasing, the slow way: a loop over rows and samples.

    Passes over the rows emptiest first (ties by row); each of a row's samples, longest first
    (ties by id), moves to the row with the least room holding it among rows at least as full
    (ties by row), else trades with the shorter sample of such a row that leaves it the least
    room (ties by (length desc, id) order); until a pass changes nothing (at most 64)."""
    key = {i: (-lengths[i], i) for i in range(len(lengths))}
    rows = [list(row) for row in rows]
    if len(rows) <= -(-sum(lengths) // width):
        return rows
    fill = [sum(lengths[i] for i in row) for row in rows]
    for _ in range(64):
        changed = False
        for own in sorted(range(len(rows)), key=lambda r: (fill[r], r)):
            for i in sorted(rows[own], key=key.get):
                if i not in rows[own]:
                    continue
                size = lengths[i]
                fits = [
                    r for r in range(len(rows))
                    if r != own and fill[r] >= fill[own] and width - fill[r] >= size
                ]  # fmt: skip
                if fits:
                    target = min(fits, key=lambda r: (width - fill[r], r))
                    rows[own].remove(i)
                    rows[target].append(i)
                    fill[own] -= size
                    fill[target] += size
                    changed = True
                    continue
                trades = [
                    (width - fill[r] - (size - lengths[j]), key[j], j, r)
                    for r in range(len(rows))
                    if r != own and fill[r] >= fill[own]
                    for j in rows[r]
                    if size - (width - fill[r]) <= lengths[j] < size
                ]
                if trades:
                    _, _, j, target = min(trades)
                    rows[own].remove(i)
                    rows[target].remove(j)
                    rows[own].append(j)
                    rows[target].append(i)
                    fill[own] += lengths[j] - size
                    fill[target] += size - lengths[j]
                    changed = True
        if not changed:
            break
    return [sorted(row, key=key.get) for row in rows if row]


def _rows(packing) -> list[list[int]]:
    return [
        packing.samples[packing.offsets[r] : packing.offsets[r + 1]].tolist()
        for r in range(packing.rows)
    ]


@settings(max_examples=300, deadline=None)
@given(
    width=st.integers(1, 64),
    data=st.data(),
)
def test_the_rows_are_brute_force_best_fit_decreasing(width, data):
    # Few distinct lengths (runs of equal samples take the bulk path) and any lengths.
    pool = data.draw(st.lists(st.integers(0, width), min_size=1, max_size=4))
    lengths = data.draw(
        st.one_of(
            st.lists(st.sampled_from(pool), max_size=120),
            st.lists(st.integers(0, width), max_size=120),
        )
    )
    packing = pack(np.array(lengths, dtype=np.int64), width)
    assert _rows(packing) == polished(lengths, brute_force(lengths, width), width)
    # Every sample exactly once, back to back from slot 0 in its row, no row over the width.
    assert sorted(packing.samples.tolist()) == list(range(len(lengths)))
    assert packing.lengths.tolist() == [lengths[i] for i in packing.samples.tolist()]
    for row in range(packing.rows):
        part = slice(packing.offsets[row], packing.offsets[row + 1])
        sizes, starts = packing.lengths[part], packing.starts[part]
        assert starts.tolist() == (np.cumsum(sizes) - sizes).tolist()
        assert int(sizes.sum()) <= width
    assert packing.row_of().tolist() == [
        r for r in range(packing.rows) for _ in range(packing.offsets[r + 1] - packing.offsets[r])
    ]


def test_a_sample_longer_than_the_row_is_refused():
    with pytest.raises(ValueError, match="longer than 8"):
        pack(np.array([3, 9, 2]), 8)
    empty = pack(np.array([], dtype=np.int64), 8)
    assert (empty.rows, empty.lower_bound, empty.padding_ratio) == (0, 0, 0.0)


def _texts(path) -> list[str]:
    """Each row's string values joined by a blank line (lists of strings too: chat turns)."""
    texts = []
    for raw in path.read_bytes().splitlines():
        values = []
        for value in json.loads(raw).values():
            if isinstance(value, str):
                values.append(value)
            elif isinstance(value, list):
                values += [v for v in value if isinstance(v, str)]
        texts.append("\n\n".join(values))
    return texts


TOKENIZERS = [
    "mistral-7b-v0.1.tokenizer.model",
    "albert-base-v2.spiece.model",
    "roberta-base.tokenizer.json",
    "phi-2.tokenizer.json",
]
DATASETS = [path.name for path in sorted((CORPORA / "datasets").glob("*.jsonl"))] or ["absent"]


@pytest.mark.corpora
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("dataset", [*DATASETS, "demo"])
def test_every_corpus_packs_within_one_percent_of_the_lower_bound(tokenizer, dataset):
    """Issue 34's target, on every dataset of ../shared/corpora and the bundled demo, packed into
    rows of 4,096: rows <= ceil(1.01 x ceil(tokens / 4096)) + 1."""
    from mintdim.runner.demo import DEMO_DIR

    encoder = reference_encoder(corpora_file(f"tokenizers/{tokenizer}"))
    if dataset == "demo":
        path = DEMO_DIR / "self_instruct_seed_alpaca.jsonl"
    else:
        path = corpora_file(f"datasets/{dataset}")
    lengths = np.array([len(encoder(text)) for text in _texts(path)], dtype=np.int64)
    lengths = lengths[lengths <= 4096]  # longer ones overflow any unit of 4,096
    packing = pack(lengths, 4096)
    assert sorted(packing.samples.tolist()) == list(range(lengths.size))
    bound = -(-(101 * packing.lower_bound) // 100) + 1
    assert packing.rows <= bound, (packing.rows, packing.lower_bound)


@settings(max_examples=100, deadline=None)
@given(width=st.integers(1, 40), data=st.data())
def test_blocks_of_the_placement_loop_change_no_row(width, data):
    """The loop reads its sizes a block at a time (memory); a run of equal sizes cut by a
    block's end must give the same rows as one read whole."""
    from mintdim.build.units import packing

    pool = data.draw(st.lists(st.integers(0, width), min_size=1, max_size=3))
    lengths = np.array(data.draw(st.lists(st.sampled_from(pool), max_size=80)), dtype=np.int64)
    whole = pack(lengths, width)
    block = data.draw(st.integers(1, 7))
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(packing, "_PLACE_BLOCK", block)
        cut = pack(lengths, width)
    assert _rows(cut) == _rows(whole)
    assert np.array_equal(cut.starts, whole.starts)

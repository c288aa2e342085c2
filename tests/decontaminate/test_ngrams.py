"""The search machinery against brute force: window hashes against Python integers modulo 2**64,
and every run the table finds (whatever its stride, across sample and block boundaries) against
a plain scan of every window of every sample."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim.decontaminate.ngrams import FINDER_BASE, VERIFIER_BASE, Hasher, Table, value_runs
from mintdim.decontaminate.scan import Block, scan


def _hash(ids: list[int], base: int) -> int:
    return sum(x * pow(base, k, 1 << 64) for k, x in enumerate(ids)) % (1 << 64)


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.integers(0, 2**16 - 1), max_size=80),
    length=st.integers(1, 14),
    step=st.integers(1, 5),
)
def test_windows_of_every_step_are_the_polynomial_hash(ids, length, step):
    hasher = Hasher.of(VERIFIER_BASE)
    array = np.array(ids, dtype=np.uint16)
    got = hasher.windows(hasher.prefix(array), length, step)
    want = [
        _hash(ids[i : i + length], VERIFIER_BASE) for i in range(0, len(ids) - length + 1, step)
    ]
    assert got.tolist() == want


def _brute_force(samples, runs) -> set[tuple[int, int, int, int]]:
    """(sample, position, length, gram) of every window equal to a run."""
    wanted = {(r.length, tuple(g)): k for r in runs for k, g in enumerate(r.grams.tolist())}
    lengths = {r.length for r in runs if r.grams.shape[0]}
    found = set()
    for s, ids in enumerate(samples):
        for length in lengths:
            for p in range(len(ids) - length + 1):
                gram = wanted.get((length, tuple(ids[p : p + length])))
                if gram is not None:
                    found.add((s, p, length, gram))
    return found


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    ngram=st.integers(6, 16),
    min_tokens=st.integers(3, 16),
    alphabet=st.integers(6, 12),
    blocks=st.integers(1, 4),
    pad=st.integers(-1, 6),
)
def test_every_run_found_is_every_window_that_equals_one(
    data, ngram, min_tokens, alphabet, blocks, pad
):
    """Ids from a small alphabet so runs recur often (but enough distinct ids for the content
    rule to keep runs of up to 16), values cut from the samples themselves or across their
    boundaries (and some not), any ngram and min_tokens: strides 1 to 4, windows screened at
    multiples of the stride, runs starting anywhere, samples of any length (0 included) back
    to back (``pad`` -1) or in rows as a shard stores them, ``pad`` slots wider than the
    longest, filled with ids of the same alphabet that no run may reach into."""
    ids = st.lists(st.integers(0, alphabet - 1), max_size=40)
    samples = data.draw(st.lists(ids, min_size=1, max_size=12))
    width = max(len(s) for s in samples) + max(pad, 0)
    filler = data.draw(st.lists(st.integers(0, alphabet - 1), min_size=width, max_size=width))
    rows = [s if pad < 0 else s + filler[len(s) :] for s in samples]
    values = [
        samples[data.draw(st.integers(0, len(samples) - 1))][
            data.draw(st.integers(0, 10)) : data.draw(st.integers(0, 40))
        ]
        for _ in range(data.draw(st.integers(1, 6)))
    ]
    # Values across sample boundaries and into the PAD slots too: never found.
    flat = [x for row in rows for x in row]
    for _ in range(2):
        start = data.draw(st.integers(0, max(len(flat) - 1, 0)))
        values.append(flat[start : start + data.draw(st.integers(0, 30))])
    values += data.draw(st.lists(ids, max_size=3))
    runs, *_ = value_runs([np.array(v, dtype=np.int64) for v in values], ngram, min_tokens)
    table = Table(runs, Hasher.of(FINDER_BASE))
    cuts = sorted(data.draw(st.sets(st.integers(1, len(samples)), max_size=blocks)) | {0})
    cuts.append(len(samples))
    parts = []
    for first, last in zip(cuts[:-1], cuts[1:], strict=True):
        if first == last:
            continue
        counts = np.array([len(s) for s in samples[first:last]], dtype=np.int64)
        block = np.array([x for row in rows[first:last] for x in row], dtype=np.uint16)
        starts = None if pad < 0 else np.arange(last - first, dtype=np.int64) * width
        parts.append(Block(np.arange(first, last, dtype=np.int64), counts, block, starts))
    hits = scan(table, parts, workers=2)
    got = set(
        zip(
            hits.sample.tolist(),
            hits.position.tolist(),
            hits.length.tolist(),
            hits.gram.tolist(),
            strict=True,
        )
    )
    assert len(got) == hits.sample.size  # each found once
    assert got == _brute_force(samples, runs)
    order = np.lexsort((hits.gram, hits.length, hits.position, hits.sample))
    assert (order == np.arange(order.size)).all()  # sorted by sample, position, length


def test_a_run_across_two_samples_is_none_at_every_offset_and_stride():
    """Two samples back to back, a run cut from their join at each offset: found in neither
    (what the stride's window sees may lie in the second sample while the run starts in the
    first); cut from one sample at each offset: found there, once."""
    first, second = list(range(100, 140)), list(range(200, 240))
    block = Block(np.array([0, 1]), np.array([40, 40]), np.array(first + second, dtype=np.uint16))
    for ngram in (8, 9, 10, 12, 13):
        for start in range(40 - ngram + 1, 40):  # runs that cross the boundary
            runs, *_ = value_runs([np.array((first + second)[start : start + ngram])], ngram, 8)
            assert scan(Table(runs, Hasher.of(FINDER_BASE)), [block], 1).sample.size == 0
        for start in range(0, 40 - ngram + 1):
            runs, *_ = value_runs([np.array(second[start : start + ngram])], ngram, 8)
            hits = scan(Table(runs, Hasher.of(FINDER_BASE)), [block], 1)
            assert hits.sample.tolist() == [1] and hits.position.tolist() == [start]


def _owners(runs) -> dict[tuple[int, ...], list[tuple[int, int]]]:
    """Each distinct run's ids and where it occurs (value, offset), in occurrence order."""
    found = {}
    for r in runs:
        for g, gram in enumerate(r.grams.tolist()):
            span = slice(r.owner_start[g], r.owner_start[g + 1])
            assert (r.owner_gram[span] == g).all()
            found[tuple(gram)] = list(
                zip(r.owner_value[span].tolist(), r.owner_offset[span].tolist(), strict=True)
            )
    return found


def test_runs_are_grouped_by_their_ids_when_hashes_collide(monkeypatch):
    """Every run hashed alike (the collision a hash cannot rule out): each distinct run is still
    one gram, with every place it occurs, in order, as when the hashes differ."""
    rng = np.random.default_rng(2)
    values = [rng.integers(0, 9, int(rng.integers(0, 30))) for _ in range(40)]
    values += values[:10]  # repeated values: runs shared by several
    want = value_runs(values, 6, 4)
    monkeypatch.setattr(Hasher, "rows", lambda self, matrix, *a: np.zeros(len(matrix), np.uint64))
    got = value_runs(values, 6, 4)
    assert _owners(got[0]) == _owners(want[0])
    assert len(_owners(want[0])) > 50
    for a, b in zip(got[1:], want[1:], strict=True):
        assert np.array_equal(a, b)
    # Without the hash collision, each place of each run is its own ids.
    for gram, places in _owners(want[0]).items():
        for value, offset in places:
            assert tuple(values[value][offset : offset + len(gram)].tolist()) == gram

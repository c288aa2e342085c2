"""The exact planner against brute force over every set of sizes, on many random small histograms."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mintdim import UnitValidationError, plan_units
from mintdim.build.units.optimal import plans_up_to
from mintdim.build.units.planner import padded_rows

_LENGTHS = st.lists(st.integers(min_value=0, max_value=13), min_size=1, max_size=40)


def _cost(lengths: list[int], sizes: tuple[int, ...], cost: str) -> int | None:
    """Cost of one size set, each sample in the smallest size >= it; None when one does not fit."""
    total = 0
    for length in lengths:
        unit = next((s for s in sizes if s >= length), None)
        if unit is None:
            return None
        total += unit if cost == "tokens" else unit * unit
    return total


def _brute_force(lengths, count, align, max_size, cost, unit_cost):
    """The least objective over every set of multiples of align (at most count of them)."""
    top = max(max(lengths), 1)
    limit = -(-top // align) * align if max_size is None else max_size - max_size % align
    fitting = [n for n in lengths if n <= limit]
    if not fitting:
        return 0
    multiples = range(align, limit + 1, align)
    most = len(multiples) if count is None else count
    best = None
    for k in range(1, most + 1):
        for sizes in itertools.combinations(multiples, k):
            value = _cost(fitting, sizes, cost)
            if value is None:
                continue
            if unit_cost is not None:
                value += unit_cost * k
            best = value if best is None else min(best, value)
    return best


def _check_figures(plan, lengths, cap, align):
    """The plan's own figures, recomputed from its sizes; ``cap`` is the largest allowed size."""
    sizes = plan.sizes
    assert list(sizes) == sorted(set(sizes))
    assert all(s % align == 0 and s > 0 for s in sizes)
    fit = [n for n in lengths if cap is None or n <= cap]
    assert plan.too_long.tolist() == [i for i, n in enumerate(lengths) if n not in fit]
    if fit:
        assert cap is None or sizes[-1] <= cap
        assert sizes[-1] >= max(fit)
    units = [next(s for s in sizes if s >= n) for n in fit]
    assert plan.total_slots == sum(units)
    assert plan.total_tokens == sum(fit)
    assert plan.pad_tokens == sum(units) - sum(fit)
    assert plan.samples_per_unit == tuple(units.count(size) for size in sizes)


@settings(max_examples=300, deadline=None)
@given(
    lengths=_LENGTHS,
    count=st.integers(min_value=1, max_value=5),
    align=st.sampled_from([1, 1, 2, 3, 4]),
    cost=st.sampled_from(["tokens", "attention"]),
)
def test_count_plan_equals_brute_force(lengths, count, align, cost):
    plan = plan_units(np.array(lengths), count, align=align, cost=cost)
    assert plan.objective == _brute_force(lengths, count, align, None, cost, None)
    assert len(plan.sizes) <= count
    _check_figures(plan, lengths, None, align)


@settings(max_examples=200, deadline=None)
@given(
    lengths=_LENGTHS,
    count=st.integers(min_value=1, max_value=4),
    align=st.sampled_from([1, 2, 3]),
    max_size=st.integers(min_value=3, max_value=14),
    cost=st.sampled_from(["tokens", "attention"]),
)
def test_max_size_plan_equals_brute_force_and_lists_what_does_not_fit(
    lengths, count, align, max_size, cost
):
    plan = plan_units(np.array(lengths), count, align=align, max_size=max_size, cost=cost)
    assert plan.objective == _brute_force(lengths, count, align, max_size, cost, None)
    _check_figures(plan, lengths, max_size - max_size % align, align)


@settings(max_examples=200, deadline=None)
@given(
    lengths=_LENGTHS,
    unit_cost=st.sampled_from([0, 1, 2.5, 7, 20, 100]),
    align=st.sampled_from([1, 2]),
    cost=st.sampled_from(["tokens", "attention"]),
)
def test_unit_cost_chooses_the_count_exactly(lengths, unit_cost, align, cost):
    plan = plan_units(np.array(lengths), None, align=align, cost=cost, unit_cost=unit_cost)
    best = _brute_force(lengths, None, align, None, cost, unit_cost)
    assert plan.objective + unit_cost * len(plan.sizes) == best
    _check_figures(plan, lengths, None, align)


def test_large_counts_use_exact_integers():
    # 2**40 squared overflows int64: the attention objective must still be exact.
    lengths = np.array([2**40, 2**40 - 1, 3, 2**39], dtype=np.int64)
    plan = plan_units(lengths, 2, cost="attention")
    assert plan.sizes == (2**39, 2**40)
    assert plan.objective == 2 * (2**39) ** 2 + 2 * (2**40) ** 2


def test_demo_like_histogram_one_unit_is_the_longest_sample():
    plan = plan_units(np.array([5, 9, 9, 300]), 1)
    assert plan.sizes == (300,)
    assert plan.pad_tokens == 4 * 300 - 323
    assert plan.padding_ratio == pytest.approx((1200 - 323) / 1200)


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"count": 0}, "count"),
        ({"count": 2.0}, "count"),
        ({"count": 2, "align": 0}, "align"),
        ({"count": 2, "cost": "flops"}, "cost"),
        ({"count": None}, "unit_cost"),
        ({"count": None, "unit_cost": -1}, "unit_cost"),
        ({"count": 2, "unit_cost": 3}, "unit_cost"),
        ({"count": 2, "align": 8, "max_size": 4}, "max_size"),
    ],
)
def test_bad_options_are_named(kwargs, key):
    with pytest.raises(UnitValidationError) as caught:
        plan_units(np.array([1, 2, 3]), **kwargs)
    assert caught.value.key == key


def test_bad_counts_are_named():
    with pytest.raises(UnitValidationError) as caught:
        plan_units(np.array([1.5, 2.0]), 2)
    assert caught.value.key == "counts"
    with pytest.raises(UnitValidationError):
        plan_units(np.array([3, -1]), 2)


def _reference_dp(candidates: np.ndarray, weights: np.ndarray, layers: int, square: bool) -> int:
    """The plain O(k m^2) DP over every cut, no monotonicity assumed."""
    f = candidates * candidates if square else candidates
    w = np.concatenate([[0], np.cumsum(weights)])
    best = f * w[1:]
    for _ in range(1, min(layers, candidates.size)):
        table = best[:, None] + f[None, :] * (w[None, 1:] - w[1:, None])
        table[np.tril_indices(candidates.size)] = np.iinfo(np.int64).max
        best = np.minimum(best, table.min(axis=0))
    return int(best[-1])


@pytest.mark.parametrize("seed", range(6))
def test_hundreds_of_candidates_match_the_plain_dp(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 600, size=5000) * rng.integers(1, 3, size=5000)
    square = seed % 2 == 1
    plan = plan_units(lengths, 7, cost="attention" if square else "tokens")
    candidates, weights = np.unique(lengths, return_counts=True)
    assert plan.objective == _reference_dp(candidates, weights, 7, square)


@settings(max_examples=60, deadline=None)
@given(lengths=_LENGTHS, most=st.integers(min_value=1, max_value=6), align=st.sampled_from([1, 3]))
def test_plans_up_to_equal_one_plan_per_count(lengths, most, align):
    table = plans_up_to(np.array(lengths), most, align=align, cost="attention")
    for k, plan in enumerate(table, start=1):
        alone = plan_units(np.array(lengths), k, align=align, cost="attention")
        assert (plan.sizes, plan.objective, plan.count) == (alone.sizes, alone.objective, k)


@settings(max_examples=150, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 600), max_size=40),
    picks=st.lists(st.booleans(), min_size=40, max_size=40),
    extra=st.sampled_from([0, 1, 7, 200]),
    narrowest=st.sampled_from([1, 255, 256, 257, 512]),
    dtype=st.sampled_from([np.uint16, np.uint32]),
)
def test_padded_rows_equal_one_row_built_at_a_time(lengths, picks, extra, narrowest, dtype):
    """Narrow units are filled by one masked store, wide ones (past 256) one slice per row:
    both must give each selected sample's ids, then the pad id, row by row, in sample order."""
    lengths = np.asarray(lengths, dtype=np.int64)
    selected = np.asarray(picks[: lengths.size], dtype=bool)
    width = max(narrowest, int(lengths[selected].max(initial=0))) + extra
    flat = np.arange(1, int(lengths.sum()) + 1, dtype=np.int32) % 60_000
    starts = np.cumsum(lengths) - lengths
    expected = [
        list(flat[start : start + n]) + [65_535] * (width - n)
        for start, n, keep in zip(starts, lengths, selected, strict=True)
        if keep
    ]
    rows = padded_rows(flat, lengths, selected, width, 65_535, np.dtype(dtype))
    assert rows.dtype == dtype and rows.shape == (len(expected), width)
    assert rows.tolist() == expected


def test_padded_rows_refuse_a_sample_wider_than_its_unit():
    lengths = np.asarray([3, 300], dtype=np.int64)
    flat = np.zeros(303, dtype=np.int32)
    for width in (200, 299):
        with pytest.raises(ValueError, match="over the width"):
            padded_rows(flat, lengths, np.asarray([True, True]), width, 0, np.dtype(np.uint16))

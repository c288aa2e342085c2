"""The exact unit-size planner: the fewest padded slots any set of at most k unit sizes allows.

Problem. Every sample goes to the smallest unit that holds it (``units/planner.assign_units``),
so a set of sizes ``s_1 < ... < s_k`` costs ``sum over samples of f(unit(sample))`` with
``f(u) = u`` (slots written, ``cost="tokens"``) or ``f(u) = u * u`` (slots weighted by the
quadratic cost of attention over a unit, ``cost="attention"``, as fairseq issue 5011 asks).

Candidates. Only ``m`` sizes can be optimal: each distinct length rounded up to a multiple of
``align`` (a unit between two candidates can drop to the lower one and hold the same samples).
With the candidates ascending, ``W[j]`` the samples at or below candidate ``j`` and a unit at
candidate ``j`` that takes candidates ``i+1 .. j``, a plan is a path ``0 = i_0 < ... < i_k = m``
with cost ``sum f(c[i_t]) * (W[i_t] - W[i_{t-1}])``. That weight is Monge
(``w(i,j) + w(i',j') <= w(i,j') + w(i',j)`` for ``i < i'``, ``j < j'``, because
``(f_j' - f_j) (W_i' - W_i) >= 0``), so the best previous cut is monotone in ``j`` and each
layer of the k-layer DP is solved by divide and conquer in O(m log m): the recursion is run one
level at a time with numpy over every subproblem of that level, so Python loops only over the
k layers and log m levels. With ``unit_cost=lambda`` the planner also chooses k: the k-unit
optimum of a Monge path is convex in k (Aggarwal, Schieber, Tokuyama 1994), so layers are added
while one more unit saves more than ``lambda``.

Arithmetic is exact: int64 when the largest possible cost fits, else Python integers.
"""

from __future__ import annotations

import numpy as np

from mintdim.build.contracts import UnitPlan, largest_allowed
from mintdim.build.units.validate import plan_options, token_counts

__all__ = ["plan_units", "plans_up_to"]

_INT64_SAFE = 1 << 61
"""Below this bound every sum of two costs still fits in int64."""


def plan_units(
    counts: object,
    count: int | None,
    *,
    align: int = 1,
    max_size: int | None = None,
    cost: str = "tokens",
    unit_cost: float | None = None,
) -> UnitPlan:
    """The exactly optimal unit sizes for the token ``counts`` (one int per sample).

    ``count``: at most this many sizes (fewer only when there are fewer distinct candidates).
    ``count=None`` with ``unit_cost=lambda`` chooses the number too, minimising
    ``cost + lambda * units``. ``align``: every size is a multiple of it. ``max_size``: no
    size above it; the samples longer than the largest allowed size are listed in
    ``too_long`` and left out of every figure. ``cost``: ``"tokens"`` or ``"attention"``.
    """
    o = plan_options(count, align, max_size, cost, unit_cost)
    problem = _Problem(token_counts(counts), o.align, o.max_size, o.cost)
    cuts = problem.layers(o.count, o.unit_cost)
    return problem.plan(_path(cuts, len(cuts) + 1, problem.candidates.size), o.count, o.unit_cost)


def plans_up_to(
    counts: object,
    most: int,
    *,
    align: int = 1,
    max_size: int | None = None,
    cost: str = "tokens",
) -> tuple[UnitPlan, ...]:
    """``plan_units(counts, k, ...)`` for every k = 1 .. most, from one run of the DP.

    Fewer plans come back when there are fewer than ``most`` candidate sizes.
    """
    o = plan_options(most, align, max_size, cost, None)
    most = o.count
    problem = _Problem(token_counts(counts), o.align, o.max_size, o.cost)
    cuts = problem.layers(most, None)
    m = problem.candidates.size
    return tuple(problem.plan(_path(cuts, k, m), k, None) for k in range(1, min(most, m) + 1))


class _Problem:
    """One planning problem reduced to its histogram: candidates, their weights, the DP."""

    def __init__(self, counts: np.ndarray, align: int, max_size: int | None, cost: str) -> None:
        self.align, self.max_size, self.cost = align, max_size, cost
        cap = largest_allowed(max_size, align)
        self.too_long = np.empty(0, np.int64) if cap is None else np.flatnonzero(counts > cap)
        # One pass over the samples; everything after works on the m distinct lengths.
        self.lengths, self.length_samples = _histogram(counts)
        fit = slice(None) if cap is None else self.lengths <= cap
        self.fit_lengths, self.fit_samples = self.lengths[fit], self.length_samples[fit]
        self.candidates, self.weights = _candidates(self.fit_lengths, self.fit_samples, align)

    def layers(self, most: int | None, unit_cost: float | None) -> list[np.ndarray]:
        """The cut arrays of DP layers 2, 3, ... (see :func:`_layers`)."""
        return _layers(self.candidates, self.weights, self.cost, most, unit_cost)

    def plan(self, chosen: np.ndarray, count: int | None, unit_cost: float | None) -> UnitPlan:
        """The plan that uses the candidates at indexes ``chosen``, with its figures."""
        sizes = self.candidates[chosen]
        per_unit = np.bincount(
            np.searchsorted(sizes, self.candidates), weights=self.weights, minlength=sizes.size
        ).astype(np.int64)
        total_tokens = _dot(self.fit_lengths, self.fit_samples)
        slots = _dot(per_unit, sizes)
        squares = sizes.astype(object) ** 2
        objective = slots if self.cost == "tokens" else _dot(per_unit, squares)
        return UnitPlan(
            sizes=tuple(int(s) for s in sizes),
            samples_per_unit=tuple(int(n) for n in per_unit),
            total_tokens=total_tokens,
            total_slots=slots,
            pad_tokens=slots - total_tokens,
            padding_ratio=(slots - total_tokens) / slots if slots else 0.0,
            objective=objective,
            count=count,
            align=self.align,
            max_size=self.max_size,
            cost=self.cost,
            unit_cost=unit_cost,
            too_long=self.too_long,
            lengths=self.lengths,
            length_samples=self.length_samples,
        )


def _candidates(
    lengths: np.ndarray, samples: np.ndarray, align: int
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate sizes (ascending) and how many samples round up to each, from the histogram."""
    # A length of 0 still needs a unit of at least one alignment step.
    steps = np.maximum(-(-lengths // align), 1)
    if not steps.size:
        return steps, samples
    # lengths ascend, so equal steps are neighbours: one sum per run of them.
    starts = np.flatnonzero(np.diff(steps, prepend=-1))
    return steps[starts] * align, np.add.reduceat(samples, starts)


def _dot(a: np.ndarray, b: np.ndarray) -> int:
    """Exact sum of products, in Python integers (no int64 overflow)."""
    return int(np.dot(a.astype(object), b.astype(object))) if a.size else 0


def _histogram(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (ascending, int64) and how often each occurs."""
    if not values.size:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if values.max() <= 4 * values.size + (1 << 20):
        # Counting is ~30x cheaper than sorting 10 million lengths, when the table stays small.
        table = np.bincount(values)
        present = np.flatnonzero(table)
        return present.astype(np.int64), table[present].astype(np.int64)
    present, occurrences = np.unique(values, return_counts=True)
    return present.astype(np.int64), occurrences.astype(np.int64)


def _layers(
    candidates: np.ndarray,
    weights: np.ndarray,
    cost: str,
    most: int | None,
    unit_cost: float | None,
) -> list[np.ndarray]:
    """Run the DP; ``cuts[t - 2][j]`` is where the last of t units covering 1..j starts.

    ``most`` layers at most (bounded by m); with ``most=None`` layers are added while one more
    unit saves more than ``unit_cost``.
    """
    m = candidates.size
    if m == 0:
        return []
    largest = int(candidates[-1]) if cost == "tokens" else int(candidates[-1]) ** 2
    dtype = np.int64 if largest * int(weights.sum()) < _INT64_SAFE else object
    sizes = np.concatenate([[0], candidates]).astype(dtype)
    f = sizes if cost == "tokens" else sizes * sizes
    w = np.concatenate([[0], np.cumsum(weights)]).astype(dtype)
    # best[j]: least cost covering candidates 1..j with exactly t units (layer t); j >= t.
    best = f * w
    cuts: list[np.ndarray] = []
    limit = m if most is None else min(most, m)
    for t in range(2, limit + 1):
        new, cut = _layer(best, f, w, t, m)
        if most is None and not best[m] - new[m] > unit_cost:
            break  # convex in t: no further unit saves more than it costs
        best = new
        cuts.append(cut)
    return cuts


def _path(cuts: list[np.ndarray], units: int, m: int) -> np.ndarray:
    """Indexes into the candidates of the optimal ``units`` sizes, by following the cuts back."""
    if m == 0:
        return np.empty(0, np.int64)
    chosen = [m]
    for cut in reversed(cuts[: units - 1]):
        chosen.append(int(cut[chosen[-1]]))
    return np.asarray(chosen[::-1], dtype=np.int64) - 1


def _layer(
    prev: np.ndarray, f: np.ndarray, w: np.ndarray, t: int, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """One DP layer: ``new[j] = min_{t-1 <= i < j} prev[i] + f[j] * (w[j] - w[i])`` for j >= t.

    Divide and conquer on j, all subproblems of one recursion level at once: each subproblem
    is a range of j with a range of i holding its optimum; its middle j is solved by scanning
    its i range, and the cut found splits the i ranges of its two halves.
    """
    new = np.zeros(m + 1, dtype=prev.dtype)
    cut = np.zeros(m + 1, dtype=np.int64)
    lo = np.array([t])
    hi = np.array([m])
    i_lo = np.array([t - 1])
    i_hi = np.array([m - 1])
    while lo.size:
        mid = (lo + hi) // 2
        width = np.minimum(i_hi, mid - 1) - i_lo + 1
        starts = np.cumsum(width) - width
        i = np.arange(int(width.sum())) + np.repeat(i_lo - starts, width)
        fj = np.repeat(f[mid], width)
        values = prev[i] + fj * (np.repeat(w[mid], width) - w[i])
        least = np.minimum.reduceat(values, starts)
        # The first i reaching the minimum: leftmost minima of a Monge array are monotone.
        hits = np.flatnonzero(values == np.repeat(least, width))
        arg = i[hits[np.searchsorted(hits, starts)]]
        new[mid] = least
        cut[mid] = arg
        left = mid > lo
        right = mid < hi
        lo, hi, i_lo, i_hi = (
            np.concatenate([lo[left], mid[right] + 1]),
            np.concatenate([mid[left] - 1, hi[right]]),
            np.concatenate([i_lo[left], arg[right]]),
            np.concatenate([arg[left], i_hi[right]]),
        )
    return new, cut

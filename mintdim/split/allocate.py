"""Seeded, stratified allocation of whole groups to train, validation and test.

Rules, in order:

1. A group is allocated once, and all its members follow it, also when they lie in several
   strata (a group *touches* each stratum one of its members is in).
2. Strata are processed sparse first: fewest touching groups, then by name. A stratum's
   targets are group counts: its touching groups times its ratios, by largest remainder. Then
   the first splits with a positive ratio get at least one group each, as far as there are
   groups: a one-group stratum keeps it in train, a two-group stratum aims for train and
   validation, three or more for all three.
3. Groups already allocated by a sparser stratum count towards the targets; the stratum's other
   groups fill what is still missing (train, validation, test one each first, then by
   largest remainder), in an order drawn from ``seed`` and the stratum's place.
4. Group counts are primary; then bounded, seeded swaps between a validation or test group and
   a train group allocated in the same stratum improve the token balance (the sum over splits
   of |tokens - ratio x stratum tokens|), never changing a count.

Every target a stratum misses, and every split it aimed for (a target of one group or more)
that got no group (a coverage gap), is reported, never hidden. The result depends on the inputs and ``seed``
alone: the draws are raw 64-bit PCG64 output (stable across NumPy versions and platforms).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from mintdim.errors import SplitRatioError
from mintdim.split.layout import SPLIT_NAMES

__all__ = ["SWAP_CANDIDATES", "SWAP_ROUNDS", "Allocation", "allocate", "parse_ratios"]

SWAP_ROUNDS = 4
"""Passes over a stratum's validation and test groups looking for a better swap."""
SWAP_CANDIDATES = 8
"""Train groups drawn for each of them per pass."""
_TOLERANCE = 1e-9


def parse_ratios(value: object, option: str = "ratios") -> tuple[float, float, float]:
    """``{"train": .98, "validation": .01, "test": .01}`` or ``"train=0.98,validation=0.01,
    test=0.01"`` as (train, validation, test); a split left out is 0. ``SplitRatioError``
    unless each is a number >= 0 and they sum to 1."""
    shares = dict.fromkeys(SPLIT_NAMES, 0.0)
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if not parts or any(part.count("=") != 1 for part in parts):
            raise SplitRatioError(option=option, value=value, problem="form")
        value = dict(part.split("=") for part in parts)
    if not isinstance(value, Mapping) or not value:
        raise SplitRatioError(option=option, value=value, problem="form")
    for name, share in value.items():
        if name not in shares:
            raise SplitRatioError(option=option, value=value, problem="unknown_split")
        try:
            number = float(share) if not isinstance(share, bool) else float("nan")
        except (TypeError, ValueError):
            raise SplitRatioError(option=option, value=value, problem="form") from None
        if not number >= 0 or number == float("inf"):
            raise SplitRatioError(option=option, value=value, problem="negative")
        shares[name] = number
    total = sum(shares.values())
    if abs(total - 1) > 1e-6:
        raise SplitRatioError(option=option, value=value, problem="sum", total=round(total, 9))
    return tuple(shares[name] for name in SPLIT_NAMES)


@dataclass(frozen=True, slots=True)
class Allocation:
    """Each group's split and what each stratum got."""

    split_of_group: np.ndarray
    """Per group (in the order of ``groups``): 0 train, 1 validation, 2 test."""
    strata: list[dict]
    """Per stratum, in processing order: its name, ratios, targets and what it got."""


def allocate(
    group_index: np.ndarray,
    stratum_index: np.ndarray,
    strata: list[str],
    tokens: np.ndarray,
    ratios: tuple[float, float, float],
    ratios_by_stratum: Mapping[str, tuple[float, float, float]],
    seed: int,
) -> Allocation:
    """Allocate groups. ``group_index``/``stratum_index``: each sample's group and stratum as
    positions (``strata`` names them); ``tokens``: each sample's token count."""
    groups = int(group_index.max()) + 1 if group_index.size else 0
    # Tokens of each (group, stratum) pair: a group's weight inside one stratum.
    pair = group_index * max(len(strata), 1) + stratum_index
    keys = np.unique(pair)
    pair_tokens = np.bincount(np.searchsorted(keys, pair), weights=tokens, minlength=keys.size)
    pair_group, pair_stratum = np.divmod(keys, max(len(strata), 1))
    touching = np.bincount(pair_stratum, minlength=len(strata))
    order = sorted(range(len(strata)), key=lambda s: (int(touching[s]), strata[s]))
    split_of = np.full(groups, -1, dtype=np.int64)
    report = []
    for place, stratum in enumerate(order):
        rows = np.flatnonzero(pair_stratum == stratum)  # ascending group ids
        members, weights = pair_group[rows], pair_tokens[rows]
        shares = ratios_by_stratum.get(strata[stratum], ratios)
        rng = np.random.PCG64(np.random.SeedSequence([seed, place]))
        report.append(_stratum(strata[stratum], members, weights, shares, split_of, rng))
    return Allocation(split_of, report)


def _stratum(
    name: str,
    members: np.ndarray,
    weights: np.ndarray,
    shares: tuple[float, float, float],
    split_of: np.ndarray,
    rng: np.random.PCG64,
) -> dict:
    """Allocate one stratum's unallocated groups (in place) and describe the stratum."""
    targets = group_targets(members.size, shares)
    before = split_of[members]
    already = np.bincount(before[before >= 0], minlength=3)
    fresh = np.flatnonzero(before < 0)
    counts = _fill(np.maximum(targets - already, 0), fresh.size)
    drawn = fresh[np.argsort(rng.random_raw(fresh.size), kind="stable")]
    chosen = np.zeros(fresh.size, dtype=np.int64)
    chosen[: counts[1]] = 1
    chosen[counts[1] : counts[1] + counts[2]] = 2
    split_of[members[drawn]] = chosen
    goal = np.asarray(shares) * weights.sum()
    swaps = _swap(members[drawn], weights[drawn], split_of, members, weights, goal, rng)
    final = split_of[members]
    got = np.bincount(final, minlength=3)
    token_sums = np.bincount(final, weights=weights, minlength=3)
    return {
        "stratum": name,
        "ratios": dict(zip(SPLIT_NAMES, shares, strict=True)),
        "groups": int(members.size),
        "groups_allocated_earlier": int(members.size - fresh.size),
        "target_groups": dict(zip(SPLIT_NAMES, targets.tolist(), strict=True)),
        "groups_by_split": dict(zip(SPLIT_NAMES, got.tolist(), strict=True)),
        "target_tokens": dict(zip(SPLIT_NAMES, np.round(goal, 3).tolist(), strict=True)),
        "tokens_by_split": dict(
            zip(SPLIT_NAMES, token_sums.astype(np.int64).tolist(), strict=True)
        ),
        "swaps": swaps,
        "unmet_targets": [
            {"split": split, "target_groups": int(want), "groups": int(have)}
            for split, want, have in zip(SPLIT_NAMES, targets, got, strict=True)
            if want != have
        ],
        "coverage_gaps": [
            split
            for split, want, have in zip(SPLIT_NAMES, targets, got, strict=True)
            if want > 0 and have == 0
        ],
    }


def group_targets(count: int, shares: tuple[float, float, float]) -> np.ndarray:
    """Group counts per split: ``count x shares`` by largest remainder, then at least one for
    each of the first ``count`` splits with a positive share."""
    exact = np.asarray(shares) * count
    targets = np.floor(exact + _TOLERANCE).astype(np.int64)
    left = count - int(targets.sum())
    if left > 0:
        # Largest remainder; ties go to the earlier split (train first).
        order = np.lexsort((np.arange(3), -(exact - targets)))
        targets[order[:left]] += 1
    aimed = [k for k in range(3) if shares[k] > 0][:count]
    for k in aimed:
        if targets[k] == 0:
            donor = int(np.argmax(targets))
            targets[donor] -= 1
            targets[k] += 1
    return targets


def _fill(want: np.ndarray, available: int) -> np.ndarray:
    """How many of ``available`` groups each split gets towards ``want``: one each in split
    order first, then the rest by largest remainder of what is still wanted."""
    counts = np.zeros(3, dtype=np.int64)
    for k in range(3):
        if want[k] > 0 and available > counts.sum():
            counts[k] = 1
    left = available - int(counts.sum())
    extra = want - counts
    if left <= 0:
        return counts
    if extra.sum() <= left:
        counts += extra
        counts[0] += left - int(extra.sum())
        return counts
    exact = extra * left / extra.sum()
    taken = np.floor(exact + _TOLERANCE).astype(np.int64)
    rest = left - int(taken.sum())
    order = np.lexsort((np.arange(3), -(exact - taken)))
    taken[order[:rest]] += 1
    return counts + taken


def _swap(
    fresh: np.ndarray,
    fresh_weights: np.ndarray,
    split_of: np.ndarray,
    members: np.ndarray,
    weights: np.ndarray,
    goal: np.ndarray,
    rng: np.random.PCG64,
) -> int:
    """Seeded bounded swaps of this stratum's fresh groups; returns how many were made."""
    trains = np.flatnonzero(split_of[fresh] == 0)
    evals = np.flatnonzero(split_of[fresh] > 0)
    if not trains.size or not evals.size:
        return 0
    current = np.bincount(split_of[members], weights=weights, minlength=3)
    made = 0
    for _ in range(SWAP_ROUNDS):
        improved = False
        for e in evals.tolist():
            draws = rng.random_raw(SWAP_CANDIDATES) % np.uint64(trains.size)
            candidates = trains[draws.astype(np.int64)]
            side = int(split_of[fresh[e]])
            delta = fresh_weights[candidates] - fresh_weights[e]  # tokens moving into ``side``
            moved = np.repeat(current[None, :], candidates.size, axis=0)
            moved[:, side] += delta
            moved[:, 0] -= delta
            cost = np.abs(moved - goal).sum(axis=1)
            best = int(np.argmin(cost))
            if cost[best] < np.abs(current - goal).sum() - _TOLERANCE:
                t = candidates[best]
                split_of[fresh[t]], split_of[fresh[e]] = side, 0
                current = moved[best]
                trains[trains == t] = e
                made += 1
                improved = True
        evals = np.flatnonzero(split_of[fresh] > 0)
        if not improved:
            break
    return made

"""The training loader on real builds: coverage, disjointness, lockstep, determinism, exact resume,
mixtures, accumulation windows and label rules.

Expected tokens come from the tokenizer libraries and sample places from sample_index.jsonl
(parsed here), never from the loader's own reading code.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import multiprocessing
import pickle
import re
import subprocess
import sys
from collections import Counter
from functools import cached_property
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

import mintdim
from mintdim import LoaderOptionError, LoaderStateError, open_build
from mintdim.read import loader as loader_module
from mintdim.read.loader import (
    LoaderOptions,
    UnitBatch,
    UnitLoader,
    epoch_plan,
)
from tests.conftest import corpora_file, training_text
from tests.unit_build import loader_loops
from tests.unit_build.helpers import job, read_jsonl, reference_encoder, write_jsonl

REPO = Path(__file__).resolve().parents[2]
SIZES = [8, 16, 24, 32, 48, 64, 128]


def _build(root: Path, name: str, texts: list[str], tokenizer: Path, **options) -> Path:
    data = write_jsonl(root / f"{name}.jsonl", [{"text": t} for t in texts])
    out = root / name
    job(
        [str(data)],
        tokenizer,
        sizes=[options.get("sizes", SIZES)],
        samples_per_shard=[options.get("samples_per_shard", 13)],
        build_batch=[64],
        out=str(out),
    ).run(workers=1, progress=False)
    return out


@pytest.fixture(scope="module")
def sp_build(tmp_path_factory, sp_model) -> tuple[Path, list[str], Path]:
    """600 samples of 3 to 20 words through a real SentencePiece model; 13 records a shard."""
    texts = training_text(600, seed=11)
    return _build(tmp_path_factory.mktemp("sp"), "sp", texts, sp_model), texts, sp_model


@pytest.fixture(scope="module")
def hf_build(tmp_path_factory, hf_json) -> Path:
    """250 samples through a real BPE tokenizer.json (a second build for mixtures)."""
    texts = training_text(250, seed=5)
    return _build(tmp_path_factory.mktemp("hf"), "hf", texts, hf_json)


def _ids(batches) -> list[list[int]]:
    return [b.sample_ids.tolist() for b in batches]


def _ranks(builds, world_size: int, **options) -> list[list]:
    """Every rank's batches of one epoch (``builds``: one build or a list for a mixture)."""
    builds = builds if isinstance(builds, list) else [builds]
    return [
        list(mintdim.loader(builds, rank=rank, world_size=world_size, **options))
        for rank in range(world_size)
    ]


# ---------------------------------------------------------------------------
# Batches: exact content and labels
# ---------------------------------------------------------------------------


def test_every_batch_holds_exact_records_of_one_unit(sp_build):
    out, texts, tokenizer = sp_build
    encode = reference_encoder(tokenizer)
    rows = read_jsonl(out / "sample_index.jsonl")
    build = open_build(out)
    seen = 0
    for batch in build.loader(tokens_per_batch=256, ignore_id=-7):
        unit = batch.unit_size
        assert batch.input_ids.shape == (len(batch.sample_ids), unit)
        assert batch.input_ids.dtype == build.dtype and batch.sample_ids.dtype == np.int64
        for i, sample_id in enumerate(batch.sample_ids.tolist()):
            ids = encode(texts[sample_id])
            assert rows[sample_id]["unit_size"] == unit
            assert batch.lengths[i] == len(ids) == rows[sample_id]["token_count"]
            padded = ids + [build.pad_id] * (unit - len(ids))
            assert batch.input_ids[i].tolist() == padded
            assert batch.attention_mask[i].tolist() == [1] * len(ids) + [0] * (unit - len(ids))
            assert batch.labels[i].tolist() == ids + [-7] * (unit - len(ids))
        assert batch.labels.dtype == np.int64 and batch.attention_mask.dtype == np.int64
        seen += len(batch.sample_ids)
    assert seen > 0


def test_labels_ignore_pad_by_position_even_where_a_token_equals_the_pad_id(sp_build):
    out, _, _ = sp_build
    batch = next(iter(open_build(out).loader(batch_size=4)))
    batch.input_ids[0, 0] = open_build(out).pad_id  # a real token that happens to be PAD's id
    assert batch.labels[0, 0] == batch.input_ids[0, 0]


def test_widen_gives_int64_inputs_with_the_same_values(sp_build):
    out, _, _ = sp_build
    build = open_build(out)
    narrow = list(build.loader(batch_size=5, seed=3))
    wide = list(build.loader(batch_size=5, seed=3, widen=True))
    for a, b in zip(narrow, wide, strict=True):
        assert b.input_ids.dtype == np.int64
        assert np.array_equal(a.input_ids.astype(np.int64), b.input_ids)


def test_batch_sizes_follow_batch_size_or_the_token_budget(sp_build):
    out, _, _ = sp_build
    build = open_build(out)
    for batch in build.loader(tokens_per_batch=100):
        assert len(batch.sample_ids) == max(1, 100 // batch.unit_size)
    for batch in build.loader(batch_size=3):
        assert len(batch.sample_ids) == 3


# ---------------------------------------------------------------------------
# Coverage, disjointness, lockstep
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("world_size", [1, 2, 3, 5])
@pytest.mark.parametrize("accum_steps", [1, 3])
def test_without_drop_last_every_sample_appears_exactly_once_across_ranks(
    sp_build, world_size, accum_steps
):
    out, texts, _ = sp_build
    ranks = _ranks(
        open_build(out), world_size, tokens_per_batch=128, drop_last=False, accum_steps=accum_steps
    )
    counts = Counter(i for rank in ranks for batch in rank for i in batch.sample_ids.tolist())
    assert sorted(counts) == list(range(len(texts))) and set(counts.values()) == {1}
    _assert_lockstep(ranks)


@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_with_drop_last_ranks_get_full_disjoint_batches_and_drop_less_than_a_group(
    sp_build, world_size
):
    out, _, _ = sp_build
    build = open_build(out)
    ranks = _ranks(build, world_size, batch_size=4, seed=9)
    ids = [i for rank in ranks for batch in rank for i in batch.sample_ids.tolist()]
    assert len(ids) == len(set(ids))
    assert all(len(b.sample_ids) == 4 for rank in ranks for b in rank)
    used = Counter(b.unit_size for b in ranks[0])
    for unit, count in build.units.items():
        # Only what cannot fill one batch on every rank is left out.
        assert count - used[unit] * 4 * world_size < 4 * world_size
    _assert_lockstep(ranks)


def _assert_lockstep(ranks: list[list]) -> None:
    lengths = {len(rank) for rank in ranks}
    assert len(lengths) == 1, f"ranks have different batch counts: {lengths}"
    for step in zip(*ranks, strict=True):
        assert len({b.unit_size for b in step}) == 1
        assert len({b.source for b in step}) == 1
        assert len({b.step_end for b in step}) == 1
        assert [b.position for b in step] == [step[0].position] * len(step)


def test_accumulation_windows_keep_one_unit_and_mark_their_last_batch(sp_build):
    out, _, _ = sp_build
    ranks = _ranks(open_build(out), 2, tokens_per_batch=64, accum_steps=4, drop_last=False)
    window: list = []
    windows = []
    for batch in ranks[0]:
        window.append(batch)
        if batch.step_end:
            windows.append(window)
            window = []
    assert window == [] and len(windows) > 1
    for window in windows:
        assert 1 <= len(window) <= 4
        assert len({b.unit_size for b in window}) == 1
    # A unit's windows are full but for (at most) its last one.
    short = Counter(w[0].unit_size for w in windows if len(w) < 4)
    assert all(count == 1 for count in short.values())


# ---------------------------------------------------------------------------
# Determinism and epochs
# ---------------------------------------------------------------------------


def test_order_is_a_function_of_seed_and_epoch_only(sp_build):
    out, _, _ = sp_build
    first = _ids(open_build(out).loader(batch_size=4, seed=1, epoch=2))
    again = _ids(open_build(out).loader(batch_size=4, seed=1, epoch=2))
    assert first == again
    assert first != _ids(open_build(out).loader(batch_size=4, seed=1, epoch=3))
    assert first != _ids(open_build(out).loader(batch_size=4, seed=2, epoch=2))
    moving = open_build(out).loader(batch_size=4, seed=1)
    moving.set_epoch(2)
    assert _ids(moving) == first
    # The same order in a fresh interpreter (no hash(), no process state involved).
    script = (
        "import json, sys, mintdim\n"
        "loader = mintdim.open_build(sys.argv[1]).loader(batch_size=4, seed=1, epoch=2)\n"
        "print(json.dumps([b.sample_ids.tolist() for b in loader]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"},
    )
    assert json.loads(done.stdout) == first


def test_the_order_algorithm_is_pinned():
    """The order must not drift between NumPy versions or machines: raw PCG64 draws are stable,
    and this pins what the plan makes of them (a change here breaks every saved state)."""
    options = LoaderOptions(
        batch_size=2,
        tokens_per_batch=None,
        seed=7,
        rank=0,
        world_size=2,
        drop_last=False,
        accum_steps=2,
        weights=(2.0, 1.0),
        targets=None,
        ignore_id=-100,
        widen=False,
    )
    plan = epoch_plan([{4: 9, 8: 3}, {4: 6}], options, epoch=1)
    assert [(p.source, p.unit_size, p.positions.tolist(), p.step_end) for p in plan] == [
        (0, 8, [1, 2], True),
        (1, 4, [1, 3], False),
        (1, 4, [4], True),
        (0, 4, [8], True),
        (0, 4, [1, 2], False),
        (0, 4, [4, 7], True),
    ]


def _documented_plan(unit_counts, options, epoch) -> list[tuple]:
    """The order as the loader's docstring and docs/training.md define it, written out with a
    full sort of every unit (the loader finds the same batches without one): (source,
    unit_size, positions, step_end) per batch of the rank."""

    def draws(count, *key):
        return np.random.PCG64(np.random.SeedSequence(list(key))).random_raw(count)

    def shuffled(count, *key):
        return np.argsort(draws(count, *key), kind="stable")

    ranks, steps = options.world_size, options.accum_steps
    builds = []
    for source, counts in enumerate(unit_counts):
        windows = []
        for unit, count in counts.items():
            order = shuffled(count, options.seed, epoch, 0, source, unit)
            size = options.unit_batch_size(unit)
            whole = count // (size * ranks)
            groups = list(order[: whole * size * ranks].reshape(whole, ranks, size))
            if count > whole * size * ranks and not options.drop_last:
                groups.append(np.array_split(order[whole * size * ranks :], ranks))
            windows += [(unit, groups[i : i + steps]) for i in range(0, len(groups), steps)]
        builds.append([windows[i] for i in shuffled(len(windows), options.seed, epoch, 1, source)])
    due = [
        (np.arange(len(own)) + (draws(len(own), options.seed, epoch, 2, source) >> 11) * 2.0**-53)
        / weight
        for source, (own, weight) in enumerate(zip(builds, options.weights, strict=True))
    ]
    flat = [(source, unit, groups) for source, own in enumerate(builds) for unit, groups in own]
    return [
        (source, unit, sorted(group[options.rank].tolist()), number == len(groups) - 1)
        for i in np.argsort(np.concatenate([np.zeros(0), *due]), kind="stable")
        for source, unit, groups in [flat[i]]
        for number, group in enumerate(groups)
    ]


@settings(max_examples=150, deadline=None)
@given(
    unit_counts=st.lists(
        st.dictionaries(st.sampled_from([4, 8, 16, 32]), st.integers(0, 400), min_size=1),
        min_size=1,
        max_size=3,
    ).map(lambda builds: [dict(sorted(counts.items())) for counts in builds]),
    sizing=st.one_of(
        st.tuples(st.integers(1, 40), st.none()), st.tuples(st.none(), st.integers(1, 600))
    ),
    world_size=st.integers(1, 5),
    rank_seed=st.integers(0, 10**6),
    accum_steps=st.integers(1, 4),
    drop_last=st.booleans(),
    seed=st.integers(0, 2**63),
    epoch=st.integers(0, 10**6),
)
def test_the_plan_is_the_documented_order(
    unit_counts, sizing, world_size, rank_seed, accum_steps, drop_last, seed, epoch
):
    options = LoaderOptions(
        batch_size=sizing[0],
        tokens_per_batch=sizing[1],
        seed=seed,
        rank=rank_seed % world_size,
        world_size=world_size,
        drop_last=drop_last,
        accum_steps=accum_steps,
        weights=tuple(1.0 + i for i in range(len(unit_counts))),
        targets=None,
        ignore_id=-100,
        widen=False,
    )
    plan = epoch_plan(unit_counts, options, epoch)
    got = [(p.source, p.unit_size, p.positions.tolist(), p.step_end) for p in plan]
    assert got == _documented_plan(unit_counts, options, epoch)


_unit_draws = st.lists(
    st.one_of(
        st.integers(0, 2**64 - 1),
        # Ties, and draws that differ only below any bucket's bits.
        st.sampled_from([0, 1, 2**63, 2**63 + 1, 2**64 - 1]),
    ),
    min_size=1,
    max_size=150,
)


@settings(max_examples=300, deadline=None)
@given(
    units=st.lists(
        st.tuples(_unit_draws, st.lists(st.integers(0, 150), max_size=10), st.integers(0, 2**11)),
        max_size=3,
    )
)
def test_chunks_of_the_order_equal_those_of_a_stable_sort(units):
    """The chunks of each unit's stable order of its draws, found for several units at once
    without sorting every record, even where draws tie (the stable sort orders ties by position)
    or a chunk start falls in a bucket."""
    draws, starts, wanted, expected = [], [], [], []
    for values, cuts, pick in units:
        own = np.array(values, dtype=np.uint64)
        bounds = np.array([0, *sorted(min(cut, own.size) for cut in cuts)])
        chosen = np.array([c for c in range(bounds.size) if pick >> c & 1], dtype=np.int64)
        places = np.empty(own.size, dtype=np.int64)
        places[np.argsort(own, kind="stable")] = np.arange(own.size)
        chunk = np.searchsorted(bounds, places, "right") - 1
        expected.append([i for c in chosen.tolist() for i in np.flatnonzero(chunk == c).tolist()])
        draws.append(own)
        starts.append(bounds)
        wanted.append(chosen)
    got = loader_module._chunks(draws, starts, wanted)
    assert [records.tolist() for records in got] == expected


def test_each_epoch_is_a_new_permutation_of_the_same_samples(sp_build):
    out, texts, _ = sp_build
    loader = open_build(out).loader(batch_size=1, drop_last=False)
    orders = []
    for epoch in range(3):
        loader.set_epoch(epoch)
        orders.append([i for ids in _ids(loader) for i in ids])
    assert all(sorted(order) == list(range(len(texts))) for order in orders)
    assert orders[0] != orders[1] != orders[2]


# ---------------------------------------------------------------------------
# Exact resume
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [0, 1, 17, 60])
def test_resume_from_a_saved_state_continues_exactly(sp_build, cut):
    out, _, _ = sp_build
    options = {"tokens_per_batch": 64, "seed": 4, "rank": 1, "world_size": 2, "accum_steps": 2}
    whole = open_build(out).loader(**options)
    reference = _ids(whole)
    assert len(reference) > 61
    first = open_build(out).loader(**options)
    batches = iter(first)
    taken = [next(batches).sample_ids.tolist() for _ in range(cut)]
    state = json.loads(json.dumps(first.state_dict()))  # survives JSON (a checkpoint file)
    assert len(json.dumps(state)) < 600
    # Another process continues from the state.
    script = (
        "import json, sys, mintdim\n"
        "options, state = json.loads(sys.argv[2]), json.loads(sys.argv[3])\n"
        "loader = mintdim.open_build(sys.argv[1]).loader(state=state, **options)\n"
        "print(json.dumps([b.sample_ids.tolist() for b in loader]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(out), json.dumps(options), json.dumps(state)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert taken + json.loads(done.stdout) == reference


def test_a_state_saved_after_an_epochs_last_batch_leaves_nothing_in_that_epoch(sp_build):
    out, _, _ = sp_build
    loader = open_build(out).loader(batch_size=8, epoch=0)
    list(loader)
    assert list(loader) == []  # a finished epoch is not started over
    resumed = open_build(out).loader(batch_size=8, state=loader.state_dict())
    assert resumed.epoch == 0 and resumed.remaining() == range(len(resumed), len(resumed))
    resumed.set_epoch(0)  # what the training loop does first: the same epoch keeps its place
    assert list(resumed) == []
    resumed.set_epoch(1)
    assert _ids(resumed) == _ids(open_build(out).loader(batch_size=8, epoch=1))


@st.composite
def _setups(draw) -> tuple[bool, dict, int]:
    """A mixture or not, loader options, and the epoch before which the training loop ends."""
    world_size = draw(st.integers(1, 4))
    sizing = draw(st.sampled_from(["batch_size", "tokens_per_batch"]))
    # 600 + 250 samples in units 8-24: from 1 to ~80 batches per epoch on a rank.
    size = draw(st.integers(10, 40) if sizing == "batch_size" else st.integers(256, 1024))
    options = {
        sizing: size,
        "seed": draw(st.integers(0, 2**32 - 1)),
        "epoch": draw(st.integers(0, 1)),
        "rank": draw(st.integers(0, world_size - 1)),
        "world_size": world_size,
        "accum_steps": draw(st.integers(1, 4)),
        "drop_last": draw(st.booleans()),
    }
    mixture = draw(st.booleans())
    if mixture:
        options["weights"] = draw(st.sampled_from([[0.7, 0.3], [0.5, 0.5], [0.2, 0.8]]))
    return mixture, options, options["epoch"] + draw(st.integers(2, 3))


@pytest.mark.parametrize("loop", sorted(loader_loops.LOOPS))
@settings(max_examples=5, deadline=None)
@given(setup=_setups())
def test_resuming_after_any_batch_in_a_fresh_process_continues_the_uninterrupted_run(
    sp_build, hf_build, loop, setup
):
    """Every stop point (before the first batch, after each batch: an epoch's first and last
    included) of the documented loops, for one build or a mixture, any rank, accumulation and
    drop_last: the batches before the stop and those of the resumed run are the uninterrupted
    run's, none twice, none lost."""
    mixture, options, epochs = setup
    builds = [str(sp_build[0]), str(hf_build)] if mixture else [str(sp_build[0])]
    job = {"builds": builds, "options": options, "loop": loop, "epochs": epochs}
    start = mintdim.loader(builds, **options).state_dict()
    reference = loader_loops.run(job)
    names = [name for name, _ in reference]
    assert names
    # The stop points include every epoch's first and last batch: each epoch runs to its end.
    lengths = Counter(saved["epoch"] for _, saved in reference)
    assert {saved["epoch"]: saved["position"] for _, saved in reference} == lengths
    assert sorted(lengths) == list(
        range(options["epoch"], options["epoch"] + 1 if loop == "bare" else epochs)
    )
    states = [start] + [saved for _, saved in reference]
    done = subprocess.run(
        [sys.executable, "-m", "tests.unit_build.loader_loops"],
        input=json.dumps({**job, "states": states}),
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    for stop, resumed in enumerate(json.loads(done.stdout)):
        assert names[:stop] + resumed == names, f"stopped after {stop} batches"


def test_a_state_from_other_options_is_refused_naming_the_difference(sp_build, hf_build):
    out, _, _ = sp_build
    state = open_build(out).loader(batch_size=8, seed=1).state_dict()
    with pytest.raises(LoaderStateError) as caught:
        open_build(out).loader(batch_size=8, seed=2, state=state)
    assert caught.value.key == "seed" and caught.value.saved == 1 and caught.value.current == 2
    with pytest.raises(LoaderStateError) as caught:
        open_build(hf_build).loader(batch_size=8, seed=1, state=state)
    assert caught.value.key == "builds"
    with pytest.raises(LoaderStateError):
        open_build(out).loader(batch_size=8, seed=1, state={"position": 3})
    batches = len(open_build(out).loader(batch_size=8, seed=1))
    with pytest.raises(LoaderStateError) as caught:
        open_build(out).loader(batch_size=8, seed=1, state={**state, "position": batches + 1})
    assert caught.value.key == "position" and caught.value.current == batches


# ---------------------------------------------------------------------------
# Worker processes (what torch's DataLoader does) and torch itself
# ---------------------------------------------------------------------------


def _fetch(args):
    loader, index = args
    batch = loader[index]
    return batch.sample_ids.tolist(), batch.input_ids.tolist(), batch.position


def test_worker_processes_fetch_the_same_batches_by_index(sp_build):
    out, _, _ = sp_build
    loader = open_build(out).loader(tokens_per_batch=128, seed=5, world_size=2, rank=1)
    direct = list(loader)
    resumed = open_build(out).loader(
        tokens_per_batch=128, seed=5, world_size=2, rank=1, state=loader.state_dict(direct[9])
    )
    assert resumed.remaining() == range(10, len(direct))
    assert len(pickle.dumps(resumed)) < 20_000
    # Pool.map pickles each task, so the loader reaches the workers pickled; "fork" avoids the
    # resource-tracker process that "spawn" starts, which would outlive this test.
    with multiprocessing.get_context("fork").Pool(2) as pool:
        fetched = pool.map(_fetch, [(resumed, i) for i in resumed.remaining()])
    expected = [(b.sample_ids.tolist(), b.input_ids.tolist(), b.position) for b in direct[10:]]
    assert fetched == expected


def test_torch_dataloader_with_two_workers(sp_build):
    torch = pytest.importorskip("torch")
    out, _, _ = sp_build
    loader = open_build(out).loader(tokens_per_batch=128, seed=5)
    direct = _ids(open_build(out).loader(tokens_per_batch=128, seed=5))
    data = torch.utils.data.DataLoader(
        loader, batch_size=None, sampler=loader.remaining(), num_workers=2
    )
    assert [b.sample_ids.tolist() for b in data] == direct


# ---------------------------------------------------------------------------
# Mixtures
# ---------------------------------------------------------------------------


def test_a_mixture_uses_every_sample_of_every_build_once_in_lockstep(sp_build, hf_build):
    out, texts, _ = sp_build
    builds = [open_build(out), open_build(hf_build)]
    ranks = _ranks(builds, 3, weights=[0.7, 0.3], tokens_per_batch=128, drop_last=False)
    _assert_lockstep(ranks)
    seen = Counter((b.source, i) for rank in ranks for b in rank for i in b.sample_ids.tolist())
    assert set(seen.values()) == {1}
    assert {i for s, i in seen if s == 0} == set(range(len(texts)))
    assert {i for s, i in seen if s == 1} == set(range(len(builds[1])))
    hf_tokens = reference_encoder(
        Path(json.loads((hf_build / "manifest.json").read_text())["tokenizer"]["path"])
    )
    hf_texts = training_text(250, seed=5)
    for batch in ranks[0]:
        if batch.source == 1:
            first = batch.sample_ids[0]
            assert batch.input_ids[0, : batch.lengths[0]].tolist() == hf_tokens(hf_texts[first])


def test_mixture_weights_set_the_share_of_steps_while_both_builds_last(sp_build, hf_build):
    out, _, _ = sp_build
    builds = [open_build(out), open_build(hf_build)]
    for weights in ([0.5, 0.5], [0.8, 0.2], [0.2, 0.8]):
        sources = [b.source for b in mintdim.loader(builds, weights=weights, batch_size=2, seed=3)]
        # The prefix in which neither build can have run out yet.
        prefix = sources[
            : int(min(sources.count(0) / weights[0], sources.count(1) / weights[1]) * 0.9)
        ]
        share = prefix.count(0) / len(prefix)
        assert abs(share - weights[0]) < 0.06, (weights, share)
    again = [b.source for b in mintdim.loader(builds, weights=[0.8, 0.2], batch_size=2, seed=3)]
    assert again == [
        b.source for b in mintdim.loader(builds, weights=[0.8, 0.2], batch_size=2, seed=3)
    ]


# ---------------------------------------------------------------------------
# Options and targets
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({}, "batch_size / tokens_per_batch"),
        ({"batch_size": 2, "tokens_per_batch": 64}, "batch_size / tokens_per_batch"),
        ({"batch_size": 0}, "batch_size"),
        ({"tokens_per_batch": 1.5}, "tokens_per_batch"),
        ({"batch_size": 2, "rank": 2, "world_size": 2}, "rank"),
        ({"batch_size": 2, "world_size": 0}, "world_size"),
        ({"batch_size": 2, "accum_steps": 0}, "accum_steps"),
        ({"batch_size": 2, "seed": -1}, "seed"),
        ({"batch_size": 2, "weights": [1, 2]}, "weights"),
        ({"batch_size": 2, "weights": [0]}, "weights"),
        ({"batch_size": 2, "targets": []}, "targets"),
    ],
)
def test_bad_options_are_named(sp_build, options, option):
    out, _, _ = sp_build
    with pytest.raises(LoaderOptionError) as caught:
        open_build(out).loader(**options)
    assert caught.value.option == option
    for lang in ("en", "vi"):
        assert option in caught.value.message(lang)


def test_targets_need_a_build_with_segment_spans(sp_build):
    out, _, _ = sp_build
    with pytest.raises(LoaderOptionError) as caught:
        open_build(out).loader(batch_size=2, targets=["output"])
    assert caught.value.problem == "no_spans" and str(out) in caught.value.message("vi")


ALPACA = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n{output}"


@pytest.mark.parametrize("tokenizer", ["demo_unigram", "mistral"])
def test_targets_keep_labels_only_on_the_named_segments(tmp_path, tokenizer):
    """Answer-only labels on real SFT builds (spans stored, EOS appended). With mistral, PAD
    falls back to EOS, so PAD and the real EOS share an id: only positions tell them apart."""
    demo = REPO / "mintdim" / "demo"
    if tokenizer == "mistral":
        path = corpora_file("tokenizers/mistral-7b-v0.1.tokenizer.model")
        config = {"path": str(path), "encode": "whole", "append_eos": True, "pad_fallback": "eos"}
    else:
        path = demo / "demo_unigram.model"
        config = {"path": str(path), "encode": "whole", "append_eos": True}
    eos = spm.SentencePieceProcessor(model_file=str(path)).eos_id()
    rows = [json.loads(line) for line in (demo / "self_instruct_seed_alpaca.jsonl").open()]
    data = write_jsonl(tmp_path / "alpaca.jsonl", rows)
    job(
        [str(data)],
        config,
        fields=[["instruction", "input", "output"]],
        templates=[ALPACA],
        sizes=[[64, 128, 192, 256, 384, 512, 1024, 2048, 4096]],
        samples_per_shard=[16],
        out=str(tmp_path / "sft"),
    ).run(workers=1, progress=False)
    build = open_build(tmp_path / "sft")
    if tokenizer == "mistral":
        assert build.pad_id == eos
    ranks = _ranks(build, 2, tokens_per_batch=2048, drop_last=False, targets=["output", "eos"])
    _assert_lockstep(ranks)
    seen = 0
    for batch in ranks[0] + ranks[1]:
        for i, sample_id in enumerate(batch.sample_ids.tolist()):
            want = np.full(batch.unit_size, -100)
            for name, start, stop in build.segments(sample_id):
                if name in ("output", "eos"):
                    want[start:stop] = batch.input_ids[i, start:stop]
            assert batch.labels[i].tolist() == want.tolist(), sample_id
            assert batch.labels[i, batch.lengths[i] - 1] == eos  # the real EOS keeps its label
            seen += 1
    assert seen == len(build) == len(rows)
    with pytest.raises(LoaderOptionError) as caught:
        build.loader(batch_size=2, targets=["answer"])
    assert caught.value.problem == "unknown_segment" and "output" in caught.value.known


def test_builds_given_as_paths_are_opened(sp_build):
    out, _, _ = sp_build
    assert _ids(mintdim.loader([out], batch_size=3)) == _ids(open_build(out).loader(batch_size=3))


def test_bert_build_batches_match_the_reference_tokenizer(tmp_path):
    tokenizer = corpora_file("tokenizers/bert-base-uncased.tokenizer.json")
    rows = [
        json.loads(line)
        for line in corpora_file("datasets/xquad_vi.jsonl").read_text("utf-8").splitlines()[:120]
    ]
    texts = [row["question"] for row in rows]
    out = _build(tmp_path, "bert", texts, tokenizer, sizes=[16, 24, 32, 48, 64, 96, 128])
    encode = reference_encoder(tokenizer)
    ranks = _ranks(open_build(out), 2, tokens_per_batch=256, drop_last=False)
    _assert_lockstep(ranks)
    for batch in ranks[1]:
        for sample_id, length, tokens in zip(
            batch.sample_ids.tolist(), batch.lengths.tolist(), batch.input_ids, strict=True
        ):
            assert tokens[:length].tolist() == encode(texts[sample_id])


def test_the_documented_training_loops_use_only_the_real_api():
    """The PyTorch and JAX loops of README.md and docs/training.md cannot run here (no torch, no
    JAX): they must at least parse, and every option, batch field and loader member they use
    must exist."""
    fields = {f.name for f in dataclasses.fields(UnitBatch)}
    fields |= {
        name for name, value in vars(UnitBatch).items() if isinstance(value, cached_property)
    }
    members = set(dir(UnitLoader)) | set(
        vars(open_build(REPO / "outputs_examples/demo_sweep/small/build").loader(batch_size=1))
    )
    options = set(inspect.signature(mintdim.loader).parameters)
    checked = Counter()
    for page in (REPO / "README.md", REPO / "docs" / "training.md"):
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^```py(?:thon)?\n(.*?)^```", text, flags=re.S | re.M):
            for node in ast.walk(ast.parse(block)):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    if node.value.id == "batch":
                        assert node.attr in fields, f"{page.name}: batch.{node.attr}"
                        checked["batch"] += 1
                    if node.value.id == "loader":
                        assert node.attr in members, f"{page.name}: loader.{node.attr}"
                        checked["loader"] += 1
                if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "loader":
                    for keyword in node.keywords:
                        assert keyword.arg in options, f"{page.name}: loader({keyword.arg}=...)"
                        checked["option"] += 1
    assert min(checked.values()) > 3 and len(checked) == 3

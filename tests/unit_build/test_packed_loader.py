"""The loader on packed builds: segments, segment ids, positions, cu_seqlens, labels and loss
counts, each computed here again the slow way (a loop per row and per sample) from the build's
own rows; ranks, mixtures, tokens_per_batch and exact resume as for unpacked builds."""

from __future__ import annotations

import numpy as np
import pytest

import mintdim
from mintdim.read.reader import open_build
from tests.unit_build.test_packed_build import UNIGRAM, packed_job

IGNORE = -100


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("loader")
    packed_job(root / "p", spans="segments", tokenizer=UNIGRAM, sizes=((256, 1024, 4096),)).run(
        workers=2, progress=False
    )
    packed_job(root / "u", spans="segments", tokenizer=UNIGRAM, sizes=((256, 1024, 4096),),
               pack=False).run(workers=2, progress=False)  # fmt: skip
    return open_build(root / "p"), open_build(root / "u")


def _slow(batch, build, targets=None):
    """Every per-slot array of a packed batch, a row and a sample at a time."""
    rows, width = batch.input_ids.shape
    segment_ids = np.zeros((rows, width), np.int32)
    position_ids = np.zeros((rows, width), np.int32)
    labels = np.full((rows, width), IGNORE, np.int64)
    cu = [0]
    segments = []
    for r in range(rows):
        row = int(batch.segments[batch.segments[:, 0] == r][0, 0])  # the batch's row r
        held = [s for s in batch.segments.tolist() if s[0] == row]
        end = 0
        for k, (_, start, length, sample_id) in enumerate(held, start=1):
            assert start == end  # back to back
            tokens = build[sample_id].tolist()
            assert batch.input_ids[r, start : start + length].tolist() == tokens
            segment_ids[r, start : start + length] = k
            position_ids[r, start : start + length] = np.arange(length)
            wanted = [True] * length
            if targets is not None:
                wanted = [False] * length
                for name, lo, hi in build.segments(sample_id):
                    if name in targets:
                        wanted[lo:hi] = [True] * (hi - lo)
            for p in range(1, length):  # the first token is predicted from nothing in the row
                if wanted[p]:
                    labels[r, start + p] = tokens[p]
            cu.append(cu[-1] + length)
            segments.append([r, start, length, sample_id])
            end = start + length
        assert batch.lengths[r] == end
        assert (batch.input_ids[r, end:] == build.pad_id).all()
        if end < width:
            cu.append(cu[-1] + width - end)
    return segment_ids, position_ids, labels, np.array(cu, np.int32), np.array(segments)


@pytest.mark.parametrize("targets", [None, ("output",)])
def test_every_array_is_what_the_rows_say(builds, targets):
    packed, _ = builds
    loader = packed.loader(batch_size=3, seed=5, targets=targets, drop_last=False)
    seen = []
    for batch in loader:
        assert batch.packed
        segment_ids, position_ids, labels, cu, segments = _slow(batch, packed, targets)
        assert np.array_equal(batch.segments, segments)
        assert batch.segment_ids.dtype == np.int32 and np.array_equal(
            batch.segment_ids, segment_ids
        )
        assert batch.position_ids.dtype == np.int32
        assert np.array_equal(batch.position_ids, position_ids)
        assert batch.cu_seqlens.dtype == np.int32 and np.array_equal(batch.cu_seqlens, cu)
        assert batch.cu_seqlens[-1] == batch.input_ids.size
        assert batch.max_seqlen == int(np.diff(cu).max())
        assert np.array_equal(batch.labels, labels)
        assert batch.loss_tokens == int((labels[:, 1:] != IGNORE).sum())
        assert np.array_equal(batch.sample_ids, segments[:, 3])
        seen += batch.sample_ids.tolist()
    assert sorted(seen) == list(range(len(packed)))  # every sample once in the epoch


@pytest.mark.parametrize("targets", [None, ("output",)])
def test_step_loss_tokens_sums_each_window(builds, targets):
    packed, unpacked = builds
    for build in (packed, unpacked):
        loader = build.loader(batch_size=2, accum_steps=3, targets=targets, drop_last=False)
        window = 0
        for batch in loader:
            window += batch.loss_tokens
            if batch.step_end:
                assert batch.step_loss_tokens == window
                window = 0
            else:
                assert batch.step_loss_tokens is None


def test_an_unpacked_batch_has_the_same_fields_one_sample_a_row(builds):
    _, unpacked = builds
    batch = next(iter(unpacked.loader(batch_size=4)))
    assert not batch.packed
    assert batch.segments[:, 0].tolist() == [0, 1, 2, 3]
    assert (batch.segments[:, 1] == 0).all()
    assert np.array_equal(batch.segments[:, 2], batch.lengths)
    assert np.array_equal(batch.segments[:, 3], batch.sample_ids)
    assert np.array_equal(batch.segment_ids, batch.token_mask.astype(np.int32))
    assert batch.cu_seqlens[-1] == batch.input_ids.size
    # Many rows (PAD zeroed in bulk) and few (a run at a time) give the same positions.
    for size in (4, 40):
        for batch in unpacked.loader(batch_size=size, drop_last=False):
            width = batch.unit_size
            want = np.where(batch.token_mask, np.arange(width), 0)
            assert np.array_equal(batch.position_ids, want)


def test_ranks_resume_mixture_and_tokens_per_batch(builds):
    packed, unpacked = builds
    records = packed.records()
    # Ranks never share a row; together they hold every row once (drop_last=False).
    held = []
    for rank in range(2):
        for batch in packed.loader(batch_size=2, rank=rank, world_size=2, drop_last=False):
            held += batch.sample_ids.tolist()
    assert sorted(held) == list(range(len(packed)))
    # A row counts its width against tokens_per_batch.
    for batch in packed.loader(tokens_per_batch=8192):
        assert batch.input_ids.shape[0] == max(1, 8192 // batch.unit_size)
    # Exact resume.
    loader = mintdim.loader([packed, unpacked], batch_size=2, weights=[2, 1], seed=3)
    batches = list(loader)
    assert {b.packed for b in batches} == {True, False}
    again = mintdim.loader([packed, unpacked], batch_size=2, weights=[2, 1], seed=3)
    it = iter(again)
    for _ in range(4):
        next(it)
    resumed = mintdim.loader(
        [packed, unpacked], batch_size=2, weights=[2, 1], seed=3, state=again.state_dict()
    )
    for old, new in zip(batches[4:], resumed, strict=True):
        assert np.array_equal(old.input_ids, new.input_ids)
        assert np.array_equal(old.segments, new.segments)
    assert sum(records.values()) == sum(b.input_ids.shape[0] for b in packed.loader(batch_size=1))


def test_a_batch_pickles_with_its_segments_not_its_loader(builds):
    """A DataLoader's workers send batches back pickled: the segments go made, and every array
    packed training uses comes out the same on the other side."""
    import pickle

    packed, _ = builds
    for batch in list(packed.loader(batch_size=3, accum_steps=2))[:4]:
        data = pickle.dumps(batch)
        assert len(data) < 4 * batch.input_ids.nbytes  # not the unit's runs nor the loader
        copy = pickle.loads(data)
        for name in (
            "segments",
            "sample_ids",
            "segment_ids",
            "position_ids",
            "cu_seqlens",
            "labels",
        ):
            assert np.array_equal(getattr(copy, name), getattr(batch, name)), name
        assert (copy.loss_tokens, copy.max_seqlen) == (batch.loss_tokens, batch.max_seqlen)
        assert copy.step_loss_tokens == batch.step_loss_tokens

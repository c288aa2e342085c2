"""Every overlong sample in one UnitOverflowError: how many, the largest, the first few with file:line."""

from __future__ import annotations

import pickle

import pytest

from mintdim import UnitOverflowError
from tests.conftest import corpora_file, words
from tests.unit_build.helpers import job, reference_encoder, write_jsonl


@pytest.mark.parametrize("workers", [1, 2])
def test_a_build_reports_every_overlong_sample_across_files(sp_model, cwd, workers):
    a = [{"text": words(n)} for n in (2, 40, 3, 55, 1, 2, 70, 4)]
    b = (
        [{"text": words(n)} for n in (5, 90, 3, 33)]
        + [{"text": words(2)}] * 30
        + [{"text": words(45)}]
    )
    write_jsonl("a.jsonl", a)
    write_jsonl("b.jsonl", b)
    encode = reference_encoder(sp_model)
    located = [("a.jsonl", i + 1, len(encode(r["text"]))) for i, r in enumerate(a)]
    located += [("b.jsonl", i + 1, len(encode(r["text"]))) for i, r in enumerate(b)]
    over = [(f, line, n) for f, line, n in located if n > 32]
    assert len(over) >= 6

    with pytest.raises(UnitOverflowError) as caught:
        job(["a.jsonl", "b.jsonl"], sp_model, sizes=[[8, 16, 32]], build_batch=[3]).run(
            workers=workers, progress=False
        )

    err = caught.value
    assert (err.file, err.line, err.token_count, err.max_unit_size) == (*over[0], 32)
    assert err.count == len(over)
    longest = max(over, key=lambda item: item[2])
    assert (err.largest_at, err.largest_count) == (f"{longest[0]}:{longest[1]}", longest[2])
    assert err.first_at == [f"{f}:{line}" for f, line, _ in over[:5]]
    assert err.first_counts == [n for _, _, n in over[:5]]
    assert err.stopped_at == ""
    assert f"{len(over)} (every sample longer than 32 tokens)" in err.message("en")
    assert f"{len(over)} (mọi mẫu dài hơn 32 token)" in err.message("vi")
    assert pickle.loads(pickle.dumps(err)).facts() == err.facts()
    assert not (cwd / "out" / "manifest.json").exists()
    assert (cwd / "out" / "unit_8" / "UNIT_BUILD_FAILED.md").is_file()


def test_counting_stops_at_a_later_bad_line_and_says_where(sp_model, cwd):
    write_jsonl(
        "a.jsonl",
        [{"text": words(60)}, {"text": "ok"}, {"text": words(50)}, "{broken", {"text": words(80)}],
    )
    with pytest.raises(UnitOverflowError) as caught:
        job(["a.jsonl"], sp_model, sizes=[[8, 16, 32]], build_batch=[2]).run(workers=1)
    assert caught.value.count == 2
    assert caught.value.stopped_at == "a.jsonl:4 (SourceParseError)"


def test_one_overlong_sample_keeps_the_spec_message(sp_model, cwd):
    write_jsonl("a.jsonl", [{"text": "ok"}, {"text": words(60)}])
    with pytest.raises(UnitOverflowError) as caught:
        job(["a.jsonl"], sp_model, sizes=[[8, 16, 32]]).run(workers=1)
    assert caught.value.count == 1
    assert caught.value.message("en").startswith(
        "UnitOverflowError:\nSample token length exceeds max unit size.\n\nSample:\na.jsonl:2\n"
    )


@pytest.mark.corpora
def test_xquad_vi_with_albert_reports_all_overlong_samples_at_once(cwd):
    data = corpora_file("datasets/xquad_vi.jsonl")
    albert = corpora_file("tokenizers/albert-base-v2.spiece.model")
    template = "{context}\n\n{question}\n\n{answer}"
    declared = job(
        [str(data)],
        str(albert),
        fields=[["context", "question", "answer"]],
        templates=[template],
        sizes=[[256, 512, 1024]],
        build_batch=[64],
    )
    counts = declared.scan(workers=2).token_counts
    with pytest.raises(UnitOverflowError) as caught:
        declared.run(workers=2, progress=False)
    assert caught.value.count == int((counts > 1024).sum()) > 1
    assert caught.value.largest_count == int(counts.max())

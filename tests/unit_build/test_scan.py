"""job.scan(): every sample's exact token count, by the build's own reader and tokenizer, nothing written."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from mintdim import LongSample, PipelineValidationError, SourceParseError, pipeline
from tests.conftest import corpora_file
from tests.unit_build.helpers import job, read_jsonl, reference_encoder, write_jsonl

_XQUAD_TEMPLATE = "{context}\n\n{question}\n\n{answer}"


def _xquad_job(tokenizer, **options):
    fields = [["context", "question", "answer"]]
    return job(
        [str(corpora_file("datasets/xquad_vi.jsonl"))],
        str(tokenizer),
        fields=fields,
        templates=[_XQUAD_TEMPLATE],
        **options,
    )


@pytest.mark.corpora
@pytest.mark.parametrize(
    "tokenizer",
    ["tokenizers/albert-base-v2.spiece.model", "tokenizers/bert-base-uncased.tokenizer.json"],
)
def test_scan_counts_every_sample_exactly_like_the_library(tokenizer, cwd):
    path = corpora_file(tokenizer)
    encode = reference_encoder(path)
    rows = [
        json.loads(line) for line in corpora_file("datasets/xquad_vi.jsonl").open(encoding="utf-8")
    ]
    expected = [len(encode(_XQUAD_TEMPLATE.format(**row))) for row in rows]

    result = _xquad_job(path, build_batch=[97]).scan(workers=2)

    assert result.token_counts.tolist() == expected
    assert result.lines_by_file[0].tolist() == list(range(1, len(rows) + 1))
    assert not os.path.exists("out")
    longest = max(expected)
    over = result.longer_than(1000)
    assert [s.token_count for s in over] == [n for n in expected if n > 1000]
    assert over[0] == LongSample(
        result.files[0], expected.index(over[0].token_count) + 1, over[0].token_count
    )
    assert result.longer_than(longest) == ()


def test_scan_equals_a_build_across_files_and_blank_lines(sp_model, cwd):
    a = write_jsonl("a.jsonl", [{"text": "model data " * n} for n in (1, 9, 3)])
    b = write_jsonl("b.jsonl", ["", {"text": "token"}, "   ", {"text": "unit shard pad " * 7}])
    declared = job([str(a), str(b)], sp_model, sizes=[[8, 16, 32, 64]])

    scanned = declared.scan(workers=1)
    declared.run(workers=1, progress=False)

    rows = read_jsonl("out/sample_index.jsonl")
    assert scanned.token_counts.tolist() == [r["token_count"] for r in rows]
    assert [c.tolist() for c in scanned.by_file] == [
        [r["token_count"] for r in rows if r["source_file"] == f] for f in (str(a), str(b))
    ]
    assert scanned.lines_by_file[1].tolist() == [2, 4]
    assert scanned.token_counts.dtype == np.int64


def test_scan_needs_no_units_and_no_output(sp_model, cwd):
    write_jsonl("a.jsonl", [{"text": "the model"}])
    declared = (
        pipeline("unit-build")
        .source.jsonl(files=["a.jsonl"], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece({"path": str(sp_model)})
    )
    assert declared.scan(workers=1).token_counts.tolist() == [
        len(reference_encoder(sp_model)("the model"))
    ]
    with pytest.raises(PipelineValidationError) as caught:
        pipeline("unit-build").source.jsonl(files=["a.jsonl"]).scan()
    assert caught.value.missing == ["source.fields", "source.templates", "tokenizer"]


def test_scan_fails_at_a_bad_line_like_a_build(sp_model, cwd):
    write_jsonl("a.jsonl", [{"text": "ok"}, "{broken", {"text": "never"}])
    with pytest.raises(SourceParseError) as caught:
        job(["a.jsonl"], sp_model).scan(workers=2)
    assert caught.value.line == 2

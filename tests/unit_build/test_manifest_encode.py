"""The manifest's ``tokenizer.encode`` records what was declared: null when the key was not given.

``encode: "whole"`` is the opt-in that stores segment spans; a build without the key stores none
and must not say "whole". ``mintdim verify`` refuses a manifest whose ``encode`` contradicts
``segment_spans.stored``, and still reads a build by an earlier MintDim, which wrote "whole" for
a build without the key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mintdim import open_build
from tests.unit_build.helpers import job, read_json, reseal_build, write_jsonl
from tests.unit_build.test_verify import _report

TEXTS = ["the model", "a unit of data", "the shard and the pad", "xin chao"]


def _build(cwd: Path, sp_model: Path, encode: str | None, out: str) -> Path:
    write_jsonl(cwd / "data.jsonl", [{"text": t} for t in TEXTS])
    tokenizer = {"path": str(sp_model), **({} if encode is None else {"encode": encode})}
    job(["data.jsonl"], tokenizer, out=out).run(workers=1, progress=False)
    return cwd / out


@pytest.mark.parametrize(("encode", "stored"), [(None, False), ("whole", True), ("segments", True)])
def test_the_manifest_records_the_declared_encode(cwd, sp_model, encode, stored):
    out = _build(cwd, sp_model, encode, "out")
    manifest = read_json(out / "manifest.json")
    assert manifest["tokenizer"]["encode"] == encode
    assert manifest["segment_spans"]["stored"] is stored
    assert (open_build(out).sequence_names() is not None) is stored
    report = _report(out, "--deep")
    assert report["ok"], report["failures"]


def _rewrite(out: Path, encode: object) -> None:
    path = out / "manifest.json"
    content = json.loads(path.read_text(encoding="utf-8"))
    content["tokenizer"]["encode"] = encode
    path.write_text(json.dumps(content))
    reseal_build(out)


@pytest.mark.parametrize(
    ("declared", "recorded"),
    [(None, "segments"), ("whole", None), ("segments", None), (None, "all"), ("whole", 1)],
)
def test_verify_refuses_an_encode_that_contradicts_the_stored_spans(
    cwd, sp_model, declared, recorded
):
    out = _build(cwd, sp_model, declared, "out")
    _rewrite(out, recorded)
    report = _report(out)
    assert not report["ok"]
    keys = [f["facts"].get("key") for f in report["failures"] if f["code"] == "manifest_key"]
    assert keys == ["tokenizer.encode"], report["failures"]


def test_a_build_by_an_earlier_mintdim_that_wrote_whole_without_spans_still_verifies(cwd, sp_model):
    out = _build(cwd, sp_model, None, "out")
    _rewrite(out, "whole")  # what MintDim wrote before the key recorded the declaration
    report = _report(out, "--deep")
    assert report["ok"], report["failures"]
    assert open_build(out).sequence_names() is None

"""``decontaminate=ngrams``: the runner builds, then decontaminates inside the job directory with
the group's keys, and a split (if any) takes the clean build; ``decontaminate=none`` (the
default) only builds; a bad setting fails before the build."""

from __future__ import annotations

import json

import pytest

from mintdim import DecontaminateOptionError, open_build
from mintdim.decontaminate.check import verify_decontamination
from mintdim.runner.app import run_job

pytestmark = pytest.mark.usefixtures("english_from_the_repo_root")


def test_the_default_does_not_decontaminate(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg("source=qa", "output=dir", f"output.dir=[{tmp_path}/build]", "workers=1")
    assert cfg.decontaminate.name.name == "none"
    assert "decontaminations" not in run_job(cfg)


def test_ngrams_decontaminates_then_splits_the_clean_build(compose_cfg, tmp_path) -> None:
    # The bundled GSM8K rows built and checked against themselves (the option's default
    # benchmark): every sample holds an item.
    cfg = compose_cfg(
        "source=qa",
        "output=dir",
        f"output.dir=[{tmp_path}/build]",
        "workers=1",
        "decontaminate=ngrams",
        "split=threeway",
    )
    summary = run_job(cfg)
    (done,) = summary["decontaminations"]
    out = tmp_path / "decontaminated"
    assert done["decontaminated"] == str(out) and done["clean"] == str(out / "clean")
    assert done["removed"] == len(open_build(tmp_path / "build")) - len(open_build(out / "clean"))
    assert done["removed"] > 250 and done["items"] > 250
    assert verify_decontamination(out).ok
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["ngram"] == 13 and manifest["options"]["match"] == "tokens"
    assert manifest["benchmarks"][0]["fields"] == ["question", "answer"]
    (split,) = summary["splits"]
    assert split["build"] == str(out / "clean")
    assert split["train"] + split["validation"] + split["test"] == len(open_build(out / "clean"))
    assert (tmp_path / "split").is_dir() and not (out / "groups").exists()


def test_a_bad_setting_fails_before_the_build(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg(
        "source=qa",
        "output=dir",
        f"output.dir=[{tmp_path}/build]",
        "decontaminate=ngrams",
        "decontaminate.ngram=0",
    )
    with pytest.raises(DecontaminateOptionError):
        run_job(cfg)
    assert not (tmp_path / "build").exists()


def test_an_entry_with_several_fields_is_quoted(compose_cfg, tmp_path) -> None:
    from mintdim.runner.translate import decontaminate_arguments

    cfg = compose_cfg(
        "decontaminate=ngrams",
        'decontaminate.against=["./a.jsonl:prompt,canonical_solution","./b.jsonl:turns"]',
        "decontaminate.match=words",
    )
    assert decontaminate_arguments(cfg) == {
        "against": ["./a.jsonl:prompt,canonical_solution", "./b.jsonl:turns"],
        "ngram": 13,
        "match": "words",
    }

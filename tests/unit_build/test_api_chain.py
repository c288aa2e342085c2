"""The fluent API: every example of the spec runs as written, nothing runs before run(), steps are
immutable, unknown pipelines and bad run() options fail clearly, errors are importable from
``mintdim``.

Each spec example runs in a temporary working directory where the data and tokenizer files sit
at the very paths the spec names (the session's trained tokenizers are copied there), so the
example code below is the spec's code, unchanged.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import struct
import sys
import time
from pathlib import Path

import pytest

import mintdim
from mintdim import errors, pipeline
from mintdim.build.api import UnitBuildPipeline
from mintdim.build.progress import Progress
from tests.unit_build.helpers import (
    Expected,
    assert_not_written,
    expected_from_rows,
    file_sha256,
    job,
    read_json,
    reference_encoder,
    sections,
    tree_bytes,
    verify_build,
    write_jsonl,
)

ALPACA = [
    {"instruction": "build the model", "input": "a data token", "output": "the unit", "id": 1},
    {"instruction": "train", "input": "", "output": "a shard of the data", "id": 2},
    {"instruction": "test the batch size", "input": "value", "output": "exact", "id": 3},
]
SHAREGPT_SAME_SCHEMA = [
    {"instruction": "sample the value", "output": "the token"},
    {"instruction": "unit", "output": "size of the shard", "extra": [1, 2]},
]
SHAREGPT = [
    {"prompt": "the field value", "response": "a template"},
    {"prompt": "is this the model", "response": "it is", "meta": {"x": 1}},
]


def _copy(source: Path, target: str) -> str:
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


def _alpaca(row: dict) -> str:
    return f"{row['instruction']}\n\n{row['input']}\n\n{row['output']}"


def _expected(path: str, rows: list[dict], render) -> list[Expected]:
    return expected_from_rows(path, rows, render)


def test_quick_start_example_runs_as_written(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/alpaca.jsonl", ALPACA)
    _copy(sp_model, "tokenizer/tokenizer.model")

    # --- spec, "Quick start" ---
    def build_instruction_units():
        job = (
            pipeline("unit-build")
            .source.jsonl(
                files=[
                    "./data/alpaca.jsonl",
                ],
                fields=[
                    ["instruction", "input", "output"],
                ],
                templates=[
                    "{instruction}\n\n{input}\n\n{output}",
                ],
            )
            .tokenizer.sentencepiece(
                {
                    "path": "./tokenizer/tokenizer.model",
                },
            )
            .units(
                sizes=[[128, 192, 256, 320]],
                build_batch=[4096],
            )
            .output.dir(
                "./artifacts/instruction_units",
                samples_per_shard=[10000],
            )
        )

        return job.run()

    # --- end of spec code ---
    result = build_instruction_units()
    assert [o.path for o in result.outputs] == ["./artifacts/instruction_units"]
    verify_build(
        "artifacts/instruction_units",
        _expected("./data/alpaca.jsonl", ALPACA, _alpaca),
        reference_encoder(str(sp_model)),
        [128, 192, 256, 320],
        10000,
        pad_id=0,
    )
    manifest = read_json("artifacts/instruction_units/manifest.json")
    assert manifest["tokenizer"]["path"] == "./tokenizer/tokenizer.model"
    assert manifest["tokenizer"]["sha256"] == file_sha256("tokenizer/tokenizer.model")
    data = os.stat("data/alpaca.jsonl")
    assert manifest["source"] == {
        "files": ["./data/alpaca.jsonl"],
        "fields": [["instruction", "input", "output"]],
        "templates": ["{instruction}\n\n{input}\n\n{output}"],
        "sequence_templates": [
            [
                {"kind": "field", "name": "instruction"},
                {"kind": "literal", "text": "\n\n"},
                {"kind": "field", "name": "input"},
                {"kind": "literal", "text": "\n\n"},
                {"kind": "field", "name": "output"},
            ]
        ],
        "inputs": [
            {
                "path": "./data/alpaca.jsonl",
                "bytes": data.st_size,
                "mtime_ns": data.st_mtime_ns,
                "sha256": file_sha256("data/alpaca.jsonl"),
            }
        ],
        "max_line_bytes": 64 << 20,  # the default line limit the build read with
    }


def test_path_rules_example(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    rows = [{"text": "the model"}, {"text": "a data token"}]
    write_jsonl("data/train.jsonl", rows)
    result = (
        pipeline("unit-build")
        .source.jsonl(
            files=["./data/train.jsonl"],
            fields=[["text"]],
            templates=["{text}"],
        )
        .tokenizer.sentencepiece({"path": str(sp_model)})
        .units(sizes=[[8, 16]], build_batch=[1])
        .output.dir("./out", samples_per_shard=[10])
        .run(workers=1)
    )
    assert result.outputs[0].path == "./out"
    verify_build(
        "out",
        _expected("./data/train.jsonl", rows, lambda r: r["text"]),
        reference_encoder(str(sp_model)),
        [8, 16],
        10,
        pad_id=0,
    )


def test_fully_shared_example(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    rows_a = [{k: r[k] for k in ("instruction", "output")} for r in ALPACA]
    write_jsonl("data/alpaca.jsonl", rows_a)
    write_jsonl("data/sharegpt.jsonl", SHAREGPT_SAME_SCHEMA)
    _copy(sp_model, "tokenizer/tokenizer.model")

    # --- spec, "Fully shared" ---
    job = (
        pipeline("unit-build")
        .source.jsonl(
            files=[
                "./data/alpaca.jsonl",
                "./data/sharegpt.jsonl",
            ],
            fields=[
                ["instruction", "output"],
            ],
            templates=[
                "{instruction}\n\n{output}",
            ],
        )
        .tokenizer.sentencepiece(
            {
                "path": "./tokenizer/tokenizer.model",
            },
        )
        .units(
            sizes=[[128, 192, 256, 320]],
            build_batch=[4096],
        )
        .output.dir(
            "./artifacts/instruction_units",
            samples_per_shard=[10000],
        )
    )
    # --- end of spec code ---
    result = job.run()
    assert len(result.outputs) == 1

    def render(row):
        return f"{row['instruction']}\n\n{row['output']}"

    expected = _expected("./data/alpaca.jsonl", rows_a, render) + _expected(
        "./data/sharegpt.jsonl", SHAREGPT_SAME_SCHEMA, render
    )
    verify_build(
        "artifacts/instruction_units",
        expected,
        reference_encoder(str(sp_model)),
        [128, 192, 256, 320],
        10000,
        pad_id=0,
    )
    assert result.outputs[0].stats["total_samples"] == 5


def test_fully_mapped_example(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/alpaca.jsonl", ALPACA)
    write_jsonl("data/sharegpt.jsonl", SHAREGPT)
    _copy(sp_model, "tokenizer/alpaca.model")
    _copy(sp_model, "tokenizer/sharegpt.model")

    # --- spec, "Fully mapped" ---
    job = (
        pipeline("unit-build")
        .source.jsonl(
            files=[
                "./data/alpaca.jsonl",
                "./data/sharegpt.jsonl",
            ],
            fields=[
                ["instruction", "input", "output"],
                ["prompt", "response"],
            ],
            templates=[
                "{instruction}\n\n{input}\n\n{output}",
                "{prompt}\n{response}",
            ],
        )
        .tokenizer.sentencepiece(
            [
                {
                    "path": "./tokenizer/alpaca.model",
                },
                {
                    "path": "./tokenizer/sharegpt.model",
                },
            ]
        )
        .units(
            sizes=[
                [128, 192, 256, 320],
                [96, 128, 160, 192, 224, 320],
            ],
            build_batch=[
                4096,
                2048,
            ],
        )
        .output.dir(
            [
                "./artifacts/alpaca_units",
                "./artifacts/sharegpt_units",
            ],
            samples_per_shard=[10000, 5000],
        )
    )
    # --- end of spec code ---
    result = job.run()
    assert [o.path for o in result.outputs] == [
        "./artifacts/alpaca_units",
        "./artifacts/sharegpt_units",
    ]
    encode = reference_encoder(str(sp_model))
    verify_build(
        "artifacts/alpaca_units",
        _expected("./data/alpaca.jsonl", ALPACA, _alpaca),
        encode,
        [128, 192, 256, 320],
        10000,
        pad_id=0,
    )
    verify_build(
        "artifacts/sharegpt_units",
        _expected("./data/sharegpt.jsonl", SHAREGPT, lambda r: f"{r['prompt']}\n{r['response']}"),
        encode,
        [96, 128, 160, 192, 224, 320],
        5000,
        pad_id=0,
    )
    # Each directory is isolated: its own manifest, files, tokenizer path and unit dirs.
    alpaca = read_json("artifacts/alpaca_units/manifest.json")
    sharegpt = read_json("artifacts/sharegpt_units/manifest.json")
    assert alpaca["source"]["files"] == ["./data/alpaca.jsonl"]
    assert sharegpt["source"]["files"] == ["./data/sharegpt.jsonl"]
    assert alpaca["tokenizer"]["path"] == "./tokenizer/alpaca.model"
    assert sharegpt["tokenizer"]["path"] == "./tokenizer/sharegpt.model"
    assert sharegpt["units"]["sizes"] == [96, 128, 160, 192, 224, 320]
    assert sharegpt["output"]["samples_per_shard"] == 5000
    assert sorted(p.name for p in Path("artifacts/sharegpt_units").glob("unit_*")) == sorted(
        f"unit_{s}" for s in [96, 128, 160, 192, 224, 320]
    )


MIXED_ROWS_A = [
    {"prompt": "the model", "answer": "a unit", "separator": " : "},
    {"prompt": "data", "answer": "token", "separator": "\n"},
]
MIXED_ROWS_B = [{"prompt": "shard", "answer": "the build", "separator": " - "}]


def _mixed_setup(sp_model: Path) -> None:
    write_jsonl("data/train_a.jsonl", MIXED_ROWS_A)
    write_jsonl("data/train_b.jsonl", MIXED_ROWS_B)
    _copy(sp_model, "tokenizer/fineweb_edu_32k.model")


def _mixed_expected() -> tuple[list[Expected], list[Expected]]:
    def render(row):
        return f"{row['prompt']}{row['separator']}{row['answer']}"

    return (
        _expected("./data/train_a.jsonl", MIXED_ROWS_A, render),
        _expected("./data/train_b.jsonl", MIXED_ROWS_B, render),
    )


def test_mixed_shared_and_mapped_example(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    _mixed_setup(sp_model)

    # --- spec, "Mixed shared and mapped" ---
    tokenizer_cfg = {
        "path": "./tokenizer/fineweb_edu_32k.model",
    }

    job = (
        pipeline("unit-build")
        .source.jsonl(
            files=[
                "./data/train_a.jsonl",
                "./data/train_b.jsonl",
            ],
            fields=[
                ["prompt", "answer", "separator"],
            ],
            templates=[
                "{prompt}{separator}{answer}",
            ],
        )
        .tokenizer.sentencepiece(
            [
                tokenizer_cfg,
                tokenizer_cfg,
            ]
        )
        .units(
            sizes=[[32, 64, 128, 256]],
            build_batch=[64],
        )
        .output.dir(
            [
                "./output1",
                "./output2",
            ],
            samples_per_shard=[256],
        )
    )
    # --- end of spec code ---
    result = job.run()
    assert [o.path for o in result.outputs] == ["./output1", "./output2"]
    first, second = _mixed_expected()
    encode = reference_encoder(str(sp_model))
    verify_build("output1", first, encode, [32, 64, 128, 256], 256, pad_id=0)
    verify_build("output2", second, encode, [32, 64, 128, 256], 256, pad_id=0)


@pytest.mark.parametrize("shape", ["dict", "list"])
def test_single_tokenizer_dict_shares_list_maps(tmp_path, monkeypatch, sp_model, shape):
    """``sentencepiece(cfg)`` shares one tokenizer; ``[cfg, cfg]`` maps it; both build the same."""
    monkeypatch.chdir(tmp_path)
    _mixed_setup(sp_model)
    tokenizer_cfg = {"path": "./tokenizer/fineweb_edu_32k.model"}
    declared = tokenizer_cfg if shape == "dict" else [tokenizer_cfg, tokenizer_cfg]
    result = (
        pipeline("unit-build")
        .source.jsonl(
            files=["./data/train_a.jsonl", "./data/train_b.jsonl"],
            fields=[["prompt", "answer", "separator"]],
            templates=["{prompt}{separator}{answer}"],
        )
        .tokenizer.sentencepiece(declared)
        .units(sizes=[[32, 64, 128, 256]], build_batch=[64])
        .output.dir("./shared_out", samples_per_shard=[256])
        .run()
    )
    first, second = _mixed_expected()
    verify_build(
        "shared_out", first + second, reference_encoder(str(sp_model)), [32, 64, 128, 256], 256, 0
    )
    assert result.outputs[0].stats["total_samples"] == 3


def test_hf_json_example(tmp_path, monkeypatch, hf_json):
    monkeypatch.chdir(tmp_path)
    rows = [{"text": "the model is a unit"}, {"text": "data token shard"}]
    write_jsonl("data/train.jsonl", rows)
    _copy(hf_json, "tokenizer/tokenizer.json")
    result = (
        pipeline("unit-build")
        .source.jsonl(files=["./data/train.jsonl"], fields=[["text"]], templates=["{text}"])
        .tokenizer.hf_json(
            {
                "path": "./tokenizer/tokenizer.json",
            },
        )
        .units(sizes=[[128, 192, 256, 320]], build_batch=[4096])
        .output.dir("./artifacts/instruction_units", samples_per_shard=[10000])
        .run()
    )
    verify_build(
        "artifacts/instruction_units",
        _expected("./data/train.jsonl", rows, lambda r: r["text"]),
        reference_encoder(str(hf_json)),
        [128, 192, 256, 320],
        10000,
        pad_id=0,
    )
    manifest = read_json("artifacts/instruction_units/manifest.json")
    assert manifest["tokenizer"]["type"] == "hf_json"
    assert manifest["tokenizer"]["path"] == "./tokenizer/tokenizer.json"
    assert result.outputs[0].stats["total_samples"] == 2


# ---------------------------------------------------------------------------
# Nothing runs before run()
# ---------------------------------------------------------------------------


def test_declaring_a_job_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Files, tokenizer and output do not exist; a corrupt/missing tokenizer is not looked at.
    declared = job(
        ["./data/missing.jsonl"],
        "./tokenizer/missing.model",
        out="./artifacts/never",
    )
    assert isinstance(declared, UnitBuildPipeline)
    assert_not_written("artifacts", "data")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(errors.MintDimFileNotFoundError):
        declared.run()
    assert list(tmp_path.iterdir()) == []


def test_files_are_read_at_run_time_not_at_declaration(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    declared = job(["./data/late.jsonl"], sp_model, out="./out")
    write_jsonl("data/late.jsonl", [{"text": "the model"}])  # created after declaring
    result = declared.run(workers=1)
    assert result.outputs[0].stats["total_samples"] == 1


def test_incomplete_job_declares_without_error():
    partial = pipeline("unit-build").source.jsonl(files=["./x.jsonl"])
    assert partial.config.files == ["./x.jsonl"]
    assert partial.config.fields is None


# ---------------------------------------------------------------------------
# Steps return new objects
# ---------------------------------------------------------------------------


def test_each_step_returns_a_new_object_and_leaves_the_old_one_unchanged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    start = pipeline("unit-build")
    with_source = start.source.jsonl(files=["./a.jsonl"], fields=[["text"]], templates=["{text}"])
    with_tokenizer = with_source.tokenizer.sentencepiece({"path": "./t.model"})
    with_units = with_tokenizer.units(sizes=[[8]], build_batch=[2])
    with_output = with_units.output.dir("./out", samples_per_shard=[5])
    chain = [start, with_source, with_tokenizer, with_units, with_output]
    assert len({id(step) for step in chain}) == len(chain)
    assert start.config.files is None
    assert with_source.config.tokenizer is None
    assert with_tokenizer.config.sizes is None
    assert with_units.config.output_dir is None
    assert with_output.config.samples_per_shard == [5]


def test_later_edits_to_the_callers_lists_do_not_change_a_declared_job():
    files = ["./a.jsonl"]
    config = {"path": "./t.model"}
    sizes = [[8, 16]]
    declared = (
        pipeline("unit-build")
        .source.jsonl(files=files, fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece(config)
        .units(sizes=sizes, build_batch=[2])
    )
    files.append("./b.jsonl")
    config["path"] = "./other.model"
    sizes[0].append(32)
    assert declared.config.files == ["./a.jsonl"]
    assert declared.config.tokenizer == {"path": "./t.model"}
    assert declared.config.sizes == [[8, 16]]


def test_a_base_job_reused_for_two_variations(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    rows = [{"text": "the model " * n} for n in range(1, 7)]
    write_jsonl("data/a.jsonl", rows)
    base = (
        pipeline("unit-build")
        .source.jsonl(files=["./data/a.jsonl"], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece({"path": str(sp_model)})
    )
    small = base.units(sizes=[[4, 8, 16]], build_batch=[2]).output.dir(
        "./small", samples_per_shard=[2]
    )
    large = base.units(sizes=[[64]], build_batch=[5]).output.dir("./large", samples_per_shard=[10])
    assert base.config.sizes is None and base.config.output_dir is None
    small_result = small.run(workers=1)
    large_result = large.run(workers=1)
    expected = _expected("./data/a.jsonl", rows, lambda r: r["text"])
    encode = reference_encoder(str(sp_model))
    verify_build("small", expected, encode, [4, 8, 16], 2, pad_id=0)
    verify_build("large", expected, encode, [64], 10, pad_id=0)
    assert (
        small_result.outputs[0].stats["unit_distribution"]
        != (large_result.outputs[0].stats["unit_distribution"])
    )
    # The same declared job can run again into a fresh directory.
    again = small.output.dir("./small_again", samples_per_shard=[2]).run(workers=1)
    assert again.outputs[0].stats == small_result.outputs[0].stats


# ---------------------------------------------------------------------------
# pipeline() names, run() result and options, error exports
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["foo", "unit_build", "Unit-Build", "", 123, None])
def test_unknown_pipeline_lists_registered_pipelines(name):
    with pytest.raises(errors.UnknownPipelineError) as info:
        pipeline(name)
    err = info.value
    assert err.name == name
    assert err.registered == ["unit-build"]
    en, vi = err.message("en"), err.message("vi")
    assert en.startswith("UnknownPipelineError:\nNo pipeline is registered under this name.\n\n")
    assert f"Pipeline:\n{name!r}" in en
    assert "Registered pipelines:\n- unit-build" in en
    assert vi.startswith(
        "UnknownPipelineError:\nKhông có pipeline nào được đăng ký với tên này.\n\n"
    )
    assert "Các pipeline đã đăng ký:\n- unit-build" in vi
    assert isinstance(err, errors.MintDimError)


def test_registry_names_the_unit_build_pipeline():
    assert isinstance(pipeline("unit-build"), UnitBuildPipeline)
    assert mintdim.registry.registered() == ["unit-build"]


def test_run_returns_each_output_path_as_declared_and_its_stats(tmp_path, monkeypatch, sp_model):
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/a.jsonl", [{"text": "the model"}, {"text": "the model"}])
    write_jsonl("data/b.jsonl", [{"text": "a data token"}])
    result = job(
        ["./data/a.jsonl", "./data/b.jsonl"],
        sp_model,
        out=["./artifacts/a/", "artifacts/b"],
        samples_per_shard=(1,),
    ).run(workers=1)
    assert isinstance(result, mintdim.BuildResult)
    assert [o.path for o in result.outputs] == ["./artifacts/a/", "artifacts/b"]
    for output, directory in zip(result.outputs, ["artifacts/a", "artifacts/b"], strict=True):
        assert isinstance(output, mintdim.OutputResult)
        assert output.stats == read_json(Path(directory) / "stats.json")
    assert result.outputs[0].stats["total_samples"] == 2
    assert result.outputs[0].stats["duplicate_groups"] == 1
    assert result.outputs[1].stats["total_samples"] == 1


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0, "0"), (-1, "-1"), ("2", "'2' (str)"), (True, "True (bool)"), (1.5, "1.5 (float)")],
)
def test_run_rejects_bad_worker_counts(tmp_path, monkeypatch, sp_model, value, shown):
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    declared = job(["./data/a.jsonl"], sp_model, out="./out")
    with pytest.raises(errors.RunOptionError) as info:
        declared.run(workers=value)
    err = info.value
    assert (err.option, err.value, err.rule) == ("workers", value, "positive_int")
    assert err.message("en") == (
        "RunOptionError:\nInvalid option of run() or scan().\n\nOption:\nworkers\n\n"
        f"Value:\n{shown}\n\nRule:\nworkers must be a positive integer"
    )
    assert err.message("vi") == (
        "RunOptionError:\nTùy chọn của run() hoặc scan() không hợp lệ.\n\nTùy chọn:\nworkers\n\n"
        f"Giá trị:\n{shown}\n\nQuy tắc:\nworkers phải là số nguyên dương"
    )
    assert_not_written("out")


@pytest.mark.parametrize("value", ["no", 0, 1, "yes"])
def test_run_rejects_a_non_bool_progress(tmp_path, monkeypatch, sp_model, value):
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    with pytest.raises(errors.RunOptionError) as info:
        job(["./data/a.jsonl"], sp_model, out="./out").run(workers=1, progress=value)
    assert (info.value.option, info.value.value, info.value.rule) == ("progress", value, "bool")
    assert sections(info.value.message("en"))["Rule"] == ["progress must be True or False"]
    assert sections(info.value.message("vi"))["Quy tắc"] == ["progress phải là True hoặc False"]
    assert_not_written("out")


@pytest.mark.parametrize("value", [None, True, False])
def test_run_accepts_none_true_false_progress(
    tmp_path, monkeypatch, sp_model, capsys, mintdim_lines, value
):
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    job(["./data/a.jsonl"], sp_model, out="./out").run(workers=1, progress=value)
    err = capsys.readouterr().err
    # A bar only when asked for (None: stderr is not a terminal under capsys).
    assert ("unit-build:" in err) is (value is True)
    if value is True:  # the bar counts input bytes and shows the build's samples/s, tokens/s
        assert "unit-build: 100%" in err and "samples/s" in err and "tokens/s" in err
    assert "[unit-build] shard=000000 samples=1 bytes=16 B unit=8" in mintdim_lines()


def test_progress_bar_measures_input_bytes_with_total_percentage_and_eta(
    tmp_path, monkeypatch, sp_model, capsys
):
    monkeypatch.chdir(tmp_path)
    data = write_jsonl("data/a.jsonl", [{"text": "the model " * (i + 1)} for i in range(10)])
    total = data.stat().st_size
    advanced: list[tuple[int, int]] = []
    real_advance = Progress.advance

    def advance(self, input_bytes, samples, tokens):
        advanced.append((input_bytes, samples))
        real_advance(self, input_bytes, samples, tokens)

    monkeypatch.setattr(Progress, "advance", advance)
    job(["./data/a.jsonl"], sp_model, build_batch=[3], sizes=[[64, 128]]).run(
        workers=2, progress=True
    )
    # Batches of 3 lines arrive in input order; their raw bytes add up to the whole file.
    lines = data.read_bytes().splitlines(keepends=True)
    assert advanced == [
        (sum(map(len, lines[i : i + 3])), len(lines[i : i + 3])) for i in range(0, 10, 3)
    ]
    err = capsys.readouterr().err
    final = err.split("\r")[-1]
    assert final.startswith("unit-build: 100%|")
    assert f" {total}B/{total}B [" in final  # bytes done of the total
    assert re.search(r"\[\d\d:\d\d<\d\d:\d\d, ", final)  # elapsed < remaining (the ETA)
    assert re.search(r"[\d,]+ samples/s, [\d,]+ tokens/s\]", final)


def test_progress_rates_in_vietnamese(tmp_path, monkeypatch, sp_model, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    job(["./data/a.jsonl"], sp_model).run(workers=1, progress=True)
    assert re.search(r"[\d,]+ mẫu/s, [\d,]+ token/s\]", capsys.readouterr().err)


def test_every_error_is_importable_from_the_top_level_package():
    classes = [getattr(errors, name) for name in errors.__all__ if name[0].isupper()]
    classes = [c for c in classes if isinstance(c, type)]
    assert len(classes) >= 28
    for cls in classes:
        assert getattr(mintdim, cls.__name__) is cls
        assert issubclass(cls, errors.MintDimError)
        assert cls.__name__ in mintdim.__all__
    from mintdim import (  # noqa: F401 - the import itself is the test
        MintDimError,
        PipelineValidationError,
        TemplateLiteralWarning,
        UnitOverflowError,
        set_language,
    )

    assert set(errors.error_classes()) <= set(classes)


def test_no_clock_value_reaches_the_output(tmp_path, monkeypatch, sp_model):
    """Builds made in different seconds and time zones are byte-identical: no timestamp, date or
    duration is written anywhere (manifest, stats, histogram, indexes, shards)."""
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/a.jsonl", [{"text": "the model"}, {"text": "a unit"}])
    declared = job(["./data/a.jsonl"], sp_model, out="./out")
    trees = []
    zone = os.environ.get("TZ")
    try:
        for name in ("UTC", "Asia/Ho_Chi_Minh"):
            os.environ["TZ"] = name
            time.tzset()
            start = time.time()
            declared.run(workers=1)
            trees.append(tree_bytes("out"))
            shutil.rmtree("out")
            time.sleep(max(0.0, 1.05 - (time.time() - start)))  # the next build: a second later
    finally:
        if zone is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = zone
        time.tzset()
    assert trees[0] == trees[1]
    assert {"manifest.json", "stats.json", "histogram.json"} <= set(trees[0])


@pytest.mark.skipif(sys.platform != "linux", reason="needs a Linux pseudo-terminal")
def test_progress_bar_by_default_only_when_stderr_is_a_terminal(tmp_path, monkeypatch, sp_model):
    fcntl = pytest.importorskip("fcntl")
    termios = pytest.importorskip("termios")
    monkeypatch.chdir(tmp_path)
    write_jsonl("data/a.jsonl", [{"text": "the model"}] * 3)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24 x 100
    terminal = os.fdopen(slave, "w", buffering=1, encoding="utf-8")
    try:
        assert terminal.isatty()
        monkeypatch.setattr(sys, "stderr", terminal)
        job(["./data/a.jsonl"], sp_model, out="./tty").run(workers=1)
        terminal.flush()
        shown = b""
        while select.select([master], [], [], 0.2)[0]:
            shown += os.read(master, 65536)
    finally:
        terminal.close()
        os.close(master)
    text = shown.decode("utf-8", "replace")
    assert "unit-build: 100%" in text and "samples/s" in text and "tokens/s" in text

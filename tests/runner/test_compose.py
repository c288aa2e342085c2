"""Compose the real conf/ with Hydra's compose API: groups, schema errors, resolvers, translation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException, MissingConfigException
from omegaconf import OmegaConf
from omegaconf.errors import ValidationError

from mintdim import (
    ConfigValueError,
    DemoFileError,
    UnitValidationError,
    UnknownConfigKeyError,
    pipeline,
)
from mintdim.runner import config_dir, demo_path
from mintdim.runner.app import check_known_keys, hint_lines, run_job
from mintdim.runner.demo import DEMO_DIR, demo_files
from mintdim.runner.schema import field_help, node_schema, valid_keys
from mintdim.runner.translate import fluent_arguments, job_from_config

from .conftest import REPO

CONF = Path(config_dir())
GROUPS = ("source", "tokenizer", "units", "output")

# Values for keys an option leaves as ??? (the user's own files).
FILL = {
    "source.files": "source.files=[./a.jsonl]",
    "source.fields": "source.fields=[[text]]",
    "source.templates": 'source.templates=["x{text}"]',
    "tokenizer.path": "tokenizer.path=[./tok.model]",
    "output.dir": "output.dir=[./out]",
}


def fill(group: str, option: str) -> list[str]:
    """Overrides for the keys of ``group/option.yaml`` that are ``???``."""
    node = OmegaConf.load(CONF / group / f"{option}.yaml")
    return [FILL[f"{group}.{k}"] for k in node if OmegaConf.is_missing(node, k)]


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def test_config_dir_is_the_checkout_conf() -> None:
    assert Path(config_dir()) == REPO / "conf"
    assert (Path(config_dir()) / "config.yaml").is_file()


def test_groups_have_the_options_the_issue_names() -> None:
    assert {"demo", "alpaca", "qa", "prompt_response", "mapped", "jsonl"} <= set(options("source"))
    assert {"sentencepiece", "hf_json", "demo_sentencepiece", "demo_hf_json"} <= set(
        options("tokenizer")
    )
    assert {"small", "medium", "large"} <= set(options("units"))
    assert {"default", "dir"} <= set(options("output"))


def test_every_yaml_starts_with_a_comment_showing_how_to_select_it() -> None:
    for path in CONF.rglob("*.yaml"):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# "), path


def test_default_composition_is_the_demo(compose_cfg) -> None:
    cfg = compose_cfg()
    choices = compose_cfg(hydra_cfg=True).hydra.runtime.choices
    assert (choices.source, choices.tokenizer, choices.units, choices.output) == (
        "demo",
        "demo_sentencepiece",
        "small",
        "default",
    )
    assert cfg.workers is None and cfg.progress is None and cfg.lang is None
    assert cfg.source.fields == [["instruction", "input", "output"]]
    assert cfg.tokenizer.type.name == "sentencepiece"


def test_hydra_settings_keep_cwd_and_unique_dirs(compose_cfg) -> None:
    hc = compose_cfg(hydra_cfg=True).hydra
    assert hc.job.chdir is False
    assert hc.job.name == "mintdim"
    # hours-minutes-seconds-microseconds: two launches never share a directory
    for directory in (hc.run.dir, hc.sweep.dir):
        hour, minute, second, micro = Path(str(directory)).name.split("-")
        assert len(micro) == 6
    assert hc.callbacks.sweep_summary._target_ == "mintdim.runner.callbacks.SweepSummary"


@pytest.mark.parametrize(
    ("group", "option"), [(g, o) for g in GROUPS for o in options(g)], ids=lambda v: str(v)
)
def test_every_option_composes_and_translates(compose_cfg, tmp_path, group, option) -> None:
    overrides = [f"{group}={option}", *fill(group, option)]
    if group != "output":
        overrides += ["output=dir", f"output.dir=[{tmp_path}/out]"]
    cfg = compose_cfg(*overrides)
    check_known_keys(cfg)
    if "${hydra:" in OmegaConf.to_yaml(cfg.output):
        # the option's own ${hydra:runtime.output_dir} paths need a Hydra run: named, no crash
        with pytest.raises(ConfigValueError, match="output.dir"):
            fluent_arguments(cfg)
        return
    assert job_from_config(cfg).config.missing() == []


def test_translation_of_the_default_equals_the_fluent_chain(compose_cfg, tmp_path) -> None:
    cfg = compose_cfg(f"output.dir=[{tmp_path}]")
    expected = (
        pipeline("unit-build")
        .source.jsonl(
            files=[demo_path("self_instruct_seed_alpaca.jsonl")],
            fields=[["instruction", "input", "output"]],
            templates=[
                "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n{output}"
            ],
        )
        .tokenizer.sentencepiece([{"path": demo_path("demo_unigram.model")}])
        .units(
            sizes=[[64, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 1536, 2048, 3072]],
            build_batch=[4096],
        )
        .output.dir([str(tmp_path)], samples_per_shard=[10000])
    )
    assert job_from_config(cfg).config == expected.config


def test_translation_keeps_mapped_lists_as_lists(compose_cfg) -> None:
    cfg = compose_cfg(
        "source=mapped",
        "tokenizer=hf_json",
        "tokenizer.path=[./a.json,./b.json]",
        "units.sizes=[[64,128],[256]]",
        "units.build_batch=[7,9]",
        "output=dir",
        "output.dir=[./o1,./o2]",
        "output.samples_per_shard=[5,6]",
    )
    expected = (
        pipeline("unit-build")
        .source.jsonl(
            files=[
                demo_path("self_instruct_seed_alpaca.jsonl"),
                demo_path("gsm8k_test_first300.jsonl"),
            ],
            fields=[["instruction", "input", "output"], ["question", "answer"]],
            templates=[
                "{instruction}\n\n{input}\n\n{output}",
                "Question: {question}\nAnswer: {answer}",
            ],
        )
        .tokenizer.hf_json([{"path": "./a.json"}, {"path": "./b.json"}])
        .units(sizes=[[64, 128], [256]], build_batch=[7, 9])
        .output.dir(["./o1", "./o2"], samples_per_shard=[5, 6])
    )
    config = job_from_config(cfg).config
    assert config == expected.config
    assert type(config.files) is list and type(config.sizes[0]) is list


def test_missing_values_reach_the_core_as_none(compose_cfg) -> None:
    cfg = compose_cfg("source=jsonl", "output=dir", "tokenizer=sentencepiece")
    assert job_from_config(cfg).config.missing() == [
        "source.files",
        "source.fields",
        "source.templates",
        "tokenizer",
        "output.dir",
    ]


def test_run_options_come_from_top_level_keys(compose_cfg) -> None:
    from mintdim.runner.translate import run_options

    defaults = {"executor": "local", "ray_address": None, "resume": False, "piece_bytes": None}
    defaults["resumable"] = True
    assert run_options(compose_cfg()) == {
        "workers": None,
        "progress": None,
        "on_overflow": "abort",
        **defaults,
    }
    assert run_options(compose_cfg("workers=3", "progress=false", "on_overflow=extend")) == {
        "workers": 3,
        "progress": False,
        "on_overflow": "extend",
        **defaults,
    }
    assert run_options(compose_cfg("resumable=false"))["resumable"] is False


def test_executor_ray_with_its_address_resume_and_piece_size(compose_cfg) -> None:
    from mintdim.runner.translate import run_options

    cfg = compose_cfg(
        "executor=ray", "executor.address=ray://head:10001", "resume=true", "piece_bytes=4096"
    )
    options = run_options(cfg)
    assert (options["executor"], options["ray_address"]) == ("ray", "ray://head:10001")
    assert (options["resume"], options["piece_bytes"]) == (True, 4096)
    assert run_options(compose_cfg("executor=ray"))["ray_address"] is None


def test_tokenizer_options_reach_every_tokenizer_dict(compose_cfg) -> None:
    from mintdim.runner.translate import fluent_arguments

    base = ("tokenizer=hf_json", "tokenizer.path=[a.json,b.json]", "output=dir", "output.dir=[o]")
    plain = fluent_arguments(compose_cfg(*base))
    assert plain["tokenizer"]["config"] == [{"path": "a.json"}, {"path": "b.json"}]
    cfg = compose_cfg(
        *base,
        "tokenizer.encode=segments",
        "tokenizer.append_eos=true",
        "tokenizer.pad_fallback=eos",
        "tokenizer.unk_fallback=none",
    )
    options = {
        "encode": "segments",
        "append_eos": True,
        "pad_fallback": "eos",
        "unk_fallback": "none",
    }
    assert fluent_arguments(cfg)["tokenizer"]["config"] == [
        {"path": "a.json", **options},
        {"path": "b.json", **options},
    ]


# --- schema errors: before any work --------------------------------------------------------------


def test_unknown_group_option_lists_the_valid_ones(compose_cfg) -> None:
    with pytest.raises(MissingConfigException, match="Could not find 'units/huge'") as info:
        compose_cfg("units=huge")
    assert "Available options in 'units'" in str(info.value)
    assert "units/mine.yaml" in hint_lines(info.value, "en")[0]


def test_unknown_key_fails_and_the_hint_lists_valid_keys(compose_cfg) -> None:
    with pytest.raises(ConfigCompositionException, match="Could not override 'units.foo'") as info:
        compose_cfg("units.foo=1")
    keys = "sizes, build_batch, count, align, max_size, cost, unit_cost, pack"
    assert hint_lines(info.value, "en") == [f"MintDim: Valid keys in units: {keys}"]
    assert hint_lines(info.value, "vi") == [f"MintDim: Các key hợp lệ trong units: {keys}"]


def test_an_unknown_top_level_key_lists_the_top_level_keys(compose_cfg) -> None:
    with pytest.raises(ConfigCompositionException) as info:
        compose_cfg("bogus=1")
    (english,) = hint_lines(info.value, "en")
    (vietnamese,) = hint_lines(info.value, "vi")
    assert english.startswith("MintDim: Valid keys in the top level: source, tokenizer, ")
    assert vietnamese.startswith("MintDim: Các key hợp lệ trong cấp ngoài cùng: source, ")


@pytest.mark.parametrize(
    ("override", "key", "cause"),
    [
        ("units.build_batch=abc", "units.build_batch", "is not a ListConfig"),
        ("workers=many", "workers", "could not be converted to Integer"),
        ("progress=maybe", "progress", "is not a valid bool"),
        ("lang=fr", "lang", "expected one of \\[en, vi\\]"),
        ("tokenizer.type=bpe", "tokenizer.type", "expected one of \\[sentencepiece, hf_json\\]"),
        ("tokenizer.path=./x.model", "tokenizer.path", "is not a ListConfig"),
    ],
)
def test_wrong_type_fails_and_the_hint_explains_the_field(
    compose_cfg, override, key, cause
) -> None:
    with pytest.raises(ConfigCompositionException, match="Error merging override") as info:
        compose_cfg(override)
    assert isinstance(info.value.__cause__, ValidationError)
    assert re.search(cause, str(info.value.__cause__))
    (hint,) = hint_lines(info.value, "en")
    assert hint.startswith(f"MintDim: {key}: ")
    assert field_help(key)["example"] in hint


def test_force_added_key_is_rejected_by_the_runner(compose_cfg) -> None:
    cfg = compose_cfg("+units.foo=1", "+extra=2")
    with pytest.raises(UnknownConfigKeyError) as info:
        check_known_keys(cfg)
    assert info.value.unknown == {
        "units.foo": [
            "sizes",
            "build_batch",
            "count",
            "align",
            "max_size",
            "cost",
            "unit_cost",
            "pack",
        ],
        "extra": [
            "source",
            "tokenizer",
            "units",
            "output",
            "executor",
            "split",
            "decontaminate",
            "workers",
            "resume",
            "resumable",
            "piece_bytes",
            "progress",
            "on_overflow",
            "lang",
        ],
    }
    text = info.value.message("en")
    assert text.startswith("UnknownConfigKeyError:\nThe config has keys MintDim does not know.")
    assert "- units.foo" in text and "- units: sizes, build_batch" in text
    assert "Key không hợp lệ:\n- units.foo" in info.value.message("vi")


def test_schema_helpers() -> None:
    assert valid_keys(node_schema("output")) == ["dir", "samples_per_shard"]
    assert node_schema("units.nope") is None
    assert field_help("units.sizes[0]")["example"] == "units.sizes=[[128,192,256,320]]"
    assert set(field_help("lang")) == {"en", "vi", "example"}


# --- the demo resolver -----------------------------------------------------------------------


def test_demo_path_is_relative_below_cwd_and_absolute_elsewhere(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(REPO)
    assert demo_path("demo_unigram.model") == "mintdim/demo/demo_unigram.model"
    monkeypatch.chdir(tmp_path)
    assert demo_path("demo_unigram.model") == str(DEMO_DIR / "demo_unigram.model")
    assert Path(demo_path("demo_unigram.model")).is_file()


def test_demo_files_are_named_not_searched() -> None:
    assert demo_files() == [
        "demo_bpe.tokenizer.json",
        "demo_unigram.model",
        "gsm8k_test_first300.jsonl",
        "self_instruct_seed_alpaca.jsonl",
        "self_instruct_seed_alpaca.parquet",
    ]
    with pytest.raises(DemoFileError) as info:
        demo_path("alpaca.jsonl")
    assert "Bundled files:\n- demo_bpe.tokenizer.json" in info.value.message("en")
    assert "Các file có sẵn:" in info.value.message("vi")


def test_unknown_demo_name_in_a_config_is_reported_as_itself(compose_cfg) -> None:
    cfg = compose_cfg("source.files=[${mintdim_demo:nope.jsonl}]")
    with pytest.raises(DemoFileError, match="nope.jsonl"):
        fluent_arguments(cfg)


def test_composed_config_yaml_round_trips(compose_cfg) -> None:
    cfg = compose_cfg("source=qa")
    text = OmegaConf.to_yaml(cfg)
    assert "${mintdim_demo:gsm8k_test_first300.jsonl}" in text


def test_a_typo_in_your_own_yaml_fails_and_the_hint_lists_valid_keys(compose_cfg, tmp_path) -> None:
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "mine.yaml").write_text("# mine\nfile: [./x.jsonl]\n")
    with pytest.raises(
        ConfigCompositionException, match="Key 'file' not in 'SourceConfig'"
    ) as info:
        compose_cfg(f"hydra.searchpath=[file://{tmp_path}]", "source=mine")
    assert hint_lines(info.value, "en") == [
        "MintDim: Valid keys in source: files, fields, templates, max_line_bytes, kind"
    ]


def test_your_own_option_is_typed_by_the_same_schema(compose_cfg, tmp_path) -> None:
    (tmp_path / "units").mkdir()
    (tmp_path / "units" / "mine.yaml").write_text("# mine\nsizes: [[8, 16]]\nbuild_batch: [2]\n")
    cfg = compose_cfg(f"hydra.searchpath=[file://{tmp_path}]", "units=mine", "output=dir")
    assert job_from_config(cfg).config.sizes == [[8, 16]]


def test_a_size_that_is_not_an_int_is_named_by_the_core(compose_cfg, tmp_path) -> None:
    # units.sizes also takes "auto", so the schema types it loosely and the core checks it.
    cfg = compose_cfg("units.sizes=[[64,x]]", "output=dir", f"output.dir=[{tmp_path}/o]")
    with pytest.raises(UnitValidationError) as info:
        run_job(cfg)
    assert (info.value.key, info.value.value, info.value.rule) == (
        "units.sizes[0][1]",
        "x",
        "positive_int",
    )


def test_tokenizer_engine_reaches_every_tokenizer_dict(compose_cfg) -> None:
    out = ("output=dir", "output.dir=[./o]")
    cfg = compose_cfg(
        "tokenizer=hf_json", "tokenizer.path=[./a.json,./b.json]", "tokenizer.engine=fast", *out
    )
    config = job_from_config(cfg).config
    assert config.tokenizer == [
        {"path": "./a.json", "engine": "fast"},
        {"path": "./b.json", "engine": "fast"},
    ]
    default = job_from_config(compose_cfg("tokenizer=hf_json", "tokenizer.path=[./a.json]", *out))
    assert default.config.tokenizer == [{"path": "./a.json"}]


def test_an_unknown_tokenizer_engine_fails_while_composing(compose_cfg) -> None:
    with pytest.raises(Exception, match="turbo"):
        compose_cfg("tokenizer=hf_json", "tokenizer.path=[./a.json]", "tokenizer.engine=turbo")


def test_tokenizer_parity_reaches_every_tokenizer_dict(compose_cfg) -> None:
    out = ("output=dir", "output.dir=[./o]")
    fast = ("tokenizer=hf_json", "tokenizer.path=[./a.json,./b.json]", "tokenizer.engine=fast")
    cfg = compose_cfg(*fast, "tokenizer.parity.every=1", "tokenizer.parity.first_rows=0", *out)
    guard = {"first_rows": 0, "every": 1}
    assert job_from_config(cfg).config.tokenizer == [
        {"path": "./a.json", "engine": "fast", "parity": guard},
        {"path": "./b.json", "engine": "fast", "parity": guard},
    ]
    # The defaults are the API's own: left out, as every option at its default is.
    default = job_from_config(compose_cfg(*fast, *out))
    assert default.config.tokenizer == [
        {"path": "./a.json", "engine": "fast"},
        {"path": "./b.json", "engine": "fast"},
    ]


@pytest.mark.parametrize("override", ["tokenizer.parity.every=often", "tokenizer.parity.evry=3"])
def test_a_bad_tokenizer_parity_key_fails_while_composing(compose_cfg, override) -> None:
    with pytest.raises(Exception, match="parity"):
        compose_cfg("tokenizer=hf_json", "tokenizer.path=[./a.json]", override)

"""Every configuration error, raised by the real situation through ``job.run()``.

For each error: its class, its attributes, the English and Vietnamese texts (compared with the
spec's catalogue to the letter where the failing values are the catalogue's own) and that nothing
was written: the output directory does not exist after a failed validation.

Data errors met while reading samples (SourceParseError, SampleSchemaError, FieldValueTypeError,
UnitOverflowError) are checked here against the catalogue too; their behaviour in detail lives in
test_jsonl_source.py and test_units.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

import mintdim
from mintdim import errors, pipeline
from mintdim.build.tokenizer.validate import check_vocab
from mintdim.shared.lang import get_language
from tests.conftest import corpora_file, training_text
from tests.unit_build.helpers import (
    assert_not_written,
    block,
    job,
    reference_encoder,
    sections,
    sp_no_newline,
    sp_nopad,
    write_jsonl,
    write_word_level,
)

pytestmark = pytest.mark.usefixtures("_english")


@pytest.fixture
def _english(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MINTDIM_LANG", raising=False)
    mintdim.set_language(None)
    yield
    mintdim.set_language(None)


@pytest.fixture(name="sp_nopad")
def _sp_nopad(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sp_nopad(tmp_path_factory)


@pytest.fixture(name="sp_no_newline")
def _sp_no_newline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sp_no_newline(tmp_path_factory)


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working directory with ./data/a.jsonl, ./data/b.jsonl and ./data/c.jsonl."""
    monkeypatch.chdir(tmp_path)
    for name in "abc":
        write_jsonl(f"data/{name}.jsonl", [{"text": "the model"}])
    return tmp_path


THREE = ["./data/a.jsonl", "./data/b.jsonl", "./data/c.jsonl"]


def fails(declared, cls: type[errors.MintDimError], *written: str) -> errors.MintDimError:
    """Run ``declared``; it must raise ``cls`` and leave ``written`` (default ./out) absent."""
    with pytest.raises(cls) as info:
        declared.run(workers=1)
    assert type(info.value) is cls
    assert_not_written(*(written or ("out",)))
    return info.value


# ---------------------------------------------------------------------------
# 1. PipelineValidationError
# ---------------------------------------------------------------------------

ALL_MISSING = [
    "source.files",
    "source.fields",
    "source.templates",
    "tokenizer",
    "units.sizes",
    "units.build_batch",
    "output.dir",
    "output.samples_per_shard",
]


def test_empty_pipeline_lists_every_missing_key_exactly_as_the_catalogue(cwd):
    err = fails(pipeline("unit-build"), errors.PipelineValidationError)
    assert err.missing == ALL_MISSING
    bullets = "\n".join(f"- {key}" for key in ALL_MISSING)
    assert err.message("en") == (
        f"PipelineValidationError:\nPipeline configuration is incomplete.\n\nMissing:\n{bullets}"
    )
    assert err.message("vi") == (
        f"PipelineValidationError:\nPipeline chưa được cấu hình đầy đủ.\n\nThiếu:\n{bullets}"
    )
    assert "Thiếu cấu hình nào" not in err.message("vi")


@pytest.mark.parametrize(
    ("steps", "missing"),
    [
        (
            lambda p: p.source.jsonl(files=["./a.jsonl"]),
            ALL_MISSING[1:],
        ),
        (
            lambda p: p.source.jsonl(files=["a"], fields=[["t"]], templates=["{t}"]),
            ALL_MISSING[3:],
        ),
        (
            lambda p: p.tokenizer.sentencepiece({"path": "t.model"}).units(sizes=[[8]]),
            ["source.files", "source.fields", "source.templates", "units.build_batch"]
            + ALL_MISSING[6:],
        ),
        (
            lambda p: p.units(build_batch=[4]).output.dir("./out"),
            ALL_MISSING[:5] + ["output.samples_per_shard"],
        ),
        (
            lambda p: (
                p.source.jsonl(files=["a"], fields=[["t"]], templates=["{t}"])
                .tokenizer.hf_json()
                .units(sizes=[[8]], build_batch=[4])
                .output.dir(samples_per_shard=[3])
            ),
            ["tokenizer", "output.dir"],
        ),
    ],
)
def test_exactly_the_missing_keys_are_listed(cwd, steps, missing):
    err = fails(steps(pipeline("unit-build")), errors.PipelineValidationError)
    assert err.missing == missing
    assert sections(err.message("en"))["Missing"] == [f"- {key}" for key in missing]
    assert sections(err.message("vi"))["Thiếu"] == [f"- {key}" for key in missing]


# ---------------------------------------------------------------------------
# 2. MintDimFileNotFoundError
# ---------------------------------------------------------------------------


def test_missing_source_file_matches_the_catalogue(cwd, sp_model):
    err = fails(job(["./data/train.jsonl"], sp_model), errors.MintDimFileNotFoundError)
    assert (err.context, err.path) == ("source", "./data/train.jsonl")
    assert isinstance(err, FileNotFoundError)
    assert err.filename == "./data/train.jsonl"
    block(
        err,
        "en",
        "MintDimFileNotFoundError:\nRequired file was not found.\n\n"
        "Context:\nsource\n\nMissing file:\n./data/train.jsonl",
    )
    block(
        err,
        "vi",
        "MintDimFileNotFoundError:\nKhông tìm thấy file cần dùng.\n\n"
        "Context:\nsource\n\nFile thiếu:\n./data/train.jsonl",
    )
    # Relative paths resolve from the working directory, and the text says where it looked.
    assert f"looked for: {cwd / 'data' / 'train.jsonl'}" in err.message("en")
    assert f"đã tìm tại: {cwd / 'data' / 'train.jsonl'}" in err.message("vi")


def test_the_first_missing_source_file_is_named(cwd, sp_model):
    err = fails(
        job(["./data/a.jsonl", "./data/nope.jsonl", "./data/gone.jsonl"], sp_model),
        errors.MintDimFileNotFoundError,
    )
    assert err.path == "./data/nope.jsonl"


def test_a_directory_is_not_a_source_file(cwd, sp_model):
    err = fails(job(["./data"], sp_model), errors.MintDimFileNotFoundError)
    assert (err.context, err.path) == ("source", "./data")


def test_missing_tokenizer_file(cwd):
    err = fails(
        job(["./data/a.jsonl"], "./tokenizer/tokenizer.model"), errors.MintDimFileNotFoundError
    )
    assert (err.context, err.path) == ("tokenizer", "./tokenizer/tokenizer.model")
    block(
        err,
        "en",
        "MintDimFileNotFoundError:\nRequired file was not found.\n\n"
        "Context:\ntokenizer\n\nMissing file:\n./tokenizer/tokenizer.model",
    )
    block(
        err,
        "vi",
        "MintDimFileNotFoundError:\nKhông tìm thấy file cần dùng.\n\n"
        "Context:\ntokenizer\n\nFile thiếu:\n./tokenizer/tokenizer.model",
    )


def test_missing_hf_tokenizer_file(cwd):
    err = fails(job(["./data/a.jsonl"], "./tok/tokenizer.json"), errors.MintDimFileNotFoundError)
    assert (err.context, err.path) == ("tokenizer", "./tok/tokenizer.json")


# ---------------------------------------------------------------------------
# 7-9, 12, 13. Mapping errors (3 files, 2 entries: the catalogue's own numbers)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "cls", "key"),
    [
        ({"tokenizers": 2}, errors.TokenizerMappingError, "tokenizer"),
        ({"fields": [["text"], ["text"]]}, errors.FieldMappingError, "source.fields"),
        ({"templates": ["{text}", "{text}"]}, errors.TemplateMappingError, "source.templates"),
        ({"sizes": [[8], [16]]}, errors.UnitMappingError, "units.sizes"),
        ({"build_batch": [4, 8]}, errors.UnitMappingError, "units.build_batch"),
        ({"out": ["./o1", "./o2"]}, errors.OutputMappingError, "output.dir"),
    ],
)
def test_mapping_errors_name_the_list(cwd, sp_model, kwargs, cls, key):
    tokenizer = [sp_model] * kwargs.pop("tokenizers") if "tokenizers" in kwargs else sp_model
    err = fails(job(THREE, tokenizer, **kwargs), cls, *kwargs.get("out", ["out"]))
    assert isinstance(err, errors.MappingError)
    assert (err.file_count, err.got, err.key) == (3, 2, key)
    # The spec's sentences and headers are checked in test_errors.py.
    assert err.message("en").startswith(f"{cls.__name__}:\nReceived 3 input files but 2 ")
    assert err.message("vi").endswith(f"\n\nKey:\n{key}")


def test_too_many_entries_are_a_mapping_error_too(cwd, sp_model):
    err = fails(job(THREE[:2], [sp_model] * 3), errors.TokenizerMappingError)
    assert (err.file_count, err.got) == (2, 3)
    assert err.message("en").splitlines()[1] == "Received 2 input files but 3 tokenizers."
    assert err.message("vi").splitlines()[1] == "Nhận 2 file đầu vào nhưng có 3 tokenizer."


# ---------------------------------------------------------------------------
# 18. SamplesPerShardError
# ---------------------------------------------------------------------------

# The spec's texts for these two examples are pinned in test_errors.py; here the build raises them.


@pytest.mark.parametrize(
    ("files", "values", "facts"),
    [
        (["./data/a.jsonl"], [0], {"problem": "not_positive", "index": 0, "value": 0}),
        (THREE, [10, 20], {"problem": "arity", "file_count": 3, "got": 2}),
    ],
    ids=["not_positive", "arity"],
)
def test_samples_per_shard_spec_examples_are_raised(cwd, sp_model, files, values, facts):
    err = fails(job(files, sp_model, samples_per_shard=values), errors.SamplesPerShardError)
    assert err.facts() == errors.SamplesPerShardError(**facts).facts()


@pytest.mark.parametrize(
    ("values", "index", "shown"),
    [([-5], 0, "-5"), ([True], 0, "True (bool)"), (["10"], 0, "'10' (str)"), ([4, 0, 2], 1, "0")],
)
def test_samples_per_shard_bad_values(cwd, sp_model, values, index, shown):
    files = THREE[: len(values)]
    err = fails(job(files, sp_model, samples_per_shard=values), errors.SamplesPerShardError)
    assert (err.problem, err.index, err.value) == ("not_positive", index, values[index])
    assert sections(err.message("en"))["Problem"] == [
        f"samples_per_shard[{index}] must be a positive int, got {shown}"
    ]


# ---------------------------------------------------------------------------
# 10. TemplateFieldMismatchError
# ---------------------------------------------------------------------------


def test_template_uses_an_undeclared_field_matches_the_catalogue(cwd, sp_model):
    err = fails(
        job(
            ["./data/train.jsonl"],
            sp_model,
            fields=[["instruction", "input", "output"]],
            templates=["{instruction}\n\n{prompt}\n\n{output}"],
        ),
        errors.TemplateFieldMismatchError,
    )
    assert (err.file, err.field, err.problem) == ("./data/train.jsonl", "prompt", "not_declared")
    assert err.fields == ["instruction", "input", "output"]
    assert err.template == "{instruction}\n\n{prompt}\n\n{output}"
    block(
        err,
        "en",
        "TemplateFieldMismatchError:\nSource file:\n./data/train.jsonl\n\n"
        "API declaration for this file:\nfields = ['instruction', 'input', 'output']\n"
        'template = "{instruction}\\n\\n{prompt}\\n\\n{output}"\n\n'
        "Field causing template mismatch:\nprompt\nReason:\n"
        "template uses {prompt}, but fields does not declare it",
    )
    block(
        err,
        "vi",
        "TemplateFieldMismatchError:\nFile nguồn:\n./data/train.jsonl\n\n"
        "Khai báo API cho file này:\nfields = ['instruction', 'input', 'output']\n"
        'template = "{instruction}\\n\\n{prompt}\\n\\n{output}"\n\n'
        "Field gây lệch template:\nprompt\nLý do:\n"
        "template dùng {prompt}, nhưng fields không khai báo field này",
    )


def test_declared_field_not_used_by_the_template_spec_invalid_example(cwd, sp_model):
    err = fails(
        job(
            ["./data/a.jsonl"],
            sp_model,
            fields=[["prompt", "answer", "separator", "source"]],
            templates=["{prompt}{separator}{answer}"],
        ),
        errors.TemplateFieldMismatchError,
    )
    assert (err.field, err.problem) == ("source", "not_used")
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["Field causing template mismatch"] == [
        "source",
        "Reason:",
        "fields declares it, but the template does not use {source}",
    ]
    assert vi["Field gây lệch template"] == [
        "source",
        "Lý do:",
        "fields khai báo field này, nhưng template không dùng {source}",
    ]


def test_mismatch_names_the_file_whose_template_is_wrong(cwd, sp_model):
    err = fails(
        job(
            THREE[:2],
            sp_model,
            fields=[["text"], ["prompt", "answer"]],
            templates=["{text}", "{prompt}"],
        ),
        errors.TemplateFieldMismatchError,
    )
    assert (err.file, err.field, err.problem) == ("./data/b.jsonl", "answer", "not_used")


# ---------------------------------------------------------------------------
# 11. TemplateTokenizerError
# ---------------------------------------------------------------------------


def test_template_literal_unk_matches_the_catalogue(cwd, sp_no_newline):
    assert 1 in reference_encoder(str(sp_no_newline))("\n\n"), "fixture: newline must be UNK"
    write_jsonl("data/ab.jsonl", [{"a": "the", "b": "model"}])
    err = fails(
        job(["./data/ab.jsonl"], sp_no_newline, fields=[["a", "b"]], templates=["{a}\n\n{b}"]),
        errors.TemplateTokenizerError,
    )
    assert (err.file_index, err.template, err.segment) == (0, "{a}\n\n{b}", "\n\n")
    assert err.unk_count == reference_encoder(str(sp_no_newline))("\n\n").count(1)
    block(
        err,
        "en",
        "TemplateTokenizerError:\nTemplate static parts produce UNK when encoded by the tokenizer."
        '\n\nFile index:\n0\n\nTemplate:\n"{a}\\n\\n{b}"\n\n'
        "Problem:\ntemplate literal characters are not fully covered by tokenizer vocabulary\n\n"
        "Fix:\nadjust template literal characters or use a tokenizer that covers them",
    )
    block(
        err,
        "vi",
        "TemplateTokenizerError:\nPhần literal của template tạo UNK khi tokenize.\n\n"
        'Vị trí file:\n0\n\nTemplate:\n"{a}\\n\\n{b}"\n\n'
        "Vấn đề:\nký tự literal trong template không được tokenizer bao phủ\n\n"
        "Cách sửa:\nchỉnh ký tự literal hoặc dùng tokenizer bao phủ được",
    )


@pytest.mark.parametrize("literal", ["中", "🎉", " → "])
def test_template_literal_outside_the_sp_vocabulary(cwd, sp_model, literal):
    unk = reference_encoder(str(sp_model))(literal).count(1)
    assert unk >= 1
    write_jsonl("data/ab.jsonl", [{"a": "the", "b": "model"}])
    template = f"{{a}}{literal}{{b}}"
    err = fails(
        job(
            ["./data/a.jsonl", "./data/ab.jsonl"],
            sp_model,
            fields=[["text"], ["a", "b"]],
            templates=["{text}", template],
        ),
        errors.TemplateTokenizerError,
    )
    assert (err.file_index, err.template, err.segment, err.unk_count) == (1, template, literal, unk)
    en = sections(err.message("en"))
    assert en["File index"] == ["1"]
    assert en["Literal segment"][0] == json.dumps(literal, ensure_ascii=False)
    assert en["Literal segment"][-1] == f"UNK tokens: {unk}"
    assert sections(err.message("vi"))["Đoạn literal"][-1] == f"Số token UNK: {unk}"


def test_template_literal_unk_with_hf_tokenizer(cwd, hf_json):
    write_jsonl("data/ab.jsonl", [{"a": "the", "b": "model"}])
    err = fails(
        job(["./data/ab.jsonl"], hf_json, fields=[["a", "b"]], templates=["{a} 中 {b}"]),
        errors.TemplateTokenizerError,
    )
    assert (err.segment, err.unk_count) == (" 中 ", 1)


# ---------------------------------------------------------------------------
# 14. UnitValidationError
# ---------------------------------------------------------------------------

UNIT_RULES_EN = (
    "UnitValidationError:\nInvalid unit config.\n\nRules:\n- sizes must be positive integers\n"
    "- sizes must be sorted ascending\n- build_batch must be a positive integer"
)
UNIT_RULES_VI = (
    "UnitValidationError:\nUnit config không hợp lệ.\n\nQuy tắc:\n- sizes phải là các số nguyên dương\n"
    "- sizes phải tăng dần\n- build_batch phải là số nguyên dương"
)


@pytest.mark.parametrize(
    ("kwargs", "key", "value", "rule", "en_problem", "vi_problem"),
    [
        (
            {"sizes": [[128, 320, 256]]},
            "units.sizes[0][2]",
            256,
            "ascending",
            "units.sizes[0][2] must be sorted ascending, got 256",
            "units.sizes[0][2] phải tăng dần, hiện tại là 256",
        ),
        (
            {"sizes": [[128, 128]]},
            "units.sizes[0][1]",
            128,
            "ascending",
            "units.sizes[0][1] must be sorted ascending, got 128",
            "units.sizes[0][1] phải tăng dần, hiện tại là 128",
        ),
        (
            {"sizes": [[0, 128]]},
            "units.sizes[0][0]",
            0,
            "positive_int",
            "units.sizes[0][0] must be a positive integer, got 0",
            "units.sizes[0][0] phải là số nguyên dương, hiện tại là 0",
        ),
        (
            {"sizes": [[-8]]},
            "units.sizes[0][0]",
            -8,
            "positive_int",
            "units.sizes[0][0] must be a positive integer, got -8",
            "units.sizes[0][0] phải là số nguyên dương, hiện tại là -8",
        ),
        (
            {"sizes": [[True, 128]]},
            "units.sizes[0][0]",
            True,
            "positive_int",
            "units.sizes[0][0] must be a positive integer, got True (bool)",
            "units.sizes[0][0] phải là số nguyên dương, hiện tại là True (bool)",
        ),
        (
            {"sizes": [[8, 16.0]]},
            "units.sizes[0][1]",
            16.0,
            "positive_int",
            "units.sizes[0][1] must be a positive integer, got 16.0 (float)",
            "units.sizes[0][1] phải là số nguyên dương, hiện tại là 16.0 (float)",
        ),
        (
            {"sizes": [[]]},
            "units.sizes[0]",
            [],
            "non_empty",
            "units.sizes[0] must not be empty, got []",
            "units.sizes[0] không được rỗng, hiện tại là []",
        ),
        (
            {"sizes": [128]},
            "units.sizes[0]",
            128,
            "list_of_lists",
            "units.sizes[0] must be a list of lists of integers, got 128",
            "units.sizes[0] phải là list các list số nguyên, hiện tại là 128",
        ),
        (
            {"build_batch": [0]},
            "units.build_batch[0]",
            0,
            "positive_int",
            "units.build_batch[0] must be a positive integer, got 0",
            "units.build_batch[0] phải là số nguyên dương, hiện tại là 0",
        ),
        (
            {"build_batch": [False]},
            "units.build_batch[0]",
            False,
            "positive_int",
            "units.build_batch[0] must be a positive integer, got False (bool)",
            "units.build_batch[0] phải là số nguyên dương, hiện tại là False (bool)",
        ),
    ],
)
def test_unit_validation_errors(cwd, sp_model, kwargs, key, value, rule, en_problem, vi_problem):
    err = fails(job(["./data/a.jsonl"], sp_model, **kwargs), errors.UnitValidationError)
    assert (err.key, err.value, err.rule) == (key, value, rule)
    assert err.message("en") == f"{UNIT_RULES_EN}\n\nProblem:\n{en_problem}"
    assert err.message("vi") == f"{UNIT_RULES_VI}\n\nVấn đề:\n{vi_problem}"


def test_mapped_sizes_name_the_bad_list(cwd, sp_model):
    err = fails(
        job(THREE[:2], sp_model, sizes=[[8, 16], [32, 16]], out=["./o1", "./o2"]),
        errors.UnitValidationError,
        "o1",
        "o2",
    )
    assert (err.key, err.rule) == ("units.sizes[1][1]", "ascending")


def test_flat_sizes_list_is_a_unit_validation_error(cwd, sp_model):
    err = fails(
        job(["./data/a.jsonl"], sp_model, sizes=[128, 192, 256, 320]), errors.UnitValidationError
    )
    assert (err.key, err.value, err.rule) == ("units.sizes[0]", 128, "list_of_lists")


def test_flat_sizes_list_fails_before_anything_is_written(cwd, sp_model):
    """The flat list is refused and nothing is written."""
    err = fails(job(THREE, sp_model, sizes=[128, 192, 256, 320]), errors.UnitValidationError)
    # Four flat entries for three files: the shape is named, not a count mismatch.
    assert (err.key, err.value, err.rule) == ("units.sizes[0]", 128, "list_of_lists")


def test_bare_build_batch_is_reported_as_a_list_of_ints(cwd, sp_model):
    with pytest.raises(errors.UnitValidationError) as info:
        job(["./data/a.jsonl"], sp_model, build_batch=4096).run(workers=1)
    assert info.value.key == "units.build_batch"
    assert "list of lists" not in info.value.message("en")


# ---------------------------------------------------------------------------
# 5, 6. TokenizerValidationError
# ---------------------------------------------------------------------------

TOKENIZER_RULES_EN = (
    "Rules:\n- config must be a dict with key: path\n- path must be a string\n"
    "- unk_id and pad_id are loaded from the tokenizer library"
)
TOKENIZER_RULES_VI = (
    "Quy tắc:\n- config phải là dict có key: path\n- path phải là string\n"
    "- unk_id và pad_id được lấy từ thư viện tokenizer"
)


def test_declared_pad_id_matches_the_catalogue(cwd, sp_model):
    err = fails(
        job(["./data/a.jsonl"], {"path": str(sp_model), "pad_id": 0}),
        errors.TokenizerValidationError,
    )
    assert (err.component, err.problem, err.got, err.index) == (
        "config",
        "unknown_keys",
        ["pad_id"],
        0,
    )
    block(
        err,
        "en",
        "TokenizerValidationError:\nInvalid tokenizer config.\n\nComponent:\nconfig\n\n"
        "Problem:\ntokenizer config has unknown keys: ['pad_id']. "
        f"unk_id and pad_id are loaded from the tokenizer library.\n\n{TOKENIZER_RULES_EN}",
    )
    block(
        err,
        "vi",
        "TokenizerValidationError:\nCấu hình tokenizer không hợp lệ.\n\nThành phần:\nconfig\n\n"
        "Vấn đề:\nconfig tokenizer có key không hợp lệ: ['pad_id']. "
        f"unk_id và pad_id được lấy từ thư viện tokenizer.\n\n{TOKENIZER_RULES_VI}",
    )
    assert sections(err.message("en"))["Tokenizer index"] == ["0"]


@pytest.mark.parametrize(
    ("config", "problem", "got", "en_problem", "vi_problem"),
    [
        (
            "PATH",
            "not_dict",
            "str",
            "tokenizer config must be a dict, got str.",
            "config tokenizer phải là dict, hiện tại là str.",
        ),
        (
            {},
            "missing_path",
            None,
            "tokenizer config is missing the required key: path.",
            "config tokenizer thiếu key bắt buộc: path.",
        ),
        (
            {"path": 123},
            "path_not_string",
            "int",
            "tokenizer config key path must be a string, got int.",
            "key path trong config tokenizer phải là string, hiện tại là int.",
        ),
        (
            {"path": "PATH", "unk_id": 1, "pad_id": 0},
            "unknown_keys",
            ["pad_id", "unk_id"],
            "tokenizer config has unknown keys: ['pad_id', 'unk_id']. "
            "unk_id and pad_id are loaded from the tokenizer library.",
            "config tokenizer có key không hợp lệ: ['pad_id', 'unk_id']. "
            "unk_id và pad_id được lấy từ thư viện tokenizer.",
        ),
        (
            {"path": "PATH", "vocab": "x"},
            "unknown_keys",
            ["vocab"],
            "tokenizer config has unknown keys: ['vocab']. The allowed keys are path, engine, "
            "encode, append_eos, pad_fallback, unk_fallback and parity.",
            "config tokenizer có key không hợp lệ: ['vocab']. Các key được phép: path, engine, "
            "encode, append_eos, pad_fallback, unk_fallback và parity.",
        ),
    ],
)
def test_tokenizer_config_structure(cwd, sp_model, config, problem, got, en_problem, vi_problem):
    if config == "PATH":
        config = str(sp_model)
        declared = (
            pipeline("unit-build")
            .source.jsonl(files=["./data/a.jsonl"], fields=[["text"]], templates=["{text}"])
            .tokenizer.sentencepiece(config)
            .units(sizes=[[8]], build_batch=[2])
            .output.dir("./out", samples_per_shard=[2])
        )
    else:
        config = {k: (str(sp_model) if v == "PATH" else v) for k, v in config.items()}
        declared = job(["./data/a.jsonl"], config, kind="sentencepiece")
    err = fails(declared, errors.TokenizerValidationError)
    assert (err.component, err.problem, err.got, err.index) == ("config", problem, got, 0)
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["Component"] == ["config"] and vi["Thành phần"] == ["config"]
    assert en["Problem"] == [en_problem]
    assert vi["Vấn đề"] == [vi_problem]
    assert "\n".join(["Rules:", *en["Rules"]]) == TOKENIZER_RULES_EN
    assert "\n".join(["Quy tắc:", *vi["Quy tắc"]]) == TOKENIZER_RULES_VI


def test_tokenizer_config_error_names_its_index(cwd, sp_model):
    err = fails(
        job(THREE[:2], [str(sp_model), {"path": str(sp_model), "pad_id": 3}], out=["./o1", "./o2"]),
        errors.TokenizerValidationError,
        "o1",
        "o2",
    )
    assert err.index == 1
    assert sections(err.message("en"))["Tokenizer index"] == ["1"]
    assert sections(err.message("vi"))["Vị trí tokenizer"] == ["1"]


FORMATS = "- sentencepiece (.model)\n- huggingface tokenizer (.json)"


@pytest.mark.parametrize(
    ("method", "fixture", "method_lines"),
    [
        (
            "sentencepiece",
            "hf_json",
            [
                ".tokenizer.sentencepiece expects a .model file",
                "for a .json file use .tokenizer.hf_json",
            ],
        ),
        (
            "hf_json",
            "sp_model",
            [
                ".tokenizer.hf_json expects a .json file",
                "for a .model file use .tokenizer.sentencepiece",
            ],
        ),
    ],
)
def test_wrong_extension_for_the_method_is_unsupported_format(
    cwd, request, method, fixture, method_lines
):
    path = str(request.getfixturevalue(fixture))
    err = fails(job(["./data/a.jsonl"], path, kind=method), errors.TokenizerValidationError)
    assert (err.component, err.problem, err.path, err.method) == (
        "format",
        "unsupported_format",
        path,
        method,
    )
    block(
        err,
        "en",
        f"TokenizerValidationError:\nUnsupported tokenizer format.\n\nSupported formats:\n{FORMATS}",
    )
    block(
        err,
        "vi",
        "TokenizerValidationError:\nĐịnh dạng tokenizer chưa được hỗ trợ.\n\n"
        f"Các định dạng hiện hỗ trợ:\n{FORMATS}",
    )
    assert sections(err.message("en"))["Method"] == method_lines
    assert sections(err.message("en"))["File"] == [path]


@pytest.mark.parametrize("name", ["tokenizer.bin", "tokenizer", "tokenizer.model.txt", "vocab.txt"])
def test_other_extensions_are_unsupported(cwd, sp_model, name):
    shutil.copyfile(sp_model, name)
    err = fails(
        job(["./data/a.jsonl"], f"./{name}", kind="sentencepiece"), errors.TokenizerValidationError
    )
    assert (err.component, err.path) == ("format", f"./{name}")
    assert sections(err.message("en"))["Method"] == [
        ".tokenizer.sentencepiece expects a .model file"
    ]


def test_unsupported_format_is_reported_before_the_file_is_looked_for(cwd):
    err = fails(
        job(["./data/a.jsonl"], "./missing.txt", kind="hf_json"), errors.TokenizerValidationError
    )
    assert err.component == "format"


# ---------------------------------------------------------------------------
# TokenizerSpecialTokenError
# ---------------------------------------------------------------------------


def test_sentencepiece_without_pad(cwd, sp_nopad):
    err = fails(job(["./data/a.jsonl"], sp_nopad), errors.TokenizerSpecialTokenError)
    assert (err.token, err.path, err.looked_for) == (
        "pad_id",
        str(sp_nopad),
        ["sp.pad_id() = -1"],
    )
    block(
        err,
        "en",
        "TokenizerSpecialTokenError:\nTokenizer library did not expose a required special token."
        "\n\nSpecial token:\npad_id",
    )
    block(
        err,
        "vi",
        "TokenizerSpecialTokenError:\nThư viện tokenizer không cung cấp special token bắt buộc."
        "\n\nSpecial token:\npad_id",
    )
    assert sections(err.message("en"))["Tokenizer"] == [str(sp_nopad)]


@pytest.mark.corpora
@pytest.mark.parametrize(
    ("name", "token", "looked_for"),
    [
        ("mistral-7b-v0.1.tokenizer.model", "pad_id", ["sp.pad_id() = -1"]),
        ("phi-2.tokenizer.json", "unk_id", None),
        ("phi-3-mini.tokenizer.json", "pad_id", None),
    ],
)
def test_corpora_tokenizers_without_a_special_token(cwd, name, token, looked_for):
    path = shutil.copyfile(corpora_file(f"tokenizers/{name}"), name)
    err = fails(job(["./data/a.jsonl"], f"./{path}"), errors.TokenizerSpecialTokenError)
    assert (err.token, err.path) == (token, f"./{name}")
    if looked_for:
        assert err.looked_for == looked_for
    assert sections(err.message("en"))["Special token"] == [token]
    assert sections(err.message("vi"))["Special token"] == [token]


def _tiny_hf(path: Path, specials: list[str], unk: str | None) -> Path:
    tokenizer = Tokenizer(models.BPE(unk_token=unk))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=120, special_tokens=specials, show_progress=False)
    tokenizer.train_from_iterator(training_text(200), trainer=trainer)
    tokenizer.save(str(path))
    return path


def test_hf_tokenizer_without_pad(cwd):
    path = _tiny_hf(cwd / "nopad.json", ["[UNK]"], "[UNK]")
    err = fails(job(["./data/a.jsonl"], "./nopad.json"), errors.TokenizerSpecialTokenError)
    assert (err.token, err.path) == ("pad_id", "./nopad.json")
    assert err.looked_for == ["padding.pad_id", "token [PAD]", "token <pad>"]
    assert sections(err.message("vi"))["Đã tìm, theo thứ tự"] == [
        "- padding.pad_id",
        "- token [PAD]",
        "- token <pad>",
    ]
    assert path.is_file()


def test_hf_tokenizer_without_unk(cwd):
    _tiny_hf(cwd / "nounk.json", ["[PAD]"], None)
    err = fails(job(["./data/a.jsonl"], "./nounk.json"), errors.TokenizerSpecialTokenError)
    assert err.token == "unk_id"


# ---------------------------------------------------------------------------
# TokenizerLoadError
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("garbage.model", b"\x00\x01not a sentencepiece model\xff" * 10),
        ("empty.model", b""),
        ("truncated.model", "TRUNCATED_SP"),
        ("garbage.json", b"{not json"),
        ("empty.json", b"{}"),
        ("truncated.json", "TRUNCATED_HF"),
    ],
)
def test_corrupt_tokenizer_file(cwd, sp_model, hf_json, name, content):
    if content == "TRUNCATED_SP":
        content = sp_model.read_bytes()[:200]
    elif content == "TRUNCATED_HF":
        content = hf_json.read_bytes()[:300]
    Path(name).write_bytes(content)
    method = "sentencepiece" if name.endswith(".model") else "hf_json"
    err = fails(job(["./data/a.jsonl"], f"./{name}"), errors.TokenizerLoadError)
    assert (err.path, err.method) == (f"./{name}", method)
    assert err.detail
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["<sentence>"] == ["Tokenizer library could not load the tokenizer file."]
    assert vi["<sentence>"] == ["Thư viện tokenizer không đọc được file tokenizer."]
    assert en["Tokenizer"] == [f"./{name}"] == vi["Tokenizer"]
    assert en["Method"] == [f".tokenizer.{method}"] == vi["Phương thức"]
    assert Path(name).read_bytes() == content


# ---------------------------------------------------------------------------
# 17. TokenDTypeValidationError
# ---------------------------------------------------------------------------


DTYPE_EN = (
    "TokenDTypeValidationError:\nTokenizer vocabulary is too large for supported token dtypes.\n\n"
    "Supported dtypes:\n- uint16\n- uint32"
)
DTYPE_VI = (
    "TokenDTypeValidationError:\nVocab của tokenizer quá lớn so với dtype token được hỗ trợ.\n\n"
    "Các dtype hiện hỗ trợ:\n- uint16\n- uint32"
)


def test_vocabulary_beyond_uint32_from_a_real_tokenizer_file(cwd):
    """tokenizers ids are u32, so an id of 2**32 - 1 makes vocab_size 2**32: one too many."""
    write_word_level(cwd / "huge.json", {"[UNK]": 0, "[PAD]": 1, "the": 2, "far": 2**32 - 1})
    err = fails(job(["./data/a.jsonl"], "./huge.json"), errors.TokenDTypeValidationError)
    assert (err.vocab_size, err.path) == (2**32, "./huge.json")
    block(err, "en", DTYPE_EN)
    block(err, "vi", DTYPE_VI)
    assert sections(err.message("en"))["Vocabulary size"] == [str(2**32)]
    assert sections(err.message("vi"))["Kích thước vocab"] == [str(2**32)]


@pytest.mark.parametrize(
    ("vocab_size", "dtype"),
    [(1, "uint16"), (65535, "uint16"), (65536, "uint32"), (2**32 - 1, "uint32"), (2**32, None)],
)
def test_check_vocab_boundaries(vocab_size, dtype):
    encoder = SimpleNamespace(
        vocab_size=vocab_size,
        pad_id=0,
        unk_id=1,
        eos_id=None,
        spec=SimpleNamespace(path="./t.json"),
    )
    if dtype is None:
        with pytest.raises(errors.TokenDTypeValidationError) as info:
            check_vocab(encoder)
        assert (info.value.vocab_size, info.value.path) == (vocab_size, "./t.json")
        block(info.value, "en", DTYPE_EN)
    else:
        assert check_vocab(encoder) == dtype


# ---------------------------------------------------------------------------
# 16. OutputValidationError
# ---------------------------------------------------------------------------


def test_non_empty_output_directory_matches_the_catalogue(cwd, sp_model):
    target = Path("artifacts/token_shards")
    target.mkdir(parents=True)
    (target / "old.bin").write_bytes(b"keep me")
    with pytest.raises(errors.OutputValidationError) as info:
        job(["./data/a.jsonl"], sp_model, out="./artifacts/token_shards").run(workers=1)
    err = info.value
    assert (err.directory, err.problem) == ("./artifacts/token_shards", "not_empty")
    assert err.message("en") == (
        "OutputValidationError:\nOutput directory already exists and is not empty.\n\n"
        "Directory:\n./artifacts/token_shards\n\nUse a new output directory."
    )
    assert err.message("vi") == (
        "OutputValidationError:\nThư mục output đã tồn tại và không rỗng.\n\n"
        "Thư mục:\n./artifacts/token_shards\n\nHãy dùng thư mục output mới."
    )
    assert [p.name for p in target.iterdir()] == ["old.bin"]
    assert (target / "old.bin").read_bytes() == b"keep me"


@pytest.mark.parametrize("entry", [".hidden", "sub/"])
def test_any_entry_makes_the_output_directory_non_empty(cwd, sp_model, entry):
    target = Path("out")
    target.mkdir()
    if entry.endswith("/"):
        (target / entry).mkdir()
    else:
        (target / entry).write_text("")
    with pytest.raises(errors.OutputValidationError) as info:
        job(["./data/a.jsonl"], sp_model).run(workers=1)
    assert info.value.problem == "not_empty"
    assert len(list(target.iterdir())) == 1


def test_output_path_that_is_a_file(cwd, sp_model):
    Path("out").write_text("a file")
    with pytest.raises(errors.OutputValidationError) as info:
        job(["./data/a.jsonl"], sp_model, out="out").run(workers=1)
    err = info.value
    assert (err.directory, err.problem) == ("out", "not_a_directory")
    assert sections(err.message("en"))["<sentence>"] == [
        "Output path already exists and is not a directory."
    ]
    assert sections(err.message("vi"))["<sentence>"] == [
        "Đường dẫn output đã tồn tại và không phải thư mục."
    ]
    assert Path("out").read_text() == "a file"


def test_second_output_non_empty_leaves_the_first_unwritten(cwd, sp_model):
    Path("o2").mkdir()
    (Path("o2") / "x").write_text("")
    with pytest.raises(errors.OutputValidationError) as info:
        job(THREE[:2], sp_model, out=["./o1", "./o2"]).run(workers=1)
    assert info.value.directory == "./o2"
    assert_not_written("o1")


def test_cannot_create_second_output_leaves_the_first_unwritten(cwd, sp_model):
    Path("blocker").write_text("file")
    with pytest.raises(errors.OutputValidationError) as info:
        job(THREE[:2], sp_model, out=["./o1", "./blocker/o2"]).run(workers=1)
    assert info.value.problem == "cannot_create"
    assert_not_written("o1")


# ---------------------------------------------------------------------------
# OutputConflictError (files sharing one output directory)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "setting", "values"),
    [
        ({"sizes": [[8, 16], [8, 32]]}, "units.sizes", ["[8, 16]", "[8, 32]"]),
        ({"samples_per_shard": [2, 3]}, "output.samples_per_shard", ["2", "3"]),
    ],
)
def test_shared_output_with_different_settings(cwd, sp_model, kwargs, setting, values):
    err = fails(job(THREE[:2], sp_model, **kwargs), errors.OutputConflictError)
    assert (err.directory, err.setting, err.values) == ("./out", setting, values)
    assert err.files == THREE[:2]
    en, vi = sections(err.message("en")), sections(err.message("vi"))
    assert en["<sentence>"] == [
        "Files that write to one output directory declare different settings."
    ]
    assert vi["<sentence>"] == [
        "Các file ghi vào cùng một thư mục output nhưng khai báo cấu hình khác nhau."
    ]
    assert en["Directory"] == ["./out"] == vi["Thư mục"]
    assert en["Setting"] == [setting] == vi["Cấu hình"]
    assert en["Declarations"] == [f"{f} -> {v}" for f, v in zip(THREE[:2], values, strict=True)]
    assert vi["Khai báo"] == en["Declarations"]


def test_shared_output_with_different_tokenizer_files(cwd, sp_model):
    shutil.copyfile(sp_model, "copy.model")
    err = fails(job(THREE[:2], [str(sp_model), "./copy.model"]), errors.OutputConflictError)
    assert err.setting == "tokenizer"
    assert err.values == [
        f"sentencepiece: {os.path.realpath(sp_model)}",
        f"sentencepiece: {cwd / 'copy.model'}",
    ]


def test_third_file_conflicting_is_named(cwd, sp_model):
    err = fails(
        job(THREE, sp_model, samples_per_shard=[5, 5, 6]),
        errors.OutputConflictError,
    )
    assert err.values == ["5", "5", "6"]
    assert err.files == THREE


def test_two_spellings_of_one_directory_are_one_directory(cwd, sp_model):
    err = fails(
        job(THREE[:2], sp_model, out=["out", "./out/"], sizes=[[8], [16]]),
        errors.OutputConflictError,
    )
    assert err.directory == "out"
    # With equal settings, the two spellings build one directory with one id sequence.
    result = job(THREE[:2], sp_model, out=["out", "./out/"]).run(workers=1)
    assert [o.path for o in result.outputs] == ["out"]
    rows = [json.loads(line) for line in Path("out/sample_index.jsonl").read_text().splitlines()]
    assert [(r["sample_id"], r["source_file"]) for r in rows] == [(0, THREE[0]), (1, THREE[1])]


def test_two_spellings_of_one_tokenizer_file_do_not_conflict(cwd, sp_model):
    shutil.copyfile(sp_model, "tok.model")
    Path("sub").mkdir()
    result = job(THREE[:2], ["./tok.model", "sub/../tok.model"]).run(workers=1)
    assert result.outputs[0].stats["total_samples"] == 2


def test_build_batch_fields_and_templates_may_differ_in_one_directory(cwd, sp_model):
    write_jsonl("data/qa.jsonl", [{"q": "the", "a": "model"}])
    result = job(
        ["./data/a.jsonl", "./data/qa.jsonl"],
        sp_model,
        fields=[["text"], ["q", "a"]],
        templates=["{text}", "{q} {a}"],
        build_batch=[1, 7],
    ).run(workers=1)
    assert result.outputs[0].stats["total_samples"] == 2


# ---------------------------------------------------------------------------
# SourceValidationError (declaration shapes)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "key", "problem", "got"),
    [
        ({"files": "./data/a.jsonl"}, "source.files", "not_list", "str"),
        ({"files": []}, "source.files", "empty", None),
        ({"files": ["./data/a.jsonl", 3]}, "source.files[1]", "not_string", "int"),
        ({"fields": "text"}, "source.fields", "not_list", "str"),
        ({"fields": [[]]}, "source.fields[0]", "empty", None),
        ({"fields": [["text", "text"]]}, "source.fields[0]", "duplicate_field", "text"),
        ({"fields": [[1]]}, "source.fields[0][0]", "not_string", "int"),
        ({"templates": "{text}"}, "source.templates", "not_list", "str"),
        ({"templates": [None]}, "source.templates[0]", "not_string", "NoneType"),
    ],
)
def test_source_declaration_shapes(cwd, sp_model, kwargs, key, problem, got):
    files = kwargs.pop("files", ["./data/a.jsonl"])
    declared = (
        pipeline("unit-build")
        .source.jsonl(
            files=files,
            fields=kwargs.get("fields", [["text"]]),
            templates=kwargs.get("templates", ["{text}"]),
        )
        .tokenizer.sentencepiece({"path": str(sp_model)})
        .units(sizes=[[8]], build_batch=[2])
        .output.dir("./out", samples_per_shard=[2])
    )
    err = fails(declared, errors.SourceValidationError)
    assert (err.key, err.problem, err.got) == (key, problem, got)
    assert sections(err.message("en"))["Key"] == [key]
    assert sections(err.message("vi"))["Key"] == [key]
    assert "Rules" in sections(err.message("en"))
    assert "Quy tắc" in sections(err.message("vi"))


@pytest.mark.parametrize(
    ("out", "shown", "detail"),
    [
        (5, "5", "output.dir is int, not a path string"),
        ([3], "3", "output.dir[0] is int, not a path string"),
        (["./o", None], "None", "output.dir[1] is NoneType, not a path string"),
    ],
)
def test_output_dir_that_is_not_a_path(cwd, sp_model, out, shown, detail):
    files = THREE[: len(out)] if isinstance(out, list) else ["./data/a.jsonl"]
    err = fails(job(files, sp_model, out=out), errors.OutputValidationError)
    assert (err.problem, err.directory, err.cause) == ("not_a_path", shown, "not_a_path")
    assert sections(err.message("en"))["Reason"] == [detail]
    assert sections(err.message("en"))["<sentence>"] == ["Output directory must be a path string."]
    assert sections(err.message("vi"))["<sentence>"] == [
        "Thư mục output phải là đường dẫn dạng string."
    ]


def test_an_empty_output_dir_list_is_a_mapping_error(cwd, sp_model):
    """``output.dir([])`` breaks the one-or-N rule: zero directories for one file."""
    err = fails(job(["./data/a.jsonl"], sp_model, out=[]), errors.OutputMappingError)
    assert (err.file_count, err.got) == (1, 0)
    assert err.message("en").splitlines()[1] == "Received 1 input file but 0 output directories."


# The spec's rule for every per-file setting: a list with one entry (shared) or N (mapped).
# Only tokenizer (a dict) and output.dir (a path) also take a single bare value.
ONE_OR_N = [
    ("fields", lambda n: [["text"]] * n, errors.FieldMappingError),
    ("templates", lambda n: ["{text}"] * n, errors.TemplateMappingError),
    ("tokenizer", None, errors.TokenizerMappingError),
    ("sizes", lambda n: [[8, 16]] * n, errors.UnitMappingError),
    ("build_batch", lambda n: [2] * n, errors.UnitMappingError),
    ("out", lambda n: [f"./o{i}" for i in range(n)], errors.OutputMappingError),
    ("samples_per_shard", lambda n: [3] * n, errors.SamplesPerShardError),
]


@pytest.mark.parametrize(("key", "entries", "error"), ONE_OR_N, ids=[k for k, *_ in ONE_OR_N])
def test_every_per_file_setting_takes_one_or_n_entries(cwd, sp_model, key, entries, error):
    for name in THREE:
        write_jsonl(name, [{"text": "the model"}])

    def declared(count: int):
        if key == "tokenizer":
            return job(THREE, [sp_model] * count, kind="sentencepiece")
        return job(THREE, sp_model, **{key: entries(count)})

    for count in (0, 2, 4):
        err = fails(declared(count), error, "out", "o0")
        assert (err.file_count, err.got) == (3, count)
    for count in (1, 3):
        result = declared(count).run(workers=1)
        assert sum(out.stats["total_samples"] for out in result.outputs) == 3
        assert len(result.outputs) == (count if key == "out" else 1)
        for out in result.outputs:
            shutil.rmtree(out.path)


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("build_batch", 4, errors.UnitValidationError),
        ("samples_per_shard", 10, errors.SamplesPerShardError),
        ("sizes", 8, errors.UnitValidationError),
        ("fields", "text", errors.SourceValidationError),
        ("templates", "{text}", errors.SourceValidationError),
    ],
)
def test_a_bare_value_where_the_spec_asks_for_a_list_is_refused(cwd, sp_model, key, value, error):
    err = fails(job(["./data/a.jsonl"], sp_model, **{key: value}), error)
    assert "list" in sections(err.message("en"))["Problem"][0]
    assert "list" in sections(err.message("vi"))["Vấn đề"][0]


def test_bare_samples_per_shard_names_the_rule(cwd, sp_model):
    err = fails(
        job(["./data/a.jsonl"], sp_model, samples_per_shard=10), errors.SamplesPerShardError
    )
    assert (err.problem, err.value) == ("not_list", 10)
    assert sections(err.message("en"))["Problem"] == [
        "samples_per_shard must be a list of positive ints (one shared, or one per file), got 10"
    ]


@pytest.mark.parametrize("value", [0, -1, True, 2.0, "3", None])
def test_one_positive_integer_rule_for_every_count(cwd, sp_model, value):
    """sizes, build_batch, samples_per_shard and workers refuse the same values."""
    shown = errors.UnitValidationError(key="k", value=value, rule="positive_int").message("en")
    fails(job(["./data/a.jsonl"], sp_model, sizes=[[value]]), errors.UnitValidationError)
    fails(job(["./data/a.jsonl"], sp_model, build_batch=[value]), errors.UnitValidationError)
    fails(job(["./data/a.jsonl"], sp_model, samples_per_shard=[value]), errors.SamplesPerShardError)
    if value is not None:  # workers=None means every core
        with pytest.raises(errors.RunOptionError):
            job(["./data/a.jsonl"], sp_model).run(workers=value)
    assert "must be a positive integer" in shown


# ---------------------------------------------------------------------------
# Catalogue data errors (3, 4, 15) at the catalogue's own line number
# ---------------------------------------------------------------------------

CATALOGUE_LINE = 18291


def _at_catalogue_line(path: str, row: object) -> None:
    """``row`` on physical line 18291, after 18290 blank lines (which are skipped)."""
    write_jsonl(path, [""] * (CATALOGUE_LINE - 1) + [row])


def test_source_parse_error_matches_the_catalogue(cwd, sp_model):
    _at_catalogue_line("data/alpaca.jsonl", '{"text": "the model",}')
    with pytest.raises(errors.SourceParseError) as info:
        job(["./data/alpaca.jsonl"], sp_model, build_batch=[4096]).run(workers=1)
    err = info.value
    assert (err.file, err.line, err.reason) == (
        "./data/alpaca.jsonl",
        CATALOGUE_LINE,
        "invalid_json",
    )
    block(
        err,
        "en",
        "SourceParseError:\nJSONL line could not be parsed.\n\nFile:\n./data/alpaca.jsonl\n\n"
        "Line:\n18291",
    )
    block(
        err,
        "vi",
        "SourceParseError:\nKhông đọc được dòng JSONL.\n\nFile:\n./data/alpaca.jsonl\n\n"
        "Dòng:\n18291",
    )
    assert sections(err.message("en"))["Reason"][0] == "invalid JSON syntax"
    assert sections(err.message("vi"))["Lý do"][0] == "JSON không hợp lệ"


def test_sample_schema_error_matches_the_catalogue(cwd, sp_model):
    _at_catalogue_line(
        "data/alpaca.jsonl", {"instruction": "the", "output": "model", "metadata": "x"}
    )
    with pytest.raises(errors.SampleSchemaError) as info:
        job(
            ["./data/alpaca.jsonl"],
            sp_model,
            fields=[["instruction", "input", "output"]],
            templates=["{instruction}\n\n{input}\n\n{output}"],
            build_batch=[4096],
        ).run(workers=1)
    err = info.value
    assert (err.file, err.line) == ("./data/alpaca.jsonl", CATALOGUE_LINE)
    assert err.declared_fields == ["instruction", "input", "output"]
    assert err.missing_fields == ["input"]
    assert err.available_keys == ["instruction", "output", "metadata"]
    assert err.message("en") == (
        "SampleSchemaError:\nJSONL sample is missing declared fields.\n\n"
        "File:\n./data/alpaca.jsonl\n\nLine:\n18291\n\n"
        "Declared fields:\ninstruction\ninput\noutput\n\nMissing fields:\ninput\n\n"
        "Available keys:\ninstruction\noutput\nmetadata"
    )
    assert err.message("vi") == (
        "SampleSchemaError:\nSample JSONL thiếu fields đã khai báo.\n\n"
        "File:\n./data/alpaca.jsonl\n\nDòng:\n18291\n\n"
        "Fields đã khai báo:\ninstruction\ninput\noutput\n\nFields bị thiếu:\ninput\n\n"
        "Keys hiện có:\ninstruction\noutput\nmetadata"
    )


def test_unit_overflow_error_matches_the_catalogue(cwd, hf_json):
    # The HF fixture encodes "the" as one token and splits on whitespace: 417 tokens exactly.
    text = " ".join(["the"] * 417)
    assert len(reference_encoder(str(hf_json))(text)) == 417
    _at_catalogue_line("data/alpaca.jsonl", {"text": text})
    with pytest.raises(errors.UnitOverflowError) as info:
        job(["./data/alpaca.jsonl"], hf_json, sizes=[[128, 192, 256, 320]], build_batch=[4096]).run(
            workers=1
        )
    err = info.value
    assert (err.file, err.line, err.token_count, err.max_unit_size) == (
        "./data/alpaca.jsonl",
        CATALOGUE_LINE,
        417,
        320,
    )
    # The spec's own example: its text is pinned in test_errors.py.
    assert err.facts() == errors.UnitOverflowError(**errors.UnitOverflowError.examples[0]).facts()


# ---------------------------------------------------------------------------
# Language of str(err)
# ---------------------------------------------------------------------------


def _real_error() -> errors.MintDimError:
    with pytest.raises(errors.PipelineValidationError) as info:
        pipeline("unit-build").run(workers=1)
    return info.value


def test_str_follows_set_language(cwd):
    err = _real_error()
    assert str(err) == err.message("en")
    mintdim.set_language("vi")
    assert get_language() == "vi"
    assert str(err) == err.message("vi")
    assert str(_real_error()).startswith("PipelineValidationError:\nPipeline chưa được")
    mintdim.set_language("en")
    assert str(err) == err.message("en")
    mintdim.set_language(None)
    assert str(err) == err.message("en")


def test_str_follows_mintdim_lang_and_set_language_wins(cwd, monkeypatch):
    err = _real_error()
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    assert str(err) == err.message("vi")
    monkeypatch.setenv("MINTDIM_LANG", "vi_VN.UTF-8")
    assert str(err) == err.message("vi")
    mintdim.set_language("en")
    assert str(err) == err.message("en")
    mintdim.set_language(None)
    assert str(err) == err.message("vi")
    monkeypatch.setenv("MINTDIM_LANG", "fr")
    assert str(err) == err.message("en")
    monkeypatch.setenv("MINTDIM_LANG", "en")
    assert str(err) == err.message("en")


def test_unknown_language_is_refused(cwd):
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        mintdim.set_language("fr")
    with pytest.raises(ValueError, match="unknown language"):
        _real_error().message("de")

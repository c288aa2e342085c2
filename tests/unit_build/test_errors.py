"""Tests for mintdim.errors: the declaration mechanism, the facts, the logic of which
section appears when, pickling and languages for every class, and the spec's catalogue form.

The full texts are rendered in docs/error-catalogue.md (checked by test_error_catalogue.py);
here only the spec fixes text verbatim: its sentences and headers, and a few whole messages.
"""

from __future__ import annotations

import concurrent.futures
import errno
import inspect
import os
import pickle
import re

import pytest

import mintdim
from mintdim import errors
from mintdim.errors import (
    BuildInterruptedError,
    ConfigValueError,
    DemoFileError,
    FieldMappingError,
    MappingError,
    MintDimError,
    MintDimFileNotFoundError,
    OutputConflictError,
    OutputMappingError,
    OutputValidationError,
    PipelineValidationError,
    SampleSchemaError,
    SamplesPerShardError,
    SourceParseError,
    SourceValidationError,
    TemplateFieldMismatchError,
    TemplateMappingError,
    TemplateSyntaxError,
    TemplateTokenizerError,
    TokenDTypeValidationError,
    TokenizerMappingError,
    TokenizerSpecialTokenError,
    TokenizerValidationError,
    UnitMappingError,
    UnitOverflowError,
    UnitValidationError,
    UnknownConfigKeyError,
    UnknownPipelineError,
    WorkerError,
    error_classes,
)
from mintdim.shared.lang import Bilingual, get_language, set_language


@pytest.fixture(autouse=True)
def _default_language(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MINTDIM_LANG", raising=False)
    set_language(None)
    yield
    set_language(None)


def blocks(text: str) -> dict[str | None, list[str]]:
    """The sections after the name and sentence: header -> body lines (None: closing sentence)."""
    result: dict[str | None, list[str]] = {}
    for block in text.split("\n\n")[1:]:
        first, *rest = block.split("\n")
        if first.endswith(":"):
            result[first[:-1]] = rest
        else:
            result[None] = [first, *rest]
    return result


def every_example() -> list[MintDimError]:
    return [cls(**facts) for cls in error_classes() for facts in cls.examples]


def _id(err: MintDimError) -> str:
    return type(err).__name__


# ---------------------------------------------------------------------------
# The mechanism: registry, __all__, generated constructors
# ---------------------------------------------------------------------------


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_registry_is_every_concrete_error_in_definition_order():
    defined = {
        cls for cls in _subclasses(MintDimError) if cls.__module__.startswith(f"{errors.__name__}.")
    }
    assert set(error_classes()) == defined - {MappingError}
    names = [cls.__name__ for cls in error_classes()]
    assert len(names) == len(set(names))
    # Catalogue order is stage order (the flow of a build, then reading, then the command line),
    # and definition order within a stage.
    stages = [
        "config",
        "source",
        "tokenizer",
        "units",
        "output",
        "execution",
        "reader",
        "split",
        "decontaminate",
        "cli",
    ]
    assert list(errors.base.STAGES) == stages
    ranks = [stages.index(cls.__module__.rsplit(".", 1)[1]) for cls in error_classes()]
    assert ranks == sorted(ranks)
    assert set(ranks) == set(range(len(stages)))


def test_all_is_derived_and_every_name_imports():
    for cls in error_classes():
        assert cls.__name__ in errors.__all__
        assert getattr(mintdim, cls.__name__) is cls
    for name in errors.__all__:
        assert hasattr(errors, name)
    # The error classes alone: the package's __all__ star-imports this list.
    names = {"MintDimError", "MappingError", *(cls.__name__ for cls in error_classes())}
    assert set(errors.__all__) == names


def test_a_new_subclass_registers_itself_with_a_generated_constructor():
    class ProbeError(MintDimError, ValueError):
        """A test error."""

        path: str
        tags: list[str]
        count: int = 1

        summary = Bilingual("Probe {path} failed.", "Probe {path} lỗi.")
        examples = ({"path": "p", "tags": ["a"]},)

        def _sections(self):
            yield Bilingual("Count", "Số lượng"), self.count

    try:
        assert error_classes()[-1] is ProbeError
        signature = inspect.signature(ProbeError)
        assert list(signature.parameters) == ["path", "tags", "count"]
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())
        assert signature.parameters["count"].default == 1
        tags = ("x", "y")
        err = ProbeError(path="./a", tags=tags)
        assert (err.path, err.tags, err.count) == ("./a", ["x", "y"], 1)
        assert err.message("vi") == "ProbeError:\nProbe ./a lỗi.\n\nSố lượng:\n1"
        assert repr(err) == "ProbeError(path='./a', tags=['x', 'y'], count=1)"
        with pytest.raises(TypeError, match="missing keyword arguments: tags"):
            ProbeError(path="./a")
        with pytest.raises(TypeError, match="unexpected keyword arguments: colour"):
            ProbeError(path="./a", tags=[], colour="red")
        with pytest.raises(TypeError):
            ProbeError("./a", [])
    finally:
        errors.base._REGISTRY.remove(ProbeError)


def test_a_class_without_examples_is_refused_at_definition():
    with pytest.raises(TypeError, match="NoExampleError declares no examples"):

        class NoExampleError(MintDimError):
            path: str


def test_list_facts_are_the_errors_own_copy():
    missing = ["tokenizer"]
    err = PipelineValidationError(missing=missing)
    missing.append("output.dir")
    assert err.missing == ["tokenizer"]
    assert err.message("en").endswith("Missing:\n- tokenizer")


def _coded_facts() -> list[tuple[type[MintDimError], dict, str]]:
    cases = []
    for cls in error_classes():
        for name, fact in cls._facts.items():
            if fact.codes is not None and name in cls.examples[0]:
                cases.append((cls, cls.examples[0], name))
    return cases


@pytest.mark.parametrize(
    ("cls", "example", "fact"), _coded_facts(), ids=lambda v: getattr(v, "__name__", str(v))
)
def test_an_unknown_code_is_refused_naming_the_valid_ones(cls, example, fact):
    with pytest.raises(ValueError, match=rf"unknown {cls.__name__}\.{fact} 'bogus'; valid: '"):
        cls(**{**example, fact: "bogus"})


def test_coded_facts_cover_every_table_driven_error():
    covered = {cls for cls, _, _ in _coded_facts()}
    assert {
        SourceParseError,
        TokenizerValidationError,
        UnitValidationError,
        UnitMappingError,
    } <= covered
    assert len(covered) >= 11


# ---------------------------------------------------------------------------
# Every example of every class: both languages, pickling, builtins
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("err", every_example(), ids=_id)
def test_both_languages_render_in_the_catalogue_form(err):
    name = type(err).__name__
    en, vi = err.message("en"), err.message("vi")
    assert en != vi
    unfilled = r"\{(?:" + "|".join(err.facts()) + r")(?:![rs])?\}"
    for text in (en, vi):
        assert text.splitlines()[0] == f"{name}:"
        assert text == text.strip() and "\n\n\n" not in text
        assert "\\u" not in text  # Vietnamese is shown as itself, never as escapes
        assert not re.search(unfilled, text), "a text field was left unfilled"
    # One structure, two languages: the same number of blocks, the same lines per block.
    assert [len(b.splitlines()) for b in en.split("\n\n")] == [
        len(b.splitlines()) for b in vi.split("\n\n")
    ]


@pytest.mark.parametrize("err", every_example(), ids=_id)
def test_pickle_round_trip_keeps_type_facts_and_texts(err):
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is type(err)
    assert copy.facts() == err.facts()
    assert copy.args == err.args
    assert copy.message("en") == err.message("en")
    assert copy.message("vi") == err.message("vi")


@pytest.mark.parametrize("err", every_example(), ids=_id)
def test_str_follows_the_language_and_args_hold_english(err, monkeypatch):
    assert str(err) == err.message("en")
    monkeypatch.setenv("MINTDIM_LANG", "vi_VN.UTF-8")
    assert str(err) == err.message("vi")
    set_language("en")
    assert str(err) == err.message("en")
    if not isinstance(err, OSError):
        assert err.args == (err.message("en"),)


def test_error_raised_in_a_worker_process_arrives_intact():
    with (
        concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool,
        pytest.raises(UnitOverflowError) as info,
    ):
        pool.submit(_raise_overflow).result()
    assert info.value.facts() == UnitOverflowError(**UnitOverflowError.examples[0]).facts()


def _raise_overflow() -> None:
    raise UnitOverflowError(**UnitOverflowError.examples[0])


def test_build_interrupted_is_caught_as_keyboard_interrupt():
    with pytest.raises(KeyboardInterrupt):
        raise BuildInterruptedError(signal_name="SIGTERM")
    assert isinstance(BuildInterruptedError(), MintDimError)
    assert BuildInterruptedError().signal_name == "SIGINT"


def test_file_not_found_is_an_os_error_with_errno_and_filename():
    err = MintDimFileNotFoundError(context="source", path="./data/train.jsonl")
    assert isinstance(err, FileNotFoundError)
    assert (err.errno, err.filename) == (errno.ENOENT, "./data/train.jsonl")


def test_invalid_language_codes_raise():
    err = UnitOverflowError(**UnitOverflowError.examples[0])
    with pytest.raises(ValueError, match="valid languages: 'en', 'vi'"):
        set_language("fr")
    with pytest.raises(ValueError, match="valid languages: 'en', 'vi'"):
        err.message("de")
    assert get_language() == "en"


# ---------------------------------------------------------------------------
# The spec's catalogue: sentences and headers of every entry, a few whole messages
# ---------------------------------------------------------------------------

_UNIT_SUPPORTS = ("MintDim supports",), ("MintDim hỗ trợ",)

# (error, spec sentence en, vi, spec headers en, vi): the catalogue's own sections come first.
SPEC = [
    (
        PipelineValidationError(missing=["source.files"]),
        "Pipeline configuration is incomplete.",
        "Pipeline chưa được cấu hình đầy đủ.",
        ("Missing",),
        ("Thiếu",),
    ),
    (
        MintDimFileNotFoundError(context="source", path="./data/train.jsonl"),
        "Required file was not found.",
        "Không tìm thấy file cần dùng.",
        ("Context", "Missing file"),
        ("Context", "File thiếu"),
    ),
    (
        SourceParseError(file="./data/alpaca.jsonl", line=18291, reason="invalid_json"),
        "JSONL line could not be parsed.",
        "Không đọc được dòng JSONL.",
        ("File", "Line", "Reason"),
        ("File", "Dòng", "Lý do"),
    ),
    (
        SampleSchemaError(**SampleSchemaError.examples[0]),
        "JSONL sample is missing declared fields.",
        "Sample JSONL thiếu fields đã khai báo.",
        ("File", "Line", "Declared fields", "Missing fields", "Available keys"),
        ("File", "Dòng", "Fields đã khai báo", "Fields bị thiếu", "Keys hiện có"),
    ),
    (
        TokenizerValidationError.config(index=0, problem="unknown_keys", got=["pad_id"]),
        "Invalid tokenizer config.",
        "Cấu hình tokenizer không hợp lệ.",
        ("Component", "Problem", "Rules"),
        ("Thành phần", "Vấn đề", "Quy tắc"),
    ),
    (
        TokenizerSpecialTokenError(**TokenizerSpecialTokenError.examples[0]),
        "Tokenizer library did not expose a required special token.",
        "Thư viện tokenizer không cung cấp special token bắt buộc.",
        ("Special token",),
        ("Special token",),
    ),
    (
        TokenizerValidationError.unsupported_format(index=0, path="t.bin", method="hf_json"),
        "Unsupported tokenizer format.",
        "Định dạng tokenizer chưa được hỗ trợ.",
        ("Supported formats",),
        ("Các định dạng hiện hỗ trợ",),
    ),
    (
        TokenizerMappingError(file_count=3, got=2),
        "Received 3 input files but 2 tokenizers.",
        "Nhận 3 file đầu vào nhưng chỉ có 2 tokenizer.",
        *_UNIT_SUPPORTS,
    ),
    (
        FieldMappingError(file_count=3, got=2),
        "Received 3 input files but 2 field configs.",
        "Nhận 3 file đầu vào nhưng chỉ có 2 cấu hình fields.",
        *_UNIT_SUPPORTS,
    ),
    (
        TemplateMappingError(file_count=3, got=2),
        "Received 3 input files but 2 templates.",
        "Nhận 3 file đầu vào nhưng chỉ có 2 template.",
        *_UNIT_SUPPORTS,
    ),
    (
        TemplateTokenizerError(file_index=0, template="{a}\n\n{b}", segment="\n\n", unk_count=1),
        "Template static parts produce UNK when encoded by the tokenizer.",
        "Phần literal của template tạo UNK khi tokenize.",
        ("File index", "Template", "Problem", "Fix"),
        ("Vị trí file", "Template", "Vấn đề", "Cách sửa"),
    ),
    (
        UnitMappingError(file_count=3, got=2, key="units.sizes"),
        "Received 3 input files but 2 unit configs.",
        "Nhận 3 file đầu vào nhưng chỉ có 2 unit config.",
        *_UNIT_SUPPORTS,
    ),
    (
        OutputMappingError(file_count=3, got=2),
        "Received 3 input files but 2 output directories.",
        "Nhận 3 file đầu vào nhưng chỉ có 2 thư mục output.",
        *_UNIT_SUPPORTS,
    ),
    (
        UnitValidationError(key="units.sizes[0][1]", value=128, rule="ascending"),
        "Invalid unit config.",
        "Unit config không hợp lệ.",
        ("Rules",),
        ("Quy tắc",),
    ),
    (
        OutputValidationError(directory="./artifacts/token_shards"),
        "Output directory already exists and is not empty.",
        "Thư mục output đã tồn tại và không rỗng.",
        ("Directory",),
        ("Thư mục",),
    ),
    (
        TokenDTypeValidationError(vocab_size=2**33, path="t.json"),
        "Tokenizer vocabulary is too large for supported token dtypes.",
        "Vocab của tokenizer quá lớn so với dtype token được hỗ trợ.",
        ("Supported dtypes",),
        ("Các dtype hiện hỗ trợ",),
    ),
]


@pytest.mark.parametrize(
    ("err", "en", "vi", "headers_en", "headers_vi"),
    SPEC,
    ids=lambda v: _id(v) if isinstance(v, MintDimError) else "",
)
def test_spec_sentence_and_headers_come_first(err, en, vi, headers_en, headers_vi):
    for lang, sentence, headers in (("en", en, headers_en), ("vi", vi, headers_vi)):
        text = err.message(lang)
        assert text.split("\n\n")[0] == f"{type(err).__name__}:\n{sentence}"
        assert tuple(blocks(text))[: len(headers)] == headers


def test_spec_covers_every_catalogue_entry_but_the_whole_pins_below():
    spec_named = {type(row[0]) for row in SPEC}
    pinned = {UnitOverflowError, SamplesPerShardError, TemplateFieldMismatchError}
    # 18 entries, 18 classes: entry 5 shows two (TokenizerValidationError and
    # TokenizerSpecialTokenError) and entry 6 shows TokenizerValidationError again.
    assert len(spec_named | pinned) == 18


def test_unit_overflow_is_the_spec_text_verbatim():
    err = UnitOverflowError(**UnitOverflowError.examples[0])
    assert err.message("en") == (
        "UnitOverflowError:\nSample token length exceeds max unit size.\n\n"
        "Sample:\n./data/alpaca.jsonl:18291\n\ntoken_count:\n417\n\nmax_unit_size:\n320\n\n"
        "Increase unit sizes and run again."
    )
    assert err.message("vi") == (
        "UnitOverflowError:\nĐộ dài token của mẫu vượt quá unit lớn nhất.\n\n"
        "Mẫu:\n./data/alpaca.jsonl:18291\n\ntoken_count:\n417\n\nmax_unit_size:\n320\n\n"
        "Hãy tăng unit sizes rồi chạy lại."
    )


def test_samples_per_shard_both_spec_examples_verbatim():
    rules_en = (
        "Rules:\n- each samples_per_shard[i] is a positive int\n"
        "- len(samples_per_shard) == 1 or len(samples_per_shard) == file_count"
    )
    rules_vi = (
        "Quy tắc:\n- mỗi samples_per_shard[i] phải là số nguyên dương\n"
        "- len(samples_per_shard) == 1 hoặc len(samples_per_shard) == số file"
    )
    value = SamplesPerShardError.not_positive(index=0, value=0)
    arity = SamplesPerShardError.arity(file_count=3, got=2)
    assert value.message("en") == (
        "SamplesPerShardError:\nInvalid samples_per_shard.\n\nProblem:\n"
        f"samples_per_shard[0] must be a positive int, got 0\n\n{rules_en}"
    )
    assert value.message("vi") == (
        "SamplesPerShardError:\nsamples_per_shard không hợp lệ.\n\nVấn đề:\n"
        f"samples_per_shard[0] phải là số nguyên dương, hiện tại là 0\n\n{rules_vi}"
    )
    assert arity.message("en") == (
        "SamplesPerShardError:\nInvalid samples_per_shard.\n\nProblem:\n"
        f"Received 3 input files but 2 samples_per_shard entries\n\n{rules_en}"
    )
    assert arity.message("vi") == (
        "SamplesPerShardError:\nsamples_per_shard không hợp lệ.\n\nVấn đề:\n"
        f"Nhận 3 file đầu vào nhưng chỉ có 2 samples_per_shard\n\n{rules_vi}"
    )


def test_field_mapping_is_the_spec_text_then_the_key_verbatim():
    err = FieldMappingError(file_count=3, got=2)
    assert err.message("en") == (
        "FieldMappingError:\nReceived 3 input files but 2 field configs.\n\n"
        "MintDim supports:\n- 1 field config shared across all files\n"
        "- N field configs for N files\n\nKey:\nsource.fields"
    )
    assert err.message("vi") == (
        "FieldMappingError:\nNhận 3 file đầu vào nhưng chỉ có 2 cấu hình fields.\n\n"
        "MintDim hỗ trợ:\n- 1 fields dùng chung cho tất cả file\n- N fields cho N file\n\n"
        "Key:\nsource.fields"
    )


def test_template_field_mismatch_starts_with_the_spec_text_verbatim():
    err = TemplateFieldMismatchError(**TemplateFieldMismatchError.examples[0])
    declaration = (
        "fields = ['instruction', 'input', 'output']\n"
        'template = "{instruction}\\n\\n{prompt}\\n\\n{output}"'
    )
    assert err.message("en").startswith(
        "TemplateFieldMismatchError:\nSource file:\n./data/train.jsonl\n\n"
        f"API declaration for this file:\n{declaration}\n\n"
        "Field causing template mismatch:\nprompt\nReason:\n"
        "template uses {prompt}, but fields does not declare it\n\n"
    )
    assert err.message("vi").startswith(
        "TemplateFieldMismatchError:\nFile nguồn:\n./data/train.jsonl\n\n"
        f"Khai báo API cho file này:\n{declaration}\n\n"
        "Field gây lệch template:\nprompt\nLý do:\n"
        "template dùng {prompt}, nhưng fields không khai báo field này\n\n"
    )


# ---------------------------------------------------------------------------
# Logic hooks: which section or line appears when
# ---------------------------------------------------------------------------


def test_file_not_found_explains_relative_paths_from_the_cwd_at_construction(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = MintDimFileNotFoundError(context="source", path="./data/train.jsonl")
    monkeypatch.chdir(tmp_path.parent)  # later changes of directory do not matter
    fix = blocks(pickle.loads(pickle.dumps(err)).message("en"))["Fix"]
    assert err.cwd == str(tmp_path)
    assert f"looked for: {tmp_path / 'data' / 'train.jsonl'}" in fix
    assert str(tmp_path) in fix[0]


def test_file_not_found_absolute_path_shows_where_only_when_expanded():
    plain = blocks(MintDimFileNotFoundError(context="t", path="/m/t.model").message("en"))["Fix"]
    assert plain == ["check that the file exists at this absolute path"]
    home = blocks(MintDimFileNotFoundError(context="t", path="~/t.model").message("en"))["Fix"]
    assert home[0] == f"looked for: {os.path.expanduser('~/t.model')}"


def test_source_parse_detail_goes_under_reason():
    err = SourceParseError(file="a", line=3, reason="invalid_utf8", detail="invalid start byte")
    assert blocks(err.message("en"))["Reason"] == [
        "bytes are not valid UTF-8",
        "invalid start byte",
    ]
    err = SourceParseError(file="a", line=3, reason="not_object", detail="array")
    assert blocks(err.message("vi"))["Lý do"] == [
        "giá trị JSON không phải object",
        "tìm thấy: array",
    ]
    assert "Reason" in blocks(
        SourceParseError(file="a", line=3, reason="invalid_json").message("en")
    )
    assert "fix or remove line 3" in blocks(err.message("en"))["Fix"][0]


@pytest.mark.parametrize(
    ("got", "tail"),
    [
        (["pad_id"], "unk_id and pad_id are loaded from the tokenizer library."),
        (
            ["vocab"],
            "The allowed keys are path, engine, encode, append_eos, pad_fallback, unk_fallback "
            "and parity.",
        ),
    ],
)
def test_tokenizer_unknown_keys_explain_special_tokens_only_when_declared(got, tail):
    err = TokenizerValidationError.config(index=1, problem="unknown_keys", got=got)
    problem = blocks(err.message("en"))["Problem"]
    assert problem == [f"tokenizer config has unknown keys: {got!r}. {tail}"]
    assert blocks(err.message("en"))["Tokenizer index"] == ["1"]


@pytest.mark.parametrize(
    ("key", "got"),
    [("encode", "tokens"), ("append_eos", "yes"), ("pad_fallback", ""), ("pad_fallback", "none")],
)
def test_bad_tokenizer_options_are_refused_before_any_work(tmp_path, key, got):
    from tests.unit_build.helpers import job, write_jsonl

    write_jsonl(tmp_path / "a.jsonl", [{"text": "x"}])
    model = tmp_path / "t.model"
    model.write_bytes(b"")  # never loaded: the option is checked first
    with pytest.raises(TokenizerValidationError) as info:
        declared = job(
            [str(tmp_path / "a.jsonl")], {"path": str(model), key: got}, out=str(tmp_path / "o")
        )
        declared.run(workers=1)
    assert (info.value.problem, info.value.option, info.value.got) == ("bad_option", key, got)
    assert key in info.value.message("vi")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("path", "method", "lines"),
    [
        (
            "t.json",
            "sentencepiece",
            [
                ".tokenizer.sentencepiece expects a .model file",
                "for a .json file use .tokenizer.hf_json",
            ],
        ),
        (
            "T.MODEL",
            "hf_json",
            [
                ".tokenizer.hf_json expects a .json file",
                "for a .model file use .tokenizer.sentencepiece",
            ],
        ),
        ("vocab.txt", "hf_json", [".tokenizer.hf_json expects a .json file"]),
    ],
)
def test_unsupported_format_suggests_the_other_method_for_its_extension(path, method, lines):
    err = TokenizerValidationError.unsupported_format(index=0, path=path, method=method)
    assert blocks(err.message("en"))["Method"] == lines


def test_tokenizer_validation_problem_must_belong_to_its_component():
    with pytest.raises(ValueError, match="does not belong to component 'format'"):
        TokenizerValidationError(component="format", problem="not_dict", index=0, method="hf_json")
    with pytest.raises(ValueError, match="unknown tokenizer method 'tiktoken'"):
        TokenizerValidationError.unsupported_format(index=0, path="t.bin", method="tiktoken")


@pytest.mark.parametrize(
    ("key", "cls"),
    [
        ("tokenizer", TokenizerMappingError),
        ("source.fields", FieldMappingError),
        ("source.templates", TemplateMappingError),
        ("units.sizes", UnitMappingError),
        ("units.build_batch", UnitMappingError),
        ("output.dir", OutputMappingError),
    ],
)
def test_one_mapping_rule_names_its_key_and_keeps_the_catalogue_name(key, cls):
    err = MappingError(key=key, file_count=3, got=2)
    assert type(err) is cls
    assert isinstance(err, MappingError) and isinstance(err, ValueError)
    assert err.message("en").startswith(f"{cls.__name__}:\n")
    assert blocks(err.message("vi"))["Key"] == [key]
    with pytest.raises(cls):
        raise pickle.loads(pickle.dumps(err))


def test_mapping_error_refuses_a_key_of_another_list():
    with pytest.raises(
        ValueError, match="TokenizerMappingError is not the error for key 'output.dir'"
    ):
        TokenizerMappingError(file_count=3, got=2, key="output.dir")
    with pytest.raises(ValueError, match=r"unknown MappingError\.key 'source.files'"):
        MappingError(key="source.files", file_count=3, got=2)


def test_mapping_sentence_counts_and_too_many_entries():
    err = TokenizerMappingError(file_count=1, got=3)
    assert err.message("en").splitlines()[1] == "Received 1 input file but 3 tokenizers."
    # "chỉ có" (only has) is said only when there are too few entries.
    assert err.message("vi").splitlines()[1] == "Nhận 1 file đầu vào nhưng có 3 tokenizer."
    assert FieldMappingError(file_count=3, got=1).message("en").splitlines()[1] == (
        "Received 3 input files but 1 field config."
    )


def test_template_field_mismatch_not_used_says_so():
    err = TemplateFieldMismatchError(
        file="a", fields=["a", "b"], template="{a}", field="b", problem="not_used"
    )
    assert blocks(err.message("en"))["Field causing template mismatch"] == [
        "b",
        "Reason:",
        "fields declares it, but the template does not use {b}",
    ]
    assert blocks(err.message("en"))["Fix"] == [
        "remove 'b' from fields, or use {b} in the template"
    ]


def test_template_tokenizer_error_shows_escapes_only_for_invisible_characters():
    visible = TemplateTokenizerError(file_index=0, template="{a}~{b}", segment="~", unk_count=1)
    assert blocks(visible.message("en"))["Literal segment"] == ['"~"', "UNK tokens: 1"]
    invisible = TemplateTokenizerError(
        file_index=0, template="{a}\u200b{b}", segment="\u200b", unk_count=1
    )
    lines = blocks(invisible.message("vi"))["Đoạn literal"]
    assert lines[1] == 'dạng escape: "\\u200b"' and lines[2] == "Số token UNK: 1"


def test_template_syntax_caret_points_at_the_offending_character():
    err = TemplateSyntaxError(
        file_index=0, template='say "{a}\n{b', position=9, problem="unmatched_open"
    )
    quoted, caret = blocks(err.message("en"))["Position"][1:]
    assert quoted[caret.index("^")] == "{"
    assert quoted[: caret.index("^")] == '"say \\"{a}\\n'


@pytest.mark.parametrize("problem", ["not_empty", "not_a_directory", "cannot_create", "nested"])
def test_output_validation_reason_only_with_detail(problem):
    bare = OutputValidationError(directory="./o", problem=problem)
    detailed = OutputValidationError(directory="./o", problem=problem, detail="read-only")
    assert "Reason" not in blocks(bare.message("en"))
    assert blocks(detailed.message("en"))["Reason"] == ["read-only"]
    assert blocks(detailed.message("vi"))["Lý do"] == ["read-only"]
    assert list(blocks(detailed.message("en")))[-1] is None  # a closing sentence ends it


def test_output_validation_sentences_differ_by_problem():
    sentences = {
        OutputValidationError(directory="o", problem=p).message("en").splitlines()[1]
        for p in ("not_empty", "not_a_directory", "cannot_create", "nested")
    }
    assert len(sentences) == 4


def test_source_validation_rules_only_for_source_keys():
    source = SourceValidationError(key="source.files", problem="not_list", got="str")
    other = SourceValidationError(key="output.dir", problem="not_list", got="str")
    assert source.message("en").splitlines()[1] == "Invalid source declaration."
    assert other.message("en").splitlines()[1] == "Invalid declaration."
    assert "Rules" in blocks(source.message("en")) and "Rules" not in blocks(other.message("en"))
    assert blocks(other.message("en"))["Problem"] == ["output.dir must be a list, got str"]


def test_unit_validation_problem_shows_the_value_and_its_type_when_not_obvious():
    err = UnitValidationError(key="units.sizes[0][0]", value="128", rule="positive_int")
    assert blocks(err.message("en"))["Problem"] == [
        "units.sizes[0][0] must be a positive integer, got '128' (str)"
    ]
    err = UnitValidationError(key="units.sizes[0][0]", value=True, rule="positive_int")
    assert blocks(err.message("vi"))["Vấn đề"] == [
        "units.sizes[0][0] phải là số nguyên dương, hiện tại là True (bool)"
    ]


@pytest.mark.parametrize(
    ("exitcode", "lines"),
    [
        (None, None),
        (3, ["3"]),
        (-9, ["-9 (killed by SIGKILL)"]),
        (-99, ["-99 (killed by signal 99)"]),
    ],
)
def test_worker_error_exit_code_section(exitcode, lines):
    err = WorkerError(cause="process_ended", detail="worker 0 died", exitcode=exitcode)
    assert blocks(err.message("en")).get("Exit code") == lines


def test_unknown_pipeline_lists_registered_or_none():
    err = UnknownPipelineError(name="x", registered=[])
    assert blocks(err.message("en"))["Registered pipelines"] == ["- (none)"]
    assert blocks(err.message("vi"))["Các pipeline đã đăng ký"] == ["- (không có)"]
    err = UnknownPipelineError(name=3, registered=["unit-build"])
    assert blocks(err.message("en"))["Pipeline"] == ["3"]
    assert blocks(err.message("en"))["Fix"] == [
        'call pipeline() with a registered name, e.g. pipeline("unit-build")'
    ]


def test_unknown_config_key_names_the_parent_or_top_level():
    err = UnknownConfigKeyError(unknown={"lang2": ["source", "units"], "units.foo": ["sizes"]})
    assert blocks(err.message("en"))["Valid keys"] == [
        "- (top level): source, units",
        "- units: sizes",
    ]
    assert blocks(err.message("vi"))["Key hợp lệ"][0] == "- (cấp ngoài cùng): source, units"
    assert "Unknown keys" not in blocks(UnknownConfigKeyError(unknown={}).message("en"))


def test_optional_sections_appear_only_with_their_fact():
    assert "Expected" not in blocks(ConfigValueError(key="k", detail="d").message("en"))
    assert blocks(ConfigValueError(key="k", detail="d", expected="k=1").message("en"))[
        "Expected"
    ] == ["k=1"]
    assert "Bundled files" not in blocks(DemoFileError(name="x", available=[]).message("en"))


def test_output_conflict_needs_one_value_per_file():
    with pytest.raises(ValueError, match="same length, got 2 and 1"):
        OutputConflictError(directory="o", setting="units.sizes", values=["a", "b"], files=["f"])
    err = OutputConflictError(**OutputConflictError.examples[0])
    assert blocks(err.message("en"))["Declarations"] == [
        "./data/a.jsonl -> [128, 256]",
        "./data/b.jsonl -> [64, 128]",
    ]


def test_special_token_fix_says_why_the_token_is_needed():
    for token, why in (("unk_id", "to count unknown tokens"), ("pad_id", "fills every sample")):
        err = TokenizerSpecialTokenError(token=token, path="t", looked_for=["x"])
        assert why in blocks(err.message("en"))["Fix"][0]

"""Tests for mintdim.shared.errors: catalogue texts, languages, attributes and pickling.

The expected texts of catalogue errors are copied from the spec's "message errors"
section; extra sections MintDim appends after the catalogue's own ones are spelled out
next to them.
"""

from __future__ import annotations

import concurrent.futures
import pickle

import pytest

from mintdim.shared import errors
from mintdim.shared.errors import (
    BuildInterruptedError,
    ConfigValueError,
    DemoFileError,
    FieldMappingError,
    FieldValueTypeError,
    MintDimError,
    MintDimFileNotFoundError,
    OutputConflictError,
    OutputMappingError,
    OutputValidationError,
    PipelineValidationError,
    RunOptionError,
    SampleSchemaError,
    SamplesPerShardError,
    SourceParseError,
    SourceValidationError,
    SweepOutputError,
    TemplateFieldMismatchError,
    TemplateMappingError,
    TemplateSyntaxError,
    TemplateTokenizerError,
    TokenDTypeValidationError,
    TokenizerEncodeError,
    TokenizerLoadError,
    TokenizerMappingError,
    TokenizerSpecialTokenError,
    TokenizerValidationError,
    UnitMappingError,
    UnitOverflowError,
    UnitPlanError,
    UnitValidationError,
    UnknownConfigKeyError,
    UnknownPipelineError,
    WorkerError,
    error_classes,
    format_location,
    get_language,
    set_language,
)


@pytest.fixture(autouse=True)
def _default_language(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MINTDIM_LANG", raising=False)
    set_language(None)
    yield
    set_language(None)


def sections(text: str) -> list[tuple[str | None, list[str]]]:
    """Split a message into (header, body lines) after the name and sentence block.

    A block without a ``Header:`` first line (a closing sentence) has header None.
    """
    result: list[tuple[str | None, list[str]]] = []
    for block in text.split("\n\n")[1:]:
        first, *rest = block.split("\n")
        if first.endswith(":"):
            result.append((first[:-1], rest))
        else:
            result.append((None, [first, *rest]))
    return result


def headers(text: str) -> list[str | None]:
    return [header for header, _ in sections(text)]


def body(text: str, header: str) -> list[str]:
    matches = [lines for name, lines in sections(text) if name == header]
    assert len(matches) == 1, f"{header!r} appears {len(matches)} times"
    return matches[0]


# ---------------------------------------------------------------------------
# Catalogue examples, verbatim from the spec
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


def test_pipeline_validation_error_matches_catalogue():
    err = PipelineValidationError(missing=ALL_MISSING)
    assert err.message("en") == (
        "PipelineValidationError:\n"
        "Pipeline configuration is incomplete.\n"
        "\n"
        "Missing:\n"
        "- source.files\n"
        "- source.fields\n"
        "- source.templates\n"
        "- tokenizer\n"
        "- units.sizes\n"
        "- units.build_batch\n"
        "- output.dir\n"
        "- output.samples_per_shard"
    )
    assert err.message("vi") == (
        "PipelineValidationError:\n"
        "Pipeline chưa được cấu hình đầy đủ.\n"
        "\n"
        "Thiếu:\n"
        "- source.files\n"
        "- source.fields\n"
        "- source.templates\n"
        "- tokenizer\n"
        "- units.sizes\n"
        "- units.build_batch\n"
        "- output.dir\n"
        "- output.samples_per_shard"
    )
    assert err.missing == ALL_MISSING


def test_pipeline_validation_error_lists_only_what_is_missing():
    err = PipelineValidationError(missing=["units.build_batch", "output.dir"])
    assert body(err.message("en"), "Missing") == ["- units.build_batch", "- output.dir"]
    assert err.message("vi").endswith("Thiếu:\n- units.build_batch\n- output.dir")
    assert "Thiếu cấu hình nào" not in err.message("vi")


def test_file_not_found_matches_catalogue_plus_fix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = MintDimFileNotFoundError(context="source", path="./data/train.jsonl")
    assert err.cwd == str(tmp_path)
    assert err.message("en") == (
        "MintDimFileNotFoundError:\n"
        "Required file was not found.\n"
        "\n"
        "Context:\n"
        "source\n"
        "\n"
        "Missing file:\n"
        "./data/train.jsonl\n"
        "\n"
        "Fix:\n"
        f"relative paths are resolved from the current working directory: {tmp_path}\n"
        f"looked for: {tmp_path}/data/train.jsonl\n"
        "check the path, or run from the directory the path is relative to"
    )
    assert err.message("vi") == (
        "MintDimFileNotFoundError:\n"
        "Không tìm thấy file cần dùng.\n"
        "\n"
        "Context:\n"
        "source\n"
        "\n"
        "File thiếu:\n"
        "./data/train.jsonl\n"
        "\n"
        "Cách sửa:\n"
        f"đường dẫn tương đối được tính từ thư mục làm việc hiện tại: {tmp_path}\n"
        f"đã tìm tại: {tmp_path}/data/train.jsonl\n"
        "kiểm tra lại đường dẫn, hoặc chạy lệnh từ đúng thư mục mà đường dẫn này dựa vào"
    )


def test_file_not_found_absolute_path_has_no_cwd_hint():
    err = MintDimFileNotFoundError(context="tokenizer", path="/opt/tok/tokenizer.model")
    assert body(err.message("en"), "Fix") == ["check that the file exists at this absolute path"]
    assert body(err.message("vi"), "Cách sửa") == [
        "kiểm tra file có tồn tại ở đường dẫn tuyệt đối này không"
    ]


def test_file_not_found_behaves_like_file_not_found_error():
    err = MintDimFileNotFoundError(context="tokenizer", path="./tokenizer/tokenizer.model")
    assert isinstance(err, FileNotFoundError)
    assert err.errno == 2
    assert err.filename == "./tokenizer/tokenizer.model"
    assert str(err) == err.message("en")
    assert "[Errno" not in str(err)


def test_source_parse_error_matches_catalogue_plus_fix():
    err = SourceParseError(file="./data/alpaca.jsonl", line=18291, reason="invalid_json")
    assert err.message("en") == (
        "SourceParseError:\n"
        "JSONL line could not be parsed.\n"
        "\n"
        "File:\n"
        "./data/alpaca.jsonl\n"
        "\n"
        "Line:\n"
        "18291\n"
        "\n"
        "Reason:\n"
        "invalid JSON syntax\n"
        "\n"
        "Fix:\n"
        "each line must be one JSON object encoded as UTF-8; fix or remove line 18291"
    )
    assert err.message("vi") == (
        "SourceParseError:\n"
        "Không đọc được dòng JSONL.\n"
        "\n"
        "File:\n"
        "./data/alpaca.jsonl\n"
        "\n"
        "Dòng:\n"
        "18291\n"
        "\n"
        "Lý do:\n"
        "JSON không hợp lệ\n"
        "\n"
        "Cách sửa:\n"
        "mỗi dòng phải là một JSON object mã hóa UTF-8; hãy sửa hoặc xóa dòng 18291"
    )


@pytest.mark.parametrize(
    ("reason", "detail", "reason_en", "reason_vi"),
    [
        (
            "invalid_json",
            "Expecting value: line 1 column 1 (char 0)",
            ["invalid JSON syntax", "Expecting value: line 1 column 1 (char 0)"],
            ["JSON không hợp lệ", "Expecting value: line 1 column 1 (char 0)"],
        ),
        (
            "invalid_utf8",
            "invalid start byte 0xff at offset 12",
            ["bytes are not valid UTF-8", "invalid start byte 0xff at offset 12"],
            ["byte không phải UTF-8 hợp lệ", "invalid start byte 0xff at offset 12"],
        ),
        (
            "not_object",
            "array",
            ["JSON value is not an object", "found: array"],
            ["giá trị JSON không phải object", "tìm thấy: array"],
        ),
    ],
)
def test_source_parse_error_reasons_and_detail(reason, detail, reason_en, reason_vi):
    err = SourceParseError(file="./data/a.jsonl", line=7, reason=reason, detail=detail)
    assert body(err.message("en"), "Reason") == reason_en
    assert body(err.message("vi"), "Lý do") == reason_vi
    assert (err.file, err.line, err.reason, err.detail) == ("./data/a.jsonl", 7, reason, detail)


def test_sample_schema_error_matches_catalogue_exactly():
    err = SampleSchemaError(
        file="./data/alpaca.jsonl",
        line=18291,
        declared_fields=["instruction", "input", "output"],
        missing_fields=["input"],
        available_keys=["instruction", "output", "metadata"],
    )
    assert err.message("en") == (
        "SampleSchemaError:\n"
        "JSONL sample is missing declared fields.\n"
        "\n"
        "File:\n"
        "./data/alpaca.jsonl\n"
        "\n"
        "Line:\n"
        "18291\n"
        "\n"
        "Declared fields:\n"
        "instruction\n"
        "input\n"
        "output\n"
        "\n"
        "Missing fields:\n"
        "input\n"
        "\n"
        "Available keys:\n"
        "instruction\n"
        "output\n"
        "metadata"
    )
    assert err.message("vi") == (
        "SampleSchemaError:\n"
        "Sample JSONL thiếu fields đã khai báo.\n"
        "\n"
        "File:\n"
        "./data/alpaca.jsonl\n"
        "\n"
        "Dòng:\n"
        "18291\n"
        "\n"
        "Fields đã khai báo:\n"
        "instruction\n"
        "input\n"
        "output\n"
        "\n"
        "Fields bị thiếu:\n"
        "input\n"
        "\n"
        "Keys hiện có:\n"
        "instruction\n"
        "output\n"
        "metadata"
    )
    assert err.missing_fields == ["input"]


TOKENIZER_CONFIG_EN = (
    "TokenizerValidationError:\n"
    "Invalid tokenizer config.\n"
    "\n"
    "Component:\n"
    "config\n"
    "\n"
    "Problem:\n"
    "tokenizer config has unknown keys: ['pad_id']. "
    "unk_id and pad_id are loaded from the tokenizer library.\n"
    "\n"
    "Rules:\n"
    "- config must be a dict with key: path\n"
    "- path must be a string\n"
    "- unk_id and pad_id are loaded from the tokenizer library"
)
TOKENIZER_CONFIG_VI = (
    "TokenizerValidationError:\n"
    "Cấu hình tokenizer không hợp lệ.\n"
    "\n"
    "Thành phần:\n"
    "config\n"
    "\n"
    "Vấn đề:\n"
    "config tokenizer có key không hợp lệ: ['pad_id']. "
    "unk_id và pad_id được lấy từ thư viện tokenizer.\n"
    "\n"
    "Quy tắc:\n"
    "- config phải là dict có key: path\n"
    "- path phải là string\n"
    "- unk_id và pad_id được lấy từ thư viện tokenizer"
)


def test_tokenizer_config_error_matches_catalogue_plus_index():
    err = TokenizerValidationError.config(index=0, problem="unknown_keys", got=["pad_id"])
    assert err.message("en") == TOKENIZER_CONFIG_EN + "\n\nTokenizer index:\n0"
    assert err.message("vi") == TOKENIZER_CONFIG_VI + "\n\nVị trí tokenizer:\n0"
    assert (err.component, err.problem, err.index, err.got) == (
        "config",
        "unknown_keys",
        0,
        ["pad_id"],
    )
    assert err.path is None
    assert err.method is None


@pytest.mark.parametrize(
    ("problem", "got", "problem_en", "problem_vi"),
    [
        (
            "not_dict",
            "str",
            "tokenizer config must be a dict, got str.",
            "config tokenizer phải là dict, hiện tại là str.",
        ),
        (
            "missing_path",
            None,
            "tokenizer config is missing the required key: path.",
            "config tokenizer thiếu key bắt buộc: path.",
        ),
        (
            "path_not_string",
            "int",
            "tokenizer config key path must be a string, got int.",
            "key path trong config tokenizer phải là string, hiện tại là int.",
        ),
        (
            "unknown_keys",
            ["pad_id", "unk_id"],
            "tokenizer config has unknown keys: ['pad_id', 'unk_id']. "
            "unk_id and pad_id are loaded from the tokenizer library.",
            "config tokenizer có key không hợp lệ: ['pad_id', 'unk_id']. "
            "unk_id và pad_id được lấy từ thư viện tokenizer.",
        ),
        (
            "unknown_keys",
            ["vocab"],
            "tokenizer config has unknown keys: ['vocab']. The only allowed key is path.",
            "config tokenizer có key không hợp lệ: ['vocab']. Key duy nhất được phép là path.",
        ),
    ],
)
def test_tokenizer_config_problems(problem, got, problem_en, problem_vi):
    err = TokenizerValidationError.config(index=2, problem=problem, got=got)
    en, vi = err.message("en"), err.message("vi")
    assert headers(en) == ["Component", "Problem", "Rules", "Tokenizer index"]
    assert headers(vi) == ["Thành phần", "Vấn đề", "Quy tắc", "Vị trí tokenizer"]
    assert body(en, "Problem") == [problem_en]
    assert body(vi, "Vấn đề") == [problem_vi]
    assert body(en, "Tokenizer index") == ["2"]


def test_tokenizer_special_token_error_matches_catalogue_plus_sections():
    err = TokenizerSpecialTokenError(
        token="pad_id",
        path="./tokenizer/tokenizer.model",
        looked_for="sp.pad_id() returned -1",
    )
    assert err.message("en") == (
        "TokenizerSpecialTokenError:\n"
        "Tokenizer library did not expose a required special token.\n"
        "\n"
        "Special token:\n"
        "pad_id"
        "\n\n"
        "Tokenizer:\n"
        "./tokenizer/tokenizer.model\n"
        "\n"
        "Looked for:\n"
        "sp.pad_id() returned -1\n"
        "\n"
        "Fix:\n"
        "use a tokenizer that defines pad_id (PAD fills every sample up to its unit size)\n"
        "MintDim never modifies the tokenizer and does not accept a declared pad_id"
    )
    assert err.message("vi") == (
        "TokenizerSpecialTokenError:\n"
        "Thư viện tokenizer không cung cấp special token bắt buộc.\n"
        "\n"
        "Special token:\n"
        "pad_id"
        "\n\n"
        "Tokenizer:\n"
        "./tokenizer/tokenizer.model\n"
        "\n"
        "Đã tìm:\n"
        "sp.pad_id() returned -1\n"
        "\n"
        "Cách sửa:\n"
        "dùng tokenizer có định nghĩa pad_id (PAD dùng để đệm mỗi mẫu cho đủ kích thước unit)\n"
        "MintDim không bao giờ sửa tokenizer và không nhận pad_id do người dùng khai báo"
    )


def test_tokenizer_unsupported_format_matches_catalogue_plus_sections():
    err = TokenizerValidationError.unsupported_format(
        index=1, path="./tokenizer/tokenizer.json", method="sentencepiece"
    )
    assert err.message("en") == (
        "TokenizerValidationError:\n"
        "Unsupported tokenizer format.\n"
        "\n"
        "Supported formats:\n"
        "- sentencepiece (.model)\n"
        "- huggingface tokenizer (.json)"
        "\n\n"
        "File:\n"
        "./tokenizer/tokenizer.json\n"
        "\n"
        "Method:\n"
        ".tokenizer.sentencepiece expects a .model file\n"
        "for a .json file use .tokenizer.hf_json\n"
        "\n"
        "Tokenizer index:\n"
        "1"
    )
    assert err.message("vi") == (
        "TokenizerValidationError:\n"
        "Định dạng tokenizer chưa được hỗ trợ.\n"
        "\n"
        "Các định dạng hiện hỗ trợ:\n"
        "- sentencepiece (.model)\n"
        "- huggingface tokenizer (.json)"
        "\n\n"
        "File:\n"
        "./tokenizer/tokenizer.json\n"
        "\n"
        "Phương thức:\n"
        ".tokenizer.sentencepiece cần file .model\n"
        "với file .json hãy dùng .tokenizer.hf_json\n"
        "\n"
        "Vị trí tokenizer:\n"
        "1"
    )
    assert (err.component, err.index, err.path, err.method) == (
        "format",
        1,
        "./tokenizer/tokenizer.json",
        "sentencepiece",
    )


def test_tokenizer_unsupported_format_other_extension_has_no_hint():
    err = TokenizerValidationError.unsupported_format(
        index=0, path="./tokenizer/vocab.txt", method="hf_json"
    )
    assert body(err.message("en"), "Method") == [".tokenizer.hf_json expects a .json file"]
    assert body(err.message("vi"), "Phương thức") == [".tokenizer.hf_json cần file .json"]


@pytest.mark.parametrize(
    ("cls", "en", "vi"),
    [
        (
            TokenizerMappingError,
            "TokenizerMappingError:\n"
            "Received 3 input files but 2 tokenizers.\n"
            "\n"
            "MintDim supports:\n"
            "- 1 tokenizer shared across all files\n"
            "- N tokenizers for N files",
            "TokenizerMappingError:\n"
            "Nhận 3 file đầu vào nhưng chỉ có 2 tokenizer.\n"
            "\n"
            "MintDim hỗ trợ:\n"
            "- 1 tokenizer dùng chung cho tất cả file\n"
            "- N tokenizer cho N file",
        ),
        (
            FieldMappingError,
            "FieldMappingError:\n"
            "Received 3 input files but 2 field configs.\n"
            "\n"
            "MintDim supports:\n"
            "- 1 field config shared across all files\n"
            "- N field configs for N files",
            "FieldMappingError:\n"
            "Nhận 3 file đầu vào nhưng chỉ có 2 cấu hình fields.\n"
            "\n"
            "MintDim hỗ trợ:\n"
            "- 1 fields dùng chung cho tất cả file\n"
            "- N fields cho N file",
        ),
        (
            TemplateMappingError,
            "TemplateMappingError:\n"
            "Received 3 input files but 2 templates.\n"
            "\n"
            "MintDim supports:\n"
            "- 1 template shared across all files\n"
            "- N templates for N files",
            "TemplateMappingError:\n"
            "Nhận 3 file đầu vào nhưng chỉ có 2 template.\n"
            "\n"
            "MintDim hỗ trợ:\n"
            "- 1 template dùng chung cho tất cả file\n"
            "- N template cho N file",
        ),
        (
            OutputMappingError,
            "OutputMappingError:\n"
            "Received 3 input files but 2 output directories.\n"
            "\n"
            "MintDim supports:\n"
            "- 1 shared output directory\n"
            "- N output directories for N input files",
            "OutputMappingError:\n"
            "Nhận 3 file đầu vào nhưng chỉ có 2 thư mục output.\n"
            "\n"
            "MintDim hỗ trợ:\n"
            "- 1 output dùng chung\n"
            "- N output cho N file",
        ),
    ],
)
def test_mapping_errors_match_catalogue_exactly(cls, en, vi):
    err = cls(file_count=3, got=2)
    assert err.message("en") == f"{en}\n\nKey:\n{err.key}"
    assert err.message("vi") == f"{vi}\n\nKey:\n{err.key}"
    assert (err.file_count, err.got) == (3, 2)


def test_mapping_error_with_too_many_entries_reads_correctly():
    err = TokenizerMappingError(file_count=1, got=3)
    assert err.message("en").splitlines()[1] == "Received 1 input file but 3 tokenizers."
    assert err.message("vi").splitlines()[1] == "Nhận 1 file đầu vào nhưng có 3 tokenizer."


def test_template_field_mismatch_matches_catalogue_plus_fix():
    err = TemplateFieldMismatchError(
        file="./data/train.jsonl",
        fields=["instruction", "input", "output"],
        template="{instruction}\n\n{prompt}\n\n{output}",
        field="prompt",
        problem="not_declared",
    )
    assert err.message("en") == (
        "TemplateFieldMismatchError:\n"
        "Source file:\n"
        "./data/train.jsonl\n"
        "\n"
        "API declaration for this file:\n"
        "fields = ['instruction', 'input', 'output']\n"
        'template = "{instruction}\\n\\n{prompt}\\n\\n{output}"\n'
        "\n"
        "Field causing template mismatch:\n"
        "prompt\n"
        "Reason:\n"
        "template uses {prompt}, but fields does not declare it"
        "\n\n"
        "Fix:\n"
        "add 'prompt' to fields, or remove {prompt} from the template"
    )
    assert err.message("vi") == (
        "TemplateFieldMismatchError:\n"
        "File nguồn:\n"
        "./data/train.jsonl\n"
        "\n"
        "Khai báo API cho file này:\n"
        "fields = ['instruction', 'input', 'output']\n"
        'template = "{instruction}\\n\\n{prompt}\\n\\n{output}"\n'
        "\n"
        "Field gây lệch template:\n"
        "prompt\n"
        "Lý do:\n"
        "template dùng {prompt}, nhưng fields không khai báo field này"
        "\n\n"
        "Cách sửa:\n"
        "thêm 'prompt' vào fields, hoặc bỏ {prompt} khỏi template"
    )


def test_template_field_mismatch_not_used():
    err = TemplateFieldMismatchError(
        file="./data/train.jsonl",
        fields=["prompt", "answer", "separator", "source"],
        template="{prompt}{separator}{answer}",
        field="source",
        problem="not_used",
    )
    en, vi = err.message("en"), err.message("vi")
    assert "Reason:\nfields declares it, but the template does not use {source}" in en
    assert "Lý do:\nfields khai báo field này, nhưng template không dùng {source}" in vi
    assert body(en, "Fix") == ["remove 'source' from fields, or use {source} in the template"]
    assert body(vi, "Cách sửa") == ["bỏ 'source' khỏi fields, hoặc dùng {source} trong template"]


def test_template_tokenizer_error_matches_catalogue_plus_segment():
    err = TemplateTokenizerError(file_index=0, template="{a}\n\n{b}", segment="\n\n", unk_count=2)
    assert err.message("en") == (
        "TemplateTokenizerError:\n"
        "Template static parts produce UNK when encoded by the tokenizer.\n"
        "\n"
        "File index:\n"
        "0\n"
        "\n"
        "Template:\n"
        '"{a}\\n\\n{b}"\n'
        "\n"
        "Problem:\n"
        "template literal characters are not fully covered by tokenizer vocabulary\n"
        "\n"
        "Fix:\n"
        "adjust template literal characters or use a tokenizer that covers them"
        "\n\n"
        "Literal segment:\n"
        '"\\n\\n"\n'
        "UNK tokens: 2"
    )
    assert err.message("vi") == (
        "TemplateTokenizerError:\n"
        "Phần literal của template tạo UNK khi tokenize.\n"
        "\n"
        "Vị trí file:\n"
        "0\n"
        "\n"
        "Template:\n"
        '"{a}\\n\\n{b}"\n'
        "\n"
        "Vấn đề:\n"
        "ký tự literal trong template không được tokenizer bao phủ\n"
        "\n"
        "Cách sửa:\n"
        "chỉnh ký tự literal hoặc dùng tokenizer bao phủ được"
        "\n\n"
        "Đoạn literal:\n"
        '"\\n\\n"\n'
        "Số token UNK: 2"
    )


def test_template_tokenizer_error_shows_escapes_of_invisible_characters():
    err = TemplateTokenizerError(
        file_index=1, template="{a}\u00a0{b}", segment="\u00a0", unk_count=1
    )
    assert body(err.message("en"), "Literal segment") == [
        '"\u00a0"',
        'escaped: "\\u00a0"',
        "UNK tokens: 1",
    ]
    assert body(err.message("vi"), "Đoạn literal")[1] == 'dạng escape: "\\u00a0"'


def test_unit_mapping_error_matches_catalogue_plus_key():
    err = UnitMappingError(file_count=3, got=2, key="units.build_batch")
    assert err.message("en") == (
        "UnitMappingError:\n"
        "Received 3 input files but 2 unit configs.\n"
        "\n"
        "MintDim supports:\n"
        "- 1 unit config shared across all files\n"
        "- N unit configs for N input files"
        "\n\n"
        "Key:\n"
        "units.build_batch"
    )
    assert err.message("vi") == (
        "UnitMappingError:\n"
        "Nhận 3 file đầu vào nhưng chỉ có 2 unit config.\n"
        "\n"
        "MintDim hỗ trợ:\n"
        "- 1 unit config dùng chung cho tất cả file\n"
        "- N unit config cho N file"
        "\n\n"
        "Key:\n"
        "units.build_batch"
    )


def test_unit_validation_error_matches_catalogue_plus_problem():
    err = UnitValidationError(key="units.sizes[0][2]", value=-5, rule="positive_int")
    assert err.message("en") == (
        "UnitValidationError:\n"
        "Invalid unit config.\n"
        "\n"
        "Rules:\n"
        "- sizes must be positive integers\n"
        "- sizes must be sorted ascending\n"
        "- build_batch must be a positive integer"
        "\n\n"
        "Problem:\n"
        "units.sizes[0][2] must be a positive integer, got -5"
    )
    assert err.message("vi") == (
        "UnitValidationError:\n"
        "Unit config không hợp lệ.\n"
        "\n"
        "Quy tắc:\n"
        "- sizes phải là các số nguyên dương\n"
        "- sizes phải tăng dần\n"
        "- build_batch phải là số nguyên dương"
        "\n\n"
        "Vấn đề:\n"
        "units.sizes[0][2] phải là số nguyên dương, hiện tại là -5"
    )


@pytest.mark.parametrize(
    ("key", "value", "rule", "problem_en", "problem_vi"),
    [
        (
            "units.sizes[0]",
            [128, 96],
            "ascending",
            "units.sizes[0] must be sorted ascending, got [128, 96]",
            "units.sizes[0] phải tăng dần, hiện tại là [128, 96]",
        ),
        (
            "units.sizes",
            [],
            "non_empty",
            "units.sizes must not be empty, got []",
            "units.sizes không được rỗng, hiện tại là []",
        ),
        (
            "units.sizes",
            [128, 256],
            "list_of_lists",
            "units.sizes must be a list of lists of integers, got [128, 256]",
            "units.sizes phải là list các list số nguyên, hiện tại là [128, 256]",
        ),
        (
            "units.build_batch[0]",
            "64",
            "positive_int",
            "units.build_batch[0] must be a positive integer, got '64' (str)",
            "units.build_batch[0] phải là số nguyên dương, hiện tại là '64' (str)",
        ),
        (
            "units.build_batch[0]",
            True,
            "positive_int",
            "units.build_batch[0] must be a positive integer, got True (bool)",
            "units.build_batch[0] phải là số nguyên dương, hiện tại là True (bool)",
        ),
    ],
)
def test_unit_validation_error_rules(key, value, rule, problem_en, problem_vi):
    err = UnitValidationError(key=key, value=value, rule=rule)
    assert body(err.message("en"), "Problem") == [problem_en]
    assert body(err.message("vi"), "Vấn đề") == [problem_vi]
    assert (err.key, err.value, err.rule) == (key, value, rule)


def test_unit_overflow_error_matches_catalogue_exactly():
    err = UnitOverflowError(
        file="./data/alpaca.jsonl", line=18291, token_count=417, max_unit_size=320
    )
    assert err.message("en") == (
        "UnitOverflowError:\n"
        "Sample token length exceeds max unit size.\n"
        "\n"
        "Sample:\n"
        "./data/alpaca.jsonl:18291\n"
        "\n"
        "token_count:\n"
        "417\n"
        "\n"
        "max_unit_size:\n"
        "320\n"
        "\n"
        "Increase unit sizes and run again."
    )
    assert err.message("vi") == (
        "UnitOverflowError:\n"
        "Độ dài token của mẫu vượt quá unit lớn nhất.\n"
        "\n"
        "Mẫu:\n"
        "./data/alpaca.jsonl:18291\n"
        "\n"
        "token_count:\n"
        "417\n"
        "\n"
        "max_unit_size:\n"
        "320\n"
        "\n"
        "Hãy tăng unit sizes rồi chạy lại."
    )
    assert (err.file, err.line, err.token_count, err.max_unit_size) == (
        "./data/alpaca.jsonl",
        18291,
        417,
        320,
    )


def test_output_validation_error_matches_catalogue_exactly():
    err = OutputValidationError(directory="./artifacts/token_shards")
    assert err.message("en") == (
        "OutputValidationError:\n"
        "Output directory already exists and is not empty.\n"
        "\n"
        "Directory:\n"
        "./artifacts/token_shards\n"
        "\n"
        "Use a new output directory."
    )
    assert err.message("vi") == (
        "OutputValidationError:\n"
        "Thư mục output đã tồn tại và không rỗng.\n"
        "\n"
        "Thư mục:\n"
        "./artifacts/token_shards\n"
        "\n"
        "Hãy dùng thư mục output mới."
    )
    assert err.problem == "not_empty"


def test_output_validation_error_other_problems():
    not_dir = OutputValidationError(directory="./artifacts/run1", problem="not_a_directory")
    assert not_dir.message("en").splitlines()[1] == (
        "Output path already exists and is not a directory."
    )
    assert not_dir.message("vi").splitlines()[1] == (
        "Đường dẫn output đã tồn tại và không phải thư mục."
    )
    assert headers(not_dir.message("en")) == ["Directory", None]

    denied = OutputValidationError(
        directory="/data/out",
        problem="cannot_create",
        detail="[Errno 13] Permission denied: '/data/out'",
    )
    en, vi = denied.message("en"), denied.message("vi")
    assert headers(en) == ["Directory", "Reason", None]
    assert headers(vi) == ["Thư mục", "Lý do", None]
    assert body(en, "Reason") == ["[Errno 13] Permission denied: '/data/out'"]
    assert en.endswith("\n\nCheck the path and its permissions, or use another output directory.")
    assert vi.endswith("\n\nHãy kiểm tra đường dẫn và quyền ghi, hoặc dùng thư mục output khác.")


def test_token_dtype_error_matches_catalogue_plus_sections():
    err = TokenDTypeValidationError(vocab_size=5_000_000_000, path="./tokenizer/huge.json")
    assert err.message("en") == (
        "TokenDTypeValidationError:\n"
        "Tokenizer vocabulary is too large for supported token dtypes.\n"
        "\n"
        "Supported dtypes:\n"
        "- uint16\n"
        "- uint32"
        "\n\n"
        "Vocabulary size:\n"
        "5000000000\n"
        "\n"
        "Tokenizer:\n"
        "./tokenizer/huge.json\n"
        "\n"
        "Fix:\n"
        "uint32 stores vocabularies of up to 4294967295 tokens; "
        "use a tokenizer with a smaller vocabulary"
    )
    assert err.message("vi") == (
        "TokenDTypeValidationError:\n"
        "Vocab của tokenizer quá lớn so với dtype token được hỗ trợ.\n"
        "\n"
        "Các dtype hiện hỗ trợ:\n"
        "- uint16\n"
        "- uint32"
        "\n\n"
        "Kích thước vocab:\n"
        "5000000000\n"
        "\n"
        "Tokenizer:\n"
        "./tokenizer/huge.json\n"
        "\n"
        "Cách sửa:\n"
        "uint32 chứa được vocab tối đa 4294967295 token; hãy dùng tokenizer có vocab nhỏ hơn"
    )


SAMPLES_RULES_EN = (
    "Rules:\n"
    "- each samples_per_shard[i] is a positive int\n"
    "- len(samples_per_shard) == 1 or len(samples_per_shard) == file_count"
)
SAMPLES_RULES_VI = (
    "Quy tắc:\n"
    "- mỗi samples_per_shard[i] phải là số nguyên dương\n"
    "- len(samples_per_shard) == 1 hoặc len(samples_per_shard) == số file"
)


def test_samples_per_shard_not_positive_matches_catalogue_exactly():
    err = SamplesPerShardError.not_positive(index=0, value=0)
    assert err.message("en") == (
        "SamplesPerShardError:\n"
        "Invalid samples_per_shard.\n"
        "\n"
        "Problem:\n"
        "samples_per_shard[0] must be a positive int, got 0\n"
        "\n" + SAMPLES_RULES_EN
    )
    assert err.message("vi") == (
        "SamplesPerShardError:\n"
        "samples_per_shard không hợp lệ.\n"
        "\n"
        "Vấn đề:\n"
        "samples_per_shard[0] phải là số nguyên dương, hiện tại là 0\n"
        "\n" + SAMPLES_RULES_VI
    )
    assert (err.problem, err.index, err.value) == ("not_positive", 0, 0)


def test_samples_per_shard_arity_matches_catalogue_exactly():
    err = SamplesPerShardError.arity(file_count=3, got=2)
    assert err.message("en") == (
        "SamplesPerShardError:\n"
        "Invalid samples_per_shard.\n"
        "\n"
        "Problem:\n"
        "Received 3 input files but 2 samples_per_shard entries\n"
        "\n" + SAMPLES_RULES_EN
    )
    assert err.message("vi") == (
        "SamplesPerShardError:\n"
        "samples_per_shard không hợp lệ.\n"
        "\n"
        "Vấn đề:\n"
        "Nhận 3 file đầu vào nhưng chỉ có 2 samples_per_shard\n"
        "\n" + SAMPLES_RULES_VI
    )
    assert (err.problem, err.file_count, err.got) == ("arity", 3, 2)


# ---------------------------------------------------------------------------
# Errors beyond the catalogue: first line, section headers in order, values
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "position", "problem", "problem_en", "caret_column"),
    [
        (
            "{instruction}\n\n{output",
            15,
            "unmatched_open",
            "'{' at position 15 has no closing '}'",
            18,
        ),
        ("a}b", 1, "unmatched_close", "'}' at position 1 closes no placeholder", 2),
        (
            "{a} {}",
            4,
            "empty_placeholder",
            "'{}' at position 4 is a placeholder without a field name",
            5,
        ),
        ("{a{b}", 2, "nested_brace", "'{' at position 2 is inside another placeholder", 3),
    ],
)
def test_template_syntax_error(template, position, problem, problem_en, caret_column):
    err = TemplateSyntaxError(file_index=1, template=template, position=position, problem=problem)
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == ["TemplateSyntaxError:", "Template has invalid brace syntax."]
    assert vi.splitlines()[:2] == [
        "TemplateSyntaxError:",
        "Template có dấu ngoặc nhọn sai cú pháp.",
    ]
    assert headers(en) == ["File index", "Template", "Position", "Problem", "Rules", "Fix"]
    assert headers(vi) == [
        "Vị trí file",
        "Template",
        "Vị trí ký tự",
        "Vấn đề",
        "Quy tắc",
        "Cách sửa",
    ]
    assert body(en, "File index") == ["1"]
    position_lines = body(en, "Position")
    assert position_lines[0] == str(position)
    assert position_lines[2] == " " * caret_column + "^"
    # The caret points at the offending brace in the quoted template above it.
    assert position_lines[1][caret_column] in "{}"
    assert body(en, "Problem") == [problem_en]
    assert body(en, "Rules") == [
        "- {name} is a placeholder for the field name",
        "- {{ and }} are literal braces",
        "- any other brace is an error",
    ]
    assert (err.file_index, err.template, err.position, err.problem) == (
        1,
        template,
        position,
        problem,
    )


def test_field_value_type_error():
    err = FieldValueTypeError(
        file="./data/alpaca.jsonl", line=42, field="output", found_type="number"
    )
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == ["FieldValueTypeError:", "JSONL field value is not a string."]
    assert vi.splitlines()[:2] == [
        "FieldValueTypeError:",
        "Giá trị field trong JSONL không phải string.",
    ]
    assert headers(en) == ["File", "Line", "Field", "Found type", "Fix"]
    assert headers(vi) == ["File", "Dòng", "Field", "Kiểu tìm thấy", "Cách sửa"]
    assert body(en, "File") == ["./data/alpaca.jsonl"]
    assert body(en, "Line") == ["42"]
    assert body(vi, "Field") == ["output"]
    assert body(vi, "Kiểu tìm thấy") == ["number"]
    assert body(en, "Fix") == [
        "convert the value to a JSON string in the JSONL file, or choose another field"
    ]


def test_tokenizer_load_error():
    err = TokenizerLoadError(
        path="./tokenizer/tokenizer.json",
        method="hf_json",
        detail="expected value at line 1 column 1",
    )
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "TokenizerLoadError:",
        "Tokenizer library could not load the tokenizer file.",
    ]
    assert vi.splitlines()[:2] == [
        "TokenizerLoadError:",
        "Thư viện tokenizer không đọc được file tokenizer.",
    ]
    assert headers(en) == ["Tokenizer", "Method", "Library error", "Fix"]
    assert headers(vi) == ["Tokenizer", "Phương thức", "Lỗi thư viện", "Cách sửa"]
    assert body(en, "Tokenizer") == ["./tokenizer/tokenizer.json"]
    assert body(vi, "Phương thức") == [".tokenizer.hf_json"]
    assert body(en, "Library error") == ["expected value at line 1 column 1"]
    assert "tokenizers.Tokenizer.from_file" in body(en, "Fix")[0]


def test_tokenizer_encode_error():
    err = TokenizerEncodeError(
        file="./data/alpaca.jsonl",
        line=18291,
        path="./tokenizer/tokenizer.json",
        detail="stack overflow",
    )
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "TokenizerEncodeError:",
        "Tokenizer library failed to encode a sample.",
    ]
    assert vi.splitlines()[:2] == [
        "TokenizerEncodeError:",
        "Thư viện tokenizer không tokenize được một mẫu.",
    ]
    assert headers(en) == ["Sample", "Tokenizer", "Library error", "Fix"]
    assert headers(vi) == ["Mẫu", "Tokenizer", "Lỗi thư viện", "Cách sửa"]
    assert body(en, "Sample") == ["./data/alpaca.jsonl:18291"]
    assert body(vi, "Lỗi thư viện") == ["stack overflow"]
    assert (err.file, err.line) == ("./data/alpaca.jsonl", 18291)


def test_unknown_pipeline_error():
    err = UnknownPipelineError(name="foo", registered=["unit-build"])
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "UnknownPipelineError:",
        "No pipeline is registered under this name.",
    ]
    assert headers(en) == ["Pipeline", "Registered pipelines", "Fix"]
    assert headers(vi) == ["Pipeline", "Các pipeline đã đăng ký", "Cách sửa"]
    assert body(en, "Pipeline") == ["'foo'"]
    assert body(en, "Registered pipelines") == ["- unit-build"]
    assert body(en, "Fix") == [
        'call pipeline() with a registered name, e.g. pipeline("unit-build")'
    ]
    assert body(UnknownPipelineError(name=3, registered=[]).message("vi"), "Pipeline") == ["3"]


def test_output_conflict_error():
    err = OutputConflictError(
        directory="./artifacts/units",
        setting="units.sizes",
        values=["[128, 256]", "[96, 192]"],
        files=["./data/a.jsonl", "./data/b.jsonl"],
    )
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "OutputConflictError:",
        "Files that write to one output directory declare different settings.",
    ]
    assert headers(en) == ["Directory", "Setting", "Declarations", "Rules", "Fix"]
    assert headers(vi) == ["Thư mục", "Cấu hình", "Khai báo", "Quy tắc", "Cách sửa"]
    assert body(en, "Directory") == ["./artifacts/units"]
    assert body(en, "Setting") == ["units.sizes"]
    assert body(vi, "Khai báo") == [
        "./data/a.jsonl -> [128, 256]",
        "./data/b.jsonl -> [96, 192]",
    ]
    assert body(en, "Rules")[1] == "- build_batch, fields and templates may differ"


def test_output_conflict_error_needs_one_value_per_file():
    with pytest.raises(ValueError, match="same length"):
        OutputConflictError(directory="./o", setting="tokenizer", values=["a"], files=["x", "y"])


@pytest.mark.parametrize(
    ("key", "problem", "got", "problem_en", "problem_vi"),
    [
        (
            "source.files",
            "not_list",
            "str",
            "source.files must be a list, got str",
            "source.files phải là list, hiện tại là str",
        ),
        ("source.templates", "empty", None, "source.templates must not be empty", None),
        (
            "source.templates[0]",
            "not_string",
            "int",
            "source.templates[0] must be a string, got int",
            "source.templates[0] phải là string, hiện tại là int",
        ),
        (
            "source.fields[1]",
            "duplicate_field",
            "output",
            "source.fields[1] declares field 'output' more than once",
            "source.fields[1] khai báo field 'output' nhiều lần",
        ),
    ],
)
def test_source_validation_error(key, problem, got, problem_en, problem_vi):
    err = SourceValidationError(key=key, problem=problem, got=got)
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == ["SourceValidationError:", "Invalid source declaration."]
    assert vi.splitlines()[:2] == ["SourceValidationError:", "Khai báo source không hợp lệ."]
    assert headers(en) == ["Key", "Problem", "Rules", "Fix"]
    assert headers(vi) == ["Key", "Vấn đề", "Quy tắc", "Cách sửa"]
    assert body(en, "Key") == [key]
    assert body(en, "Problem") == [problem_en]
    if problem_vi is not None:
        assert body(vi, "Vấn đề") == [problem_vi]
    assert key in body(en, "Fix")[0]


def test_source_validation_error_outside_source_has_no_source_rules():
    err = SourceValidationError(key="output.dir[1]", problem="not_string", got="int")
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == ["SourceValidationError:", "Invalid declaration."]
    assert vi.splitlines()[:2] == ["SourceValidationError:", "Khai báo không hợp lệ."]
    assert headers(en) == ["Key", "Problem", "Fix"]
    assert headers(vi) == ["Key", "Vấn đề", "Cách sửa"]
    assert body(en, "Problem") == ["output.dir[1] must be a string, got int"]


def test_run_option_error():
    err = RunOptionError(option="workers", value=0, rule="positive_int")
    en, vi = err.message("en"), err.message("vi")
    assert en == (
        "RunOptionError:\n"
        "Invalid run() option.\n"
        "\n"
        "Option:\n"
        "workers\n"
        "\n"
        "Value:\n"
        "0\n"
        "\n"
        "Rule:\n"
        "workers must be a positive integer"
    )
    assert headers(vi) == ["Tùy chọn", "Giá trị", "Quy tắc"]
    assert body(vi, "Quy tắc") == ["workers phải là số nguyên dương"]
    assert body(
        RunOptionError(option="workers", value=2.5, rule="positive_int").message(), "Value"
    ) == ["2.5 (float)"]


def test_worker_error():
    err = WorkerError(detail="worker 2 exited while encoding ./data/a.jsonl", exitcode=-9)
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "WorkerError:",
        "A worker process stopped without reporting a MintDim error.",
    ]
    assert headers(en) == ["Problem", "Exit code", "Fix"]
    assert headers(vi) == ["Vấn đề", "Mã thoát", "Cách sửa"]
    assert body(en, "Problem") == ["worker 2 exited while encoding ./data/a.jsonl"]
    assert body(en, "Exit code") == ["-9 (killed by SIGKILL)"]
    assert body(vi, "Mã thoát") == ["-9 (bị dừng bởi SIGKILL)"]
    assert "workers=1" in body(en, "Fix")[1]

    unknown = WorkerError(detail="the result pipe closed")
    assert headers(unknown.message("en")) == ["Problem", "Fix"]
    assert body(WorkerError(detail="x", exitcode=1).message("en"), "Exit code") == ["1"]


def test_build_interrupted_error():
    err = BuildInterruptedError()
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "BuildInterruptedError:",
        "The build was stopped before it finished.",
    ]
    assert vi.splitlines()[:2] == ["BuildInterruptedError:", "Build đã bị dừng trước khi hoàn tất."]
    assert headers(en) == ["Signal", "Result", "Fix"]
    assert headers(vi) == ["Tín hiệu", "Kết quả", "Cách sửa"]
    assert body(en, "Signal") == ["SIGINT"]
    assert body(BuildInterruptedError(signal_name="SIGTERM").message("vi"), "Tín hiệu") == [
        "SIGTERM"
    ]


# ---------------------------------------------------------------------------
# Command-line errors (python -m mintdim.run)
# ---------------------------------------------------------------------------

UNKNOWN_KEYS = {
    "units.foo": ["sizes", "build_batch"],
    "wrokers": ["source", "tokenizer", "units", "output", "workers"],
}


def test_unknown_config_key_error():
    err = UnknownConfigKeyError(unknown=UNKNOWN_KEYS)
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "UnknownConfigKeyError:",
        "The config has keys MintDim does not know.",
    ]
    assert vi.splitlines()[:2] == ["UnknownConfigKeyError:", "Config có key mà MintDim không biết."]
    assert headers(en) == ["Unknown keys", "Valid keys", "Fix"]
    assert headers(vi) == ["Key không hợp lệ", "Key hợp lệ", "Cách sửa"]
    assert body(en, "Unknown keys") == ["- units.foo", "- wrokers"]
    assert body(vi, "Key không hợp lệ") == ["- units.foo", "- wrokers"]
    assert body(en, "Valid keys") == [
        "- units: sizes, build_batch",
        "- (top level): source, tokenizer, units, output, workers",
    ]
    assert body(vi, "Key hợp lệ") == [
        "- units: sizes, build_batch",
        "- (cấp ngoài cùng): source, tokenizer, units, output, workers",
    ]
    assert body(en, "Fix") == [
        "remove the key or correct its spelling (see: python -m mintdim.run --help)"
    ]
    assert body(vi, "Cách sửa") == [
        "xóa key hoặc sửa lại chính tả (xem: python -m mintdim.run --help)"
    ]
    assert err.unknown == UNKNOWN_KEYS
    assert pickle.loads(pickle.dumps(err)).message("vi") == vi


def test_config_value_error():
    err = ConfigValueError(
        key="output.dir",
        detail="HydraConfig was not set",
        expected="./artifacts/units",
    )
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == ["ConfigValueError:", "A config value could not be read."]
    assert vi.splitlines()[:2] == ["ConfigValueError:", "Không đọc được một giá trị trong config."]
    assert headers(en) == ["Key", "Reason", "Expected"]
    assert headers(vi) == ["Key", "Lý do", "Giá trị đúng"]
    assert body(en, "Key") == body(vi, "Key") == ["output.dir"]
    assert body(en, "Reason") == body(vi, "Lý do") == ["HydraConfig was not set"]
    assert body(en, "Expected") == body(vi, "Giá trị đúng") == ["./artifacts/units"]
    assert (err.key, err.detail, err.expected) == (
        "output.dir",
        "HydraConfig was not set",
        "./artifacts/units",
    )
    assert pickle.loads(pickle.dumps(err)).message("vi") == vi

    without_example = ConfigValueError(key="output.dir", detail="missing")
    assert headers(without_example.message("en")) == ["Key", "Reason"]
    assert headers(without_example.message("vi")) == ["Key", "Lý do"]


def test_demo_file_error():
    err = DemoFileError(name="alpaca.jsonl", available=["a.jsonl", "b.model"])
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "DemoFileError:",
        "${mintdim_demo:...} names a file that is not bundled with MintDim.",
    ]
    assert vi.splitlines()[:2] == [
        "DemoFileError:",
        "${mintdim_demo:...} trỏ tới file không có sẵn trong MintDim.",
    ]
    assert headers(en) == ["Name", "Bundled files"]
    assert headers(vi) == ["Tên", "Các file có sẵn"]
    assert body(en, "Name") == body(vi, "Tên") == ["alpaca.jsonl"]
    assert body(en, "Bundled files") == body(vi, "Các file có sẵn") == ["- a.jsonl", "- b.model"]
    assert (err.name, err.available) == ("alpaca.jsonl", ["a.jsonl", "b.model"])
    assert pickle.loads(pickle.dumps(err)).message("vi") == vi


def test_sweep_output_error():
    err = SweepOutputError(directory="multirun/2026-01-01/12-00-00-000000/0/build")
    en, vi = err.message("en"), err.message("vi")
    assert en.splitlines()[:2] == [
        "SweepOutputError:",
        "A sweep job's output directory already exists.",
    ]
    assert vi.splitlines()[:2] == [
        "SweepOutputError:",
        "Thư mục output của một job trong sweep đã tồn tại.",
    ]
    assert headers(en) == ["Directory", "Rule"]
    assert headers(vi) == ["Thư mục", "Quy tắc"]
    assert body(en, "Directory") == body(vi, "Thư mục") == [err.directory]
    assert body(en, "Rule") == [
        "in a sweep (-m) every job writes into a new directory of its own",
        "keep the default output (a directory inside each job's directory), "
        "or give each job its own output.dir",
    ]
    assert body(vi, "Quy tắc") == [
        "trong sweep (-m) mỗi job ghi vào một thư mục mới của riêng nó",
        "hãy giữ output mặc định (một thư mục nằm trong thư mục của từng job), "
        "hoặc cho mỗi job một output.dir riêng",
    ]
    assert pickle.loads(pickle.dumps(err)).message("vi") == vi


# ---------------------------------------------------------------------------
# Language selection
# ---------------------------------------------------------------------------

OVERFLOW = {"file": "./data/alpaca.jsonl", "line": 18291, "token_count": 417, "max_unit_size": 320}


def test_str_is_english_by_default():
    err = UnitOverflowError(**OVERFLOW)
    assert get_language() == "en"
    assert str(err) == err.message("en")
    assert err.message() == err.message("en")


def test_str_follows_environment_at_call_time(monkeypatch):
    err = UnitOverflowError(**OVERFLOW)
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    assert get_language() == "vi"
    assert str(err) == err.message("vi")
    monkeypatch.setenv("MINTDIM_LANG", "en")
    assert str(err) == err.message("en")


@pytest.mark.parametrize(("value", "expected"), [("vi_VN.UTF-8", "vi"), ("VI", "vi"), ("fr", "en")])
def test_environment_values(monkeypatch, value, expected):
    monkeypatch.setenv("MINTDIM_LANG", value)
    assert get_language() == expected


def test_set_language_wins_over_environment_and_resets(monkeypatch):
    err = UnitOverflowError(**OVERFLOW)
    monkeypatch.setenv("MINTDIM_LANG", "en")
    set_language("vi")
    assert get_language() == "vi"
    assert str(err).splitlines()[1] == "Độ dài token của mẫu vượt quá unit lớn nhất."
    set_language(None)
    assert str(err) == err.message("en")
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    assert str(err) == err.message("vi")


def test_invalid_language_codes_raise():
    err = UnitOverflowError(**OVERFLOW)
    with pytest.raises(ValueError, match="valid languages: 'en', 'vi'"):
        set_language("fr")
    with pytest.raises(ValueError, match="valid languages: 'en', 'vi'"):
        err.message("de")
    assert get_language() == "en"


def test_format_location():
    assert format_location("./data/alpaca.jsonl", 18291) == "./data/alpaca.jsonl:18291"


# ---------------------------------------------------------------------------
# Every class: builtin bases, pickling, unknown codes, exports
# ---------------------------------------------------------------------------


def one_of_each() -> list[MintDimError]:
    return [
        PipelineValidationError(missing=["tokenizer", "output.dir"]),
        MintDimFileNotFoundError(context="tokenizer", path="./tokenizer/tokenizer.model"),
        SourceParseError(
            file="./data/a.jsonl", line=3, reason="invalid_utf8", detail="invalid start byte"
        ),
        SampleSchemaError(
            file="./data/a.jsonl",
            line=9,
            declared_fields=["prompt", "answer"],
            missing_fields=["answer"],
            available_keys=["prompt"],
        ),
        TokenizerValidationError.config(index=0, problem="path_not_string", got="int"),
        TokenizerValidationError.unsupported_format(
            index=0, path="./tokenizer/tokenizer.bin", method="hf_json"
        ),
        TokenizerSpecialTokenError(
            token="unk_id",
            path="./tokenizer/tokenizer.json",
            looked_for="model unk_token/unk_id, then tokens [UNK] and <unk>",
        ),
        TokenizerMappingError(file_count=3, got=2),
        FieldMappingError(file_count=3, got=2),
        TemplateMappingError(file_count=3, got=2),
        TemplateFieldMismatchError(
            file="./data/a.jsonl",
            fields=["a"],
            template="{a}{b}",
            field="b",
            problem="not_declared",
        ),
        TemplateTokenizerError(file_index=0, template="{a}→{b}", segment="→", unk_count=1),
        UnitMappingError(file_count=3, got=2, key="units.sizes"),
        OutputMappingError(file_count=3, got=2),
        UnitValidationError(key="units.sizes[0]", value=[256, 128], rule="ascending"),
        UnitOverflowError(**OVERFLOW),
        UnitPlanError(key="units.align", value=0, rule="positive_int"),
        OutputValidationError(directory="./out", problem="cannot_create", detail="read-only"),
        TokenDTypeValidationError(vocab_size=2**33, path="./tokenizer/tokenizer.json"),
        SamplesPerShardError.not_positive(index=1, value=-3),
        SamplesPerShardError.arity(file_count=2, got=3),
        TemplateSyntaxError(file_index=0, template="{a", position=0, problem="unmatched_open"),
        FieldValueTypeError(file="./data/a.jsonl", line=2, field="a", found_type="null"),
        TokenizerLoadError(
            path="./tokenizer/tokenizer.model", method="sentencepiece", detail="corrupt"
        ),
        TokenizerEncodeError(
            file="./data/a.jsonl", line=9, path="./tokenizer/tokenizer.json", detail="boom"
        ),
        UnknownPipelineError(name="foo", registered=["unit-build"]),
        OutputConflictError(
            directory="./out",
            setting="output.samples_per_shard",
            values=["100", "200"],
            files=["./data/a.jsonl", "./data/b.jsonl"],
        ),
        SourceValidationError(key="source.files", problem="empty"),
        RunOptionError(option="workers", value=-1, rule="positive_int"),
        WorkerError(detail="worker 0 died", exitcode=-9),
        BuildInterruptedError(signal_name="SIGTERM"),
        UnknownConfigKeyError(unknown={"units.foo": ["sizes", "build_batch"]}),
        ConfigValueError(key="output.dir", detail="missing", expected="./out"),
        DemoFileError(name="nope.jsonl", available=["a.jsonl"]),
        SweepOutputError(directory="multirun/x/0/build"),
    ]


def public_attributes(err: MintDimError) -> dict[str, object]:
    return {key: value for key, value in vars(err).items() if not key.startswith("_")}


def test_samples_cover_every_class():
    assert {type(err) for err in one_of_each()} == set(error_classes())


def test_error_classes_are_every_subclass_in_the_module():
    defined = {
        value
        for name, value in vars(errors).items()
        if isinstance(value, type)
        and issubclass(value, MintDimError)
        and value is not MintDimError
        and not name.startswith("_")  # private bases such as _MappingError are not errors
    }
    assert set(error_classes()) == defined - {errors.MappingError}
    assert len(error_classes()) == 33


def test_all_names_every_public_name():
    public = {name for name in vars(errors) if not name.startswith("_")}
    imported_modules_and_helpers = {
        "annotations",
        "errno",
        "inspect",
        "json",
        "os",
        "signal",
        "Any",
        "Bilingual",
        "ClassVar",
        "Iterable",
        "Iterator",
        "NamedTuple",
        "check_language",
        "dataclass",
        "field",
    }
    assert set(errors.__all__) == public - imported_modules_and_helpers
    for name in errors.__all__:
        assert hasattr(errors, name)


@pytest.mark.parametrize("err", one_of_each(), ids=lambda err: type(err).__name__)
def test_pickle_round_trip(err):
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is type(err)
    assert copy.message("en") == err.message("en")
    assert copy.message("vi") == err.message("vi")
    assert public_attributes(copy) == public_attributes(err)
    assert copy.args == err.args


@pytest.mark.parametrize("err", one_of_each(), ids=lambda err: type(err).__name__)
def test_every_message_starts_with_name_and_has_both_languages(err):
    name = type(err).__name__
    for lang in ("en", "vi"):
        text = err.message(lang)
        assert text.splitlines()[0] == f"{name}:"
        assert not text.endswith("\n")
    assert err.message("en") != err.message("vi")
    assert repr(err).startswith(f"{name}(")


def test_pickle_keeps_cwd_of_the_raising_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = MintDimFileNotFoundError(context="source", path="./data/train.jsonl")
    blob = pickle.dumps(err)
    monkeypatch.chdir(tmp_path.parent)
    copy = pickle.loads(blob)
    assert copy.cwd == str(tmp_path)
    assert copy.message("en") == err.message("en")


def _raise_overflow_in_worker() -> None:
    raise UnitOverflowError(**OVERFLOW)


def test_error_raised_in_worker_process_arrives_intact():
    with (
        concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool,
        pytest.raises(UnitOverflowError) as info,
    ):
        pool.submit(_raise_overflow_in_worker).result()
    assert info.value.token_count == 417
    assert info.value.message("vi") == UnitOverflowError(**OVERFLOW).message("vi")


@pytest.mark.parametrize(
    ("cls", "builtins"),
    [
        (PipelineValidationError, (ValueError,)),
        (MintDimFileNotFoundError, (FileNotFoundError, OSError)),
        (SourceParseError, (ValueError,)),
        (SampleSchemaError, (ValueError,)),
        (TokenizerValidationError, (ValueError,)),
        (TokenizerSpecialTokenError, (ValueError,)),
        (TokenizerMappingError, (ValueError,)),
        (FieldMappingError, (ValueError,)),
        (TemplateMappingError, (ValueError,)),
        (TemplateFieldMismatchError, (ValueError,)),
        (TemplateTokenizerError, (ValueError,)),
        (UnitMappingError, (ValueError,)),
        (OutputMappingError, (ValueError,)),
        (UnitValidationError, (ValueError,)),
        (UnitOverflowError, (ValueError,)),
        (OutputValidationError, (OSError,)),
        (TokenDTypeValidationError, (ValueError,)),
        (SamplesPerShardError, (ValueError,)),
        (TemplateSyntaxError, (ValueError,)),
        (FieldValueTypeError, (ValueError,)),
        (TokenizerLoadError, (ValueError,)),
        (UnknownPipelineError, (ValueError,)),
        (OutputConflictError, (ValueError,)),
        (SourceValidationError, (ValueError,)),
        (RunOptionError, (ValueError,)),
        (WorkerError, (RuntimeError,)),
        (BuildInterruptedError, (KeyboardInterrupt,)),
        (UnknownConfigKeyError, (ValueError,)),
        (ConfigValueError, (ValueError,)),
        (DemoFileError, (FileNotFoundError, OSError)),
        (SweepOutputError, (FileExistsError, OSError)),
    ],
)
def test_builtin_bases(cls, builtins):
    err = next(err for err in one_of_each() if type(err) is cls)
    assert isinstance(err, MintDimError)
    assert isinstance(err, Exception)
    for builtin in builtins:
        assert isinstance(err, builtin)
    assert str(err) == err.message("en")


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (
            lambda: SourceParseError(file="f", line=1, reason="bad_json"),
            "unknown SourceParseError.reason 'bad_json'",
        ),
        (
            lambda: TokenizerValidationError.config(index=0, problem="too_big"),
            "unknown TokenizerValidationError.problem 'too_big'",
        ),
        (
            lambda: TokenizerValidationError.unsupported_format(
                index=0, path="t.bin", method="tiktoken"
            ),
            "unknown tokenizer method 'tiktoken'",
        ),
        (
            lambda: TokenizerSpecialTokenError(token="bos_id", path="t", looked_for="x"),
            "unknown TokenizerSpecialTokenError.token 'bos_id'",
        ),
        (
            lambda: TemplateFieldMismatchError(
                file="f", fields=[], template="", field="a", problem="x"
            ),
            "unknown TemplateFieldMismatchError.problem 'x'",
        ),
        (
            lambda: UnitMappingError(file_count=2, got=3, key="dir"),
            "unknown UnitMappingError.key 'dir'",
        ),
        (
            lambda: UnitValidationError(key="units.sizes", value=1, rule="odd"),
            "unknown UnitValidationError.rule 'odd'",
        ),
        (
            lambda: OutputValidationError(directory="o", problem="full"),
            "unknown OutputValidationError.problem 'full'",
        ),
        (
            lambda: TemplateSyntaxError(file_index=0, template="", position=0, problem="x"),
            "unknown TemplateSyntaxError.problem 'x'",
        ),
        (
            lambda: TokenizerLoadError(path="t", method="bpe", detail=""),
            "unknown TokenizerLoadError.method 'bpe'",
        ),
        (
            lambda: SourceValidationError(key="source.files", problem="x"),
            "unknown SourceValidationError.problem 'x'",
        ),
        (
            lambda: RunOptionError(option="workers", value=0, rule="x"),
            "unknown RunOptionError.rule 'x'",
        ),
    ],
)
def test_unknown_codes_raise_value_error(build, match):
    with pytest.raises(ValueError, match=match):
        build()

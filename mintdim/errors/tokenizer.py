"""Errors of the tokenizer stage: loading, specials, the template against the vocabulary, encoding and parity."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    KINDS,
    MintDimError,
    _bullets,
    _choice,
    _quoted,
    _say,
    format_location,
    sample_heading,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "TemplateTokenizerError",
    "TokenDTypeValidationError",
    "TokenizerEncodeError",
    "TokenizerLoadError",
    "TokenizerParityError",
    "TokenizerSpecialTokenError",
    "TokenizerValidationError",
]


class TokenizerValidationError(MintDimError, ValueError):
    """Raised when a tokenizer config is malformed or its file format is unsupported.

    Create it with :meth:`config` (structural config problem) or :meth:`unsupported_format`
    (file extension does not match the method).
    """

    _SPECIAL = Bilingual(
        "unk_id and pad_id are loaded from the tokenizer library.",
        "unk_id và pad_id được lấy từ thư viện tokenizer.",
    )
    _OPTIONS = Bilingual(
        "The allowed keys are path, engine, encode, append_eos, pad_fallback, unk_fallback "
        "and parity.",
        "Các key được phép: path, engine, encode, append_eos, pad_fallback, unk_fallback "
        "và parity.",
    )
    _CONFIG_PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "not_dict": Bilingual(
            "tokenizer config must be a dict, got {got}.",
            "config tokenizer phải là dict, hiện tại là {got}.",
        ),
        "missing_path": Bilingual(
            "tokenizer config is missing the required key: path.",
            "config tokenizer thiếu key bắt buộc: path.",
        ),
        "path_not_string": Bilingual(
            "tokenizer config key path must be a string, got {got}.",
            "key path trong config tokenizer phải là string, hiện tại là {got}.",
        ),
        "unknown_keys": Bilingual(
            "tokenizer config has unknown keys: {got!r}. {tail}",
            "config tokenizer có key không hợp lệ: {got!r}. {tail}",
        ),
        "bad_option": Bilingual(
            "tokenizer config key {option} has an invalid value: {got!r}.",
            "key {option} trong config tokenizer có giá trị không hợp lệ: {got!r}.",
        ),
        "parity_not_dict": Bilingual(
            'tokenizer config key parity must be a mapping such as {{"first_rows": 512, '
            '"every": 512}}, got {got!r}.',
            'key parity trong config tokenizer phải là một mapping, ví dụ {{"first_rows": 512, '
            '"every": 512}}, hiện tại là {got!r}.',
        ),
        "parity_unknown_keys": Bilingual(
            "tokenizer config key parity has unknown keys: {got!r}. Its keys are first_rows "
            "and every.",
            "key parity trong config tokenizer có key không hợp lệ: {got!r}. Các key của nó là "
            "parity.first_rows và parity.every.",
        ),
        "parity_first_rows": Bilingual(
            "tokenizer config key parity.first_rows must be a whole number, 0 or more "
            "(0: no first rows checked), got {got!r}.",
            "key parity.first_rows trong config tokenizer phải là số nguyên từ 0 trở lên "
            "(0: không kiểm tra các hàng đầu), hiện tại là {got!r}.",
        ),
        "parity_every": Bilingual(
            "tokenizer config key parity.every must be a whole number, 1 or more "
            "(1: every row checked), got {got!r}.",
            "key parity.every trong config tokenizer phải là số nguyên từ 1 trở lên "
            "(1: kiểm tra mọi hàng), hiện tại là {got!r}.",
        ),
    }
    _METHODS: ClassVar[dict[str, str]] = {"sentencepiece": ".model", "hf_json": ".json"}

    component: str = _choice(("config", "format"))
    problem: str = _choice((*_CONFIG_PROBLEMS, "unsupported_format"))
    index: int
    path: str | None = None
    method: str | None = None
    got: object = None
    option: str | None = None

    examples = (
        {"component": "config", "problem": "unknown_keys", "index": 0, "got": ["pad_id"]},
        {
            "component": "config",
            "problem": "bad_option",
            "index": 0,
            "got": "turbo",
            "option": "engine",
        },
        {
            "component": "config",
            "problem": "bad_option",
            "index": 0,
            "got": "tokens",
            "option": "encode",
        },
        {
            "component": "config",
            "problem": "parity_every",
            "index": 0,
            "got": 0,
            "option": "parity.every",
        },
        {
            "component": "format",
            "problem": "unsupported_format",
            "index": 0,
            "path": "./tokenizer/tokenizer.json",
            "method": "sentencepiece",
        },
    )

    def _check(self) -> None:
        is_config = self.problem in self._CONFIG_PROBLEMS
        if is_config != (self.component == "config"):
            raise ValueError(
                f"problem {self.problem!r} does not belong to component {self.component!r}"
            )
        if not is_config and self.method not in self._METHODS:
            raise ValueError(
                f"unknown tokenizer method {self.method!r}; valid: {', '.join(self._METHODS)}"
            )

    @classmethod
    def config(cls, *, index: int, problem: str, got: object = None) -> TokenizerValidationError:
        """A structural problem in tokenizer config ``index``.

        ``problem``: "not_dict" (got = type name), "missing_path", "path_not_string"
        (got = type name) or "unknown_keys" (got = sorted list of key names).
        """
        return cls(component="config", problem=problem, index=index, got=got)

    @classmethod
    def bad_option(cls, *, index: int, key: str, got: object) -> TokenizerValidationError:
        """Tokenizer config ``index`` gives option ``key`` a value it cannot take."""
        return cls(component="config", problem="bad_option", index=index, got=got, option=key)

    @classmethod
    def bad_parity(
        cls, *, index: int, problem: str, got: object, option: str = "parity"
    ) -> TokenizerValidationError:
        """Tokenizer config ``index`` gives the parity guard a setting it cannot take:
        ``problem`` is "parity_not_dict", "parity_unknown_keys", "parity_first_rows" or
        "parity_every"."""
        return cls(component="config", problem=problem, index=index, got=got, option=option)

    @classmethod
    def unsupported_format(cls, *, index: int, path: str, method: str) -> TokenizerValidationError:
        """Tokenizer ``index`` at ``path`` is not a file ``method`` can load."""
        return cls(
            component="format", problem="unsupported_format", index=index, path=path, method=method
        )

    @property
    def summary(self) -> Bilingual:
        if self.component == "config":
            return Bilingual("Invalid tokenizer config.", "Cấu hình tokenizer không hợp lệ.")
        return Bilingual("Unsupported tokenizer format.", "Định dạng tokenizer chưa được hỗ trợ.")

    def _sections(self) -> Iterator[Any]:
        if self.component == "config":
            yield Bilingual("Component", "Thành phần"), "config"
            special = isinstance(self.got, list) and bool({"unk_id", "pad_id"} & set(self.got))
            tail = self._SPECIAL if special else self._OPTIONS
            yield _H.PROBLEM, _say(self._CONFIG_PROBLEMS[self.problem], tail=tail)
            yield (
                _H.RULES,
                Bilingual(
                    "- config must be a dict with key: path\n- path must be a string\n"
                    "- unk_id and pad_id are loaded from the tokenizer library",
                    "- config phải là dict có key: path\n- path phải là string\n"
                    "- unk_id và pad_id được lấy từ thư viện tokenizer",
                ),
            )
        else:
            yield (
                Bilingual("Supported formats", "Các định dạng hiện hỗ trợ"),
                "- sentencepiece (.model)",
                "- huggingface tokenizer (.json)",
            )
            yield "File", self.path
            expects = _say(
                Bilingual(
                    ".tokenizer.{method} expects a {extension} file",
                    ".tokenizer.{method} cần file {extension}",
                ),
                extension=self._METHODS[self.method],
            )
            use_other = [
                _say(
                    Bilingual(
                        "for a {extension} file use .tokenizer.{other}",
                        "với file {extension} hãy dùng .tokenizer.{other}",
                    ),
                    extension=extension,
                    other=other,
                )
                for other, extension in self._METHODS.items()
                if other != self.method and str(self.path).lower().endswith(extension)
            ]
            yield _H.METHOD, expects, *use_other
        yield _H.TOKENIZER_INDEX, self.index
        if self.component == "config":
            yield (
                Bilingual("Options", "Tùy chọn"),
                Bilingual(
                    '- engine: "reference" (the default: the tokenizer\'s own library) or "fast" '
                    "(gigatoken, parity-checked against the reference while it runs)\n"
                    '- encode: "whole" or "segments" (stores segment spans)\n'
                    "- append_eos: true or false\n"
                    '- pad_fallback: "eos", "unk" or a token of the tokenizer, used only when '
                    "the library has no PAD\n"
                    '- unk_fallback: "eos", a token of the tokenizer, or "none", used only when '
                    "the library has no UNK\n"
                    "- parity: the fast engine's guard, a mapping of first_rows (whole number, 0 "
                    "or more, default 512) and every (whole number, 1 or more, default 512)",
                    '- engine: "reference" (mặc định: thư viện của chính tokenizer) hoặc "fast" '
                    "(gigatoken, được đối chiếu với engine tham chiếu trong lúc chạy)\n"
                    '- encode: "whole" hoặc "segments" (lưu span của segment)\n'
                    "- append_eos: true hoặc false\n"
                    '- pad_fallback: "eos", "unk" hoặc một token của tokenizer, chỉ dùng khi '
                    "thư viện không có PAD\n"
                    '- unk_fallback: "eos", một token của tokenizer, hoặc "none", chỉ dùng khi '
                    "thư viện không có UNK\n"
                    "- parity: bộ kiểm tra của engine fast, một mapping gồm parity.first_rows (số "
                    "nguyên từ 0, mặc định 512) và parity.every (số nguyên từ 1, mặc định 512)",
                ),
            )


class TokenizerSpecialTokenError(MintDimError, ValueError):
    """Raised when the tokenizer library exposes no valid UNK, PAD or (for ``append_eos``) EOS
    id, and no declared fallback provides one."""

    _WHY: ClassVar[dict[str, Bilingual]] = {
        "unk_id": Bilingual(
            "UNK is used to count unknown tokens", "UNK dùng để thống kê token không xác định"
        ),
        "pad_id": Bilingual(
            "PAD fills every sample up to its unit size",
            "PAD dùng để đệm mỗi mẫu cho đủ kích thước unit",
        ),
        "eos_id": Bilingual(
            "append_eos ends every sample with it", "append_eos thêm nó vào cuối mỗi mẫu"
        ),
    }
    _WAY_OUT: ClassVar[dict[str, Bilingual]] = {
        "unk_id": Bilingual(
            'or set unk_fallback: "eos", a token of this tokenizer, or "none" (a tokenizer that '
            "cannot produce UNK: the UNK tier is turned off)",
            'hoặc đặt unk_fallback: "eos", một token của tokenizer này, hoặc "none" (tokenizer '
            "không thể sinh UNK: tắt tầng UNK)",
        ),
        "pad_id": Bilingual(
            'or set pad_fallback: "eos", "unk" or a token of this tokenizer (used only because '
            "the library has no PAD)",
            'hoặc đặt pad_fallback: "eos", "unk" hoặc một token của tokenizer này (chỉ dùng vì '
            "thư viện không có PAD)",
        ),
        "eos_id": Bilingual(
            "or remove append_eos from the tokenizer config",
            "hoặc bỏ append_eos khỏi config tokenizer",
        ),
    }

    token: str = _choice(_WHY)
    path: str
    looked_for: list[str]
    """Where the library was asked, in order (``sp.pad_id() = -1``, ``padding.pad_id``, ``token
    [PAD]`` ...)."""
    option: str | None = None
    """The option that needed the id or was to provide it (append_eos, pad_fallback ...)."""
    fallback: str | None = None
    """The declared fallback value that did not resolve, if any."""

    summary = Bilingual(
        "Tokenizer library did not expose a required special token.",
        "Thư viện tokenizer không cung cấp special token bắt buộc.",
    )
    examples = (
        {
            "token": "pad_id",
            "path": "./tokenizer/tokenizer.model",
            "looked_for": ["sp.pad_id() = -1"],
        },
        {
            "token": "pad_id",
            "path": "./tokenizer/tokenizer.json",
            "looked_for": ["padding.pad_id", "token [PAD]", "token <pad>"],
            "option": "pad_fallback",
            "fallback": "<|pad|>",
        },
        {
            "token": "eos_id",
            "path": "./tokenizer/spiece.model",
            "looked_for": ["sp.eos_id() = -1"],
            "option": "append_eos",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "Special token", self.token
        yield "Tokenizer", self.path
        yield Bilingual("Looked for, in order", "Đã tìm, theo thứ tự"), *_bullets(self.looked_for)
        if self.fallback is not None:
            yield (
                Bilingual("Fallback", "Fallback"),
                _say(
                    Bilingual(
                        "{option} {fallback!r} names nothing this tokenizer has",
                        "{option} {fallback!r} không trỏ tới thứ gì tokenizer này có",
                    )
                ),
            )
        yield (
            _H.FIX,
            _say(
                Bilingual(
                    "use a tokenizer that defines {token} ({why})",
                    "dùng tokenizer có định nghĩa {token} ({why})",
                ),
                why=self._WHY[self.token],
            ),
            self._WAY_OUT[self.token],
            Bilingual(
                "MintDim never modifies the tokenizer and does not accept a raw {token}",
                "MintDim không bao giờ sửa tokenizer và không nhận {token} dạng số do người dùng "
                "khai báo",
            ),
        )


class TemplateTokenizerError(MintDimError, ValueError):
    """Raised before any data is read when a template's literal text encodes to UNK."""

    file_index: int
    template: str
    segment: str
    unk_count: int

    summary = Bilingual(
        "Template static parts produce UNK when encoded by the tokenizer.",
        "Phần literal của template tạo UNK khi tokenize.",
    )
    examples = ({"file_index": 0, "template": "{a}\n\n{b}", "segment": "\n\n", "unk_count": 2},)

    def _sections(self) -> Iterator[Any]:
        yield _H.FILE_INDEX, self.file_index
        yield "Template", _quoted(self.template)
        yield (
            _H.PROBLEM,
            Bilingual(
                "template literal characters are not fully covered by tokenizer vocabulary",
                "ký tự literal trong template không được tokenizer bao phủ",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "adjust template literal characters or use a tokenizer that covers them",
                "chỉnh ký tự literal hoặc dùng tokenizer bao phủ được",
            ),
        )
        quoted, escaped = _quoted(self.segment), json.dumps(self.segment)
        # Invisible or look-alike characters are a common cause; show their escapes.
        escapes = (
            []
            if escaped == quoted
            else [_say(Bilingual("escaped: {escaped}", "dạng escape: {escaped}"), escaped=escaped)]
        )
        yield (
            Bilingual("Literal segment", "Đoạn literal"),
            quoted,
            *escapes,
            Bilingual("UNK tokens: {unk_count}", "Số token UNK: {unk_count}"),
        )


class TokenDTypeValidationError(MintDimError, ValueError):
    """Raised when the tokenizer's vocabulary does not fit uint32 token storage."""

    vocab_size: int
    path: str

    summary = Bilingual(
        "Tokenizer vocabulary is too large for supported token dtypes.",
        "Vocab của tokenizer quá lớn so với dtype token được hỗ trợ.",
    )
    examples = ({"vocab_size": 2**32 + 1, "path": "./tokenizer/tokenizer.json"},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Supported dtypes", "Các dtype hiện hỗ trợ"), "- uint16", "- uint32"
        yield Bilingual("Vocabulary size", "Kích thước vocab"), self.vocab_size
        yield "Tokenizer", self.path
        yield (
            _H.FIX,
            Bilingual(
                "uint32 stores vocabularies of up to 4294967295 tokens; use a tokenizer with a smaller vocabulary",
                "uint32 chứa được vocab tối đa 4294967295 token; hãy dùng tokenizer có vocab nhỏ hơn",
            ),
        )


class TokenizerLoadError(MintDimError, ValueError):
    """Raised when the tokenizer library cannot load the file (corrupt or not a tokenizer)."""

    _FIXES: ClassVar[dict[str, Bilingual]] = {
        "sentencepiece": Bilingual(
            "check that the file is a complete SentencePiece model (.model) that sentencepiece can load",
            "kiểm tra file là model SentencePiece (.model) đầy đủ mà sentencepiece đọc được",
        ),
        "hf_json": Bilingual(
            "check that the file is a complete Hugging Face tokenizer.json that tokenizers.Tokenizer.from_file can load",
            "kiểm tra file là tokenizer.json Hugging Face đầy đủ mà tokenizers.Tokenizer.from_file đọc được",
        ),
    }

    path: str
    method: str = _choice(_FIXES)
    detail: str

    summary = Bilingual(
        "Tokenizer library could not load the tokenizer file.",
        "Thư viện tokenizer không đọc được file tokenizer.",
    )
    examples = (
        {
            "path": "./tokenizer/tokenizer.model",
            "method": "sentencepiece",
            "detail": "Internal: could not parse ModelProto from ./tokenizer/tokenizer.model",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield "Tokenizer", self.path
        yield _H.METHOD, f".tokenizer.{self.method}"
        yield _H.LIBRARY_ERROR, self.detail
        yield _H.FIX, self._FIXES[self.method]


class TokenizerEncodeError(MintDimError, RuntimeError):
    """Raised when the tokenizer library fails while encoding one sample's rendered text."""

    file: str
    line: int
    path: str
    detail: str

    summary = Bilingual(
        "Tokenizer library failed to encode a sample.",
        "Thư viện tokenizer không tokenize được một mẫu.",
    )
    examples = (
        {
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "path": "./tokenizer/tokenizer.json",
            "detail": "Exception: encoding failed",
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.SAMPLE, format_location(self.file, self.line)
        yield "Tokenizer", self.path
        yield _H.LIBRARY_ERROR, self.detail
        yield (
            _H.FIX,
            Bilingual(
                "check this sample's text, or use a tokenizer that can encode it; "
                "MintDim never skips or truncates a sample",
                "kiểm tra nội dung mẫu này, hoặc dùng tokenizer tokenize được nó; "
                "MintDim không bao giờ bỏ qua hay cắt bớt mẫu",
            ),
        )


class TokenizerParityError(MintDimError, RuntimeError):
    """Raised when the fast engine's ids for a text differ from the reference library's.

    The parity guard compares them at validation (the bundled parity corpus and the first rows
    of the data, ``parity.first_rows``) and during the build (one row in ``parity.every``, by
    line number); the build stops at the first difference and writes no manifest.
    """

    _FOUND: ClassVar[dict[str, Bilingual]] = {
        "parity_corpus": Bilingual(
            "at validation, in MintDim's bundled parity corpus",
            "khi kiểm tra cấu hình, trong bộ văn bản đối chiếu đi kèm MintDim",
        ),
        "first_rows": Bilingual(
            "at validation, in the first rows of your data (parity.first_rows)",
            "khi kiểm tra cấu hình, trong các hàng đầu tiên của dữ liệu của bạn "
            "(parity.first_rows)",
        ),
        "build": Bilingual(
            "during the build, in a row re-encoded by the reference library",
            "trong lúc build, ở một dòng được thư viện tham chiếu tokenize lại",
        ),
    }

    stage: str = _choice(_FOUND)
    file: str
    line: int
    path: str
    engine_version: str
    position: int
    """Index of the first token that differs (or where one sequence ends)."""
    window_start: int
    """Index of the first token shown in ``reference`` and ``fast``."""
    reference: list[int]
    fast: list[int]
    kind: str = _choice(KINDS, "jsonl")
    """``parquet``: ``line`` is the input's row."""

    summary = Bilingual(
        "The fast engine's token ids differ from the reference library's.",
        "Token id của engine nhanh khác với thư viện tham chiếu.",
    )
    examples = (
        {
            "stage": "build",
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "path": "./tokenizer/tokenizer.json",
            "engine_version": "gigatoken 0.10.0",
            "position": 7,
            "window_start": 0,
            "reference": [1212, 318, 257, 1332, 13, 198, 198, 21017, 220, 50256],
            "fast": [1212, 318, 257, 1332, 13, 198, 198, 50256, 220, 50256],
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield sample_heading(self.kind), format_location(self.file, self.line)
        yield "Tokenizer", self.path
        yield Bilingual("Found", "Phát hiện"), self._FOUND[self.stage]
        yield (
            Bilingual("First difference", "Khác biệt đầu tiên"),
            Bilingual("token {position}", "token thứ {position}"),
        )
        shown = Bilingual("from token {window_start}: {ids}", "từ token thứ {window_start}: {ids}")
        yield (
            Bilingual("Reference library", "Thư viện tham chiếu"),
            _say(shown, ids=self.reference),
        )
        yield (
            Bilingual("Fast engine ({engine_version})", "Engine nhanh ({engine_version})"),
            _say(shown, ids=self.fast),
        )
        yield (
            _H.FIX,
            Bilingual(
                '- switch to the reference engine: {{"path": ..., "engine": "reference"}} in '
                "Python, tokenizer.engine=reference with the runner (or leave engine out: "
                "reference is the default)\n"
                "- nothing was finished: no manifest.json was written\n"
                "- please report this sample with the tokenizer file and the engine version",
                '- chuyển sang engine tham chiếu: {{"path": ..., "engine": "reference"}} trong '
                "Python, tokenizer.engine=reference với runner (hoặc bỏ key engine: mặc định là "
                "reference)\n"
                "- chưa có gì hoàn tất: manifest.json không được ghi\n"
                "- hãy báo lại mẫu này kèm file tokenizer và phiên bản engine",
            ),
        )

"""Tokenizer checks before any data is read: config shape, file format, dtype, and the template contract.

Tier 1 of the UNK contract lives here: every literal segment of every template is encoded on its
own, and a UNK there is a configuration error (``TemplateTokenizerError``). A segment that
vanishes (encodes to no tokens at all) only earns a ``TemplateLiteralWarning``, because the build
is still exact. A segment the tokenizer merely normalises (lower case, stripped accents, spaces
around punctuation, a newline read as a space) still reaches the shards and earns nothing: nearly
every real tokenizer normalises, and a warning that always fires teaches users to ignore it.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import get_args

import numpy as np

from mintdim.build.contracts import ParityGuard, Template, TokenizerSpec, token_dtype_for
from mintdim.build.tokenizer import Encoder, FastEngineUnavailable, load_encoder
from mintdim.errors import (
    MintDimFileNotFoundError,
    TemplateTokenizerError,
    TokenDTypeValidationError,
    TokenizerValidationError,
)
from mintdim.paths import resolve
from mintdim.shared.lang import Bilingual
from mintdim.shared.log import MintDimWarning, get_logger, show
from mintdim.shared.types import ENCODE_MODES, Engine, TokenizerKind

__all__ = [
    "TemplateLiteralWarning",
    "check_template_literals",
    "check_vocab",
    "load_with_engine",
    "tokenizer_spec",
]

_log = get_logger("unit-build")

_EXTENSIONS: dict[str, str] = {"sentencepiece": ".model", "hf_json": ".json"}
_KEYS = ("path", "engine", "encode", "append_eos", "pad_fallback", "unk_fallback", "parity")
"""Every key a tokenizer config may hold; raw ``pad_id``/``unk_id`` stay refused."""


class TemplateLiteralWarning(MintDimWarning):
    """A template literal that encodes to no tokens: the shards hold nothing for it."""


VANISHED = Bilingual(
    en="[unit-build:warning] template of {files} ({template}): literal segment {segment} "
    "encodes to no tokens: the tokenizer's normalisation removes it, so the shards hold nothing "
    "for it. The build continues.",
    vi="[unit-build:warning] template của {files} ({template}): đoạn literal {segment} "
    "không tạo ra token nào: bước chuẩn hoá của tokenizer xoá nó, nên shard không chứa gì cho "
    "đoạn này. Build vẫn tiếp tục.",
)
FAST_UNAVAILABLE = Bilingual(
    en='[unit-build] tokenizer {path}: engine "fast" cannot run: {reason}. The reference engine '
    "({version}) encodes instead: the same ids, at the library's own speed.",
    vi='[unit-build] tokenizer {path}: engine "fast" không chạy được: {reason}. Engine tham '
    "chiếu ({version}) tokenize thay: cùng token id, với tốc độ của chính thư viện.",
)
FILE = Bilingual(en="file {indexes}", vi="file {indexes}")
FILES = Bilingual(en="files {indexes}", vi="file {indexes}")


def tokenizer_spec(config: object, kind: TokenizerKind, index: int) -> TokenizerSpec:
    """Check one ``{"path": ..., <options>}`` dict and resolve its file, without loading it."""
    if not isinstance(config, Mapping):
        raise TokenizerValidationError.config(
            index=index, problem="not_dict", got=type(config).__name__
        )
    unknown = sorted(str(key) for key in config if key not in _KEYS)
    if unknown:
        raise TokenizerValidationError.config(index=index, problem="unknown_keys", got=unknown)
    if "path" not in config:
        raise TokenizerValidationError.config(index=index, problem="missing_path")
    path = config["path"]
    if not isinstance(path, str):
        raise TokenizerValidationError.config(
            index=index, problem="path_not_string", got=type(path).__name__
        )
    if not path.lower().endswith(_EXTENSIONS[kind]):
        raise TokenizerValidationError.unsupported_format(index=index, path=path, method=kind)
    abs_path = resolve(path, f"tokenizer[{index}].path")
    if not abs_path.is_file():
        raise MintDimFileNotFoundError(context="tokenizer", path=path)
    engine = "reference" if config.get("engine") is None else config["engine"]
    if engine not in get_args(Engine):
        raise TokenizerValidationError.bad_option(index=index, key="engine", got=engine)
    return TokenizerSpec(
        kind=kind,
        path=path,
        abs_path=str(abs_path),
        engine=engine,
        parity=_parity_guard(config.get("parity"), index),
        **_options(config, index),
    )


_PARITY_LEAST = {"first_rows": 0, "every": 1}
"""The parity guard's keys, each with the least whole number it takes."""


def _parity_guard(config: object, index: int) -> ParityGuard:
    """The ``parity`` key: absent (or None) for the defaults, else a mapping of whole numbers."""
    if config is None:
        return ParityGuard()
    if not isinstance(config, Mapping):
        raise TokenizerValidationError.bad_parity(
            index=index, problem="parity_not_dict", got=config
        )
    unknown = sorted(str(key) for key in config if key not in _PARITY_LEAST)
    if unknown:
        raise TokenizerValidationError.bad_parity(
            index=index, problem="parity_unknown_keys", got=unknown
        )
    for key, least in _PARITY_LEAST.items():
        value = config.get(key, least)
        # bool is an int to Python, never a count to a user; numpy integers are counts.
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
            raise TokenizerValidationError.bad_parity(
                index=index, problem=f"parity_{key}", got=value, option=f"parity.{key}"
            )
    return ParityGuard(**{key: int(value) for key, value in config.items()})


_SFT_KEYS = ("encode", "append_eos", "pad_fallback", "unk_fallback")


def _options(config: Mapping, index: int) -> dict[str, object]:
    """The opt-in SFT keys, checked for type and value (their meaning needs the loaded file)."""
    options = {key: config[key] for key in _SFT_KEYS if config.get(key) is not None}
    encode = options.get("encode")
    if encode is not None and encode not in ENCODE_MODES:
        raise TokenizerValidationError.bad_option(index=index, key="encode", got=encode)
    if not isinstance(options.get("append_eos", False), bool):
        raise TokenizerValidationError.bad_option(
            index=index, key="append_eos", got=options["append_eos"]
        )
    for key in ("pad_fallback", "unk_fallback"):
        value = options.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise TokenizerValidationError.bad_option(index=index, key=key, got=value)
    if options.get("pad_fallback") == "none":
        raise TokenizerValidationError.bad_option(index=index, key="pad_fallback", got="none")
    return options


def load_with_engine(spec: TokenizerSpec) -> tuple[TokenizerSpec, Encoder, str | None]:
    """Load a tokenizer with its declared engine: ``(spec as run, encoder, fallback reason)``.

    When the fast engine cannot run here it says why, once, and the returned spec names the
    reference engine, so worker processes that reload it (spawn) load what validation loaded.
    """
    try:
        return spec, load_encoder(spec), None
    except FastEngineUnavailable as why:
        encoder = why.reference
        show(
            _log,
            FAST_UNAVAILABLE,
            logging.WARNING,
            path=spec.path,
            reason=why.explain(),
            version=encoder.engine_version,
        )
        return replace(spec, engine="reference"), encoder, why.reason


def check_vocab(encoder: Encoder) -> str:
    """The shard dtype name for the encoder's ids, or ``TokenDTypeValidationError``."""
    # A padding section may name a PAD id outside the vocabulary; shards must still hold it.
    specials = (encoder.pad_id, encoder.unk_id, encoder.eos_id)
    largest = max(encoder.vocab_size, *(i + 1 for i in specials if i is not None))
    dtype = token_dtype_for(largest)
    if dtype is None:
        raise TokenDTypeValidationError(vocab_size=largest, path=encoder.spec.path)
    return dtype


def check_template_literals(encoder: Encoder, template: Template, file_indexes: list[int]) -> None:
    """Encode each literal segment alone: UNK fails the build, a segment that vanishes warns.

    ``file_indexes`` are every file read with this template and tokenizer: one check, and at
    most one warning per segment, however many files share them.
    """
    for segment in dict.fromkeys(template.literals):
        if not segment:
            continue
        ids = encoder.encode(segment)
        unk_count = ids.count(encoder.unk_id) if encoder.unk_id is not None else 0
        if unk_count:
            raise TemplateTokenizerError(
                file_index=file_indexes[0],
                template=template.source,
                segment=segment,
                unk_count=unk_count,
            )
        if not ids:
            # stacklevel: the user's run() call, so their module's warning filters apply.
            warnings.warn(_vanished(template, file_indexes, segment), stacklevel=4)


def _vanished(template: Template, file_indexes: list[int], segment: str) -> TemplateLiteralWarning:
    return TemplateLiteralWarning(
        VANISHED.render(
            files=(FILES if len(file_indexes) > 1 else FILE).render(
                indexes=", ".join(str(i) for i in file_indexes)
            ),
            template=_quoted(template.source),
            segment=_quoted(segment),
        )
    )


def _quoted(text: str) -> str:
    """``"### Câu hỏi:\\n"``: escapes for control characters, every letter as itself."""
    return json.dumps(text, ensure_ascii=False)

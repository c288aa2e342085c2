"""Tokenizers: exact encodings (no special tokens, no padding or truncation from the file), special
ids read from the library and where they came from, dtype selection, and untouched files.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from tokenizers import Tokenizer

from mintdim import TemplateLiteralWarning, errors
from mintdim.build.tokenizer.hf_json import HFJsonEncoder
from mintdim.read.reader import open_build
from tests.conftest import corpora_file
from tests.unit_build.helpers import (
    Expected,
    file_sha256,
    job,
    read_json,
    read_jsonl,
    reference_encoder,
    verify_build,
    write_jsonl,
    write_word_level,
)

TEXTS = [
    "the model is a unit",
    "Viet Nam xin chao",
    "",
    "data token {x} 42\n\n###",
    "the the the the the the the the the the the the the the the the the the the the",
    "中文 and emoji 🎉 are not in the vocabulary",
]


def _build_texts(tokenizer: Path, texts: list[str], sizes: list[int], **kwargs):
    write_jsonl("data/a.jsonl", [{"text": t} for t in texts])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TemplateLiteralWarning)
        result = job(["./data/a.jsonl"], tokenizer, sizes=[sizes], **kwargs).run(workers=1)
    expected = [Expected("./data/a.jsonl", i, t) for i, t in enumerate(texts, start=1)]
    return result, expected


def _fit(encode, texts: list[str]) -> list[int]:
    longest = max(len(encode(t)) for t in texts)
    return [8, 32, max(longest, 33)]


# ---------------------------------------------------------------------------
# Exact tokens
# ---------------------------------------------------------------------------


def test_sentencepiece_records_are_the_plain_encoding_without_bos_eos(cwd, sp_model):
    processor = spm.SentencePieceProcessor(model_file=str(sp_model))
    assert (processor.bos_id(), processor.eos_id()) == (2, 3)
    encode = reference_encoder(str(sp_model))
    sizes = _fit(encode, TEXTS)
    _build_texts(sp_model, TEXTS, sizes)
    build = verify_build("out", _build_texts_expected(TEXTS), encode, sizes, 100, pad_id=0)
    for row in build.samples():
        tokens = build.tokens(row)
        assert 2 not in tokens and 3 not in tokens
    manifest = read_json("out/manifest.json")
    assert manifest["tokenizer"]["add_special_tokens"] is False


def _build_texts_expected(texts: list[str]) -> list[Expected]:
    return [Expected("./data/a.jsonl", i, t) for i, t in enumerate(texts, start=1)]


def test_hf_json_records_are_the_plain_encoding(cwd, hf_json):
    encode = reference_encoder(str(hf_json))
    sizes = _fit(encode, TEXTS)
    _build_texts(hf_json, TEXTS, sizes)
    verify_build("out", _build_texts_expected(TEXTS), encode, sizes, 100, pad_id=0)


@pytest.mark.corpora
def test_post_processor_special_tokens_are_not_added(cwd):
    """bert-base-uncased wraps encodings in [CLS] ... [SEP] unless add_special_tokens=False."""
    path = corpora_file("tokenizers/bert-base-uncased.tokenizer.json")
    library = Tokenizer.from_file(str(path))
    cls, sep = library.token_to_id("[CLS]"), library.token_to_id("[SEP]")
    assert library.encode("the model").ids[0] == cls
    texts = ["the model", "hello world, this is a test."]
    encode = reference_encoder(str(path))
    _build_texts(path, texts, [16])
    build = verify_build("out", _build_texts_expected(texts), encode, [16], 100, pad_id=0)
    for row in build.samples():
        assert cls not in build.tokens(row) and sep not in build.tokens(row)


@pytest.mark.corpora
def test_padding_and_truncation_in_the_file_are_ignored(cwd):
    path = corpora_file("tokenizers/all-MiniLM-L6-v2.tokenizer.json")
    before = file_sha256(path)
    library = Tokenizer.from_file(str(path))
    assert library.padding["length"] == 128 and library.truncation["max_length"] == 128
    long_text = " ".join(["the model is a unit of data"] * 40)
    assert len(library.encode(long_text).ids) == 128  # the library alone cuts to 128
    assert len(library.encode("short").ids) == 128  # and pads to 128
    encode = reference_encoder(str(path))
    assert len(encode(long_text)) > 200
    texts = ["short", long_text]
    _build_texts(path, texts, [8, 128, 512])
    build = verify_build("out", _build_texts_expected(texts), encode, [8, 128, 512], 100, pad_id=0)
    rows = list(build.samples())
    assert [r["token_count"] for r in rows] == [len(encode("short")), len(encode(long_text))]
    assert rows[0]["token_count"] < 8 and rows[1]["token_count"] > 128
    assert rows[1]["unit_size"] == 512
    assert file_sha256(path) == before


@pytest.mark.parametrize("fixture", ["sp_model", "hf_json"])
def test_tokenizer_file_is_unchanged(cwd, request, fixture):
    path = request.getfixturevalue(fixture)
    before = (file_sha256(path), path.stat().st_mtime_ns)
    _build_texts(path, TEXTS[:2], [64])
    assert (file_sha256(path), path.stat().st_mtime_ns) == before


def test_padding_section_pad_id_wins_over_the_pad_token(cwd, hf_json):
    tokenizer = Tokenizer.from_file(str(hf_json))
    pad = tokenizer.token_to_id("the")
    tokenizer.enable_padding(pad_id=pad, pad_token="the", length=64)
    tokenizer.enable_truncation(max_length=3)
    tokenizer.save("padded.json")
    texts = ["a data token model unit sample", "x"]
    _build_texts(Path("padded.json"), texts, [16])
    manifest = read_json("out/manifest.json")
    assert (manifest["tokenizer"]["pad_id"], manifest["tokenizer"]["pad_id_source"]) == (
        pad,
        "padding.pad_id",
    )
    verify_build(
        "out", _build_texts_expected(texts), reference_encoder(str(hf_json)), [16], 100, pad_id=pad
    )


def test_vocab_size_counts_added_tokens(cwd, hf_json):
    tokenizer = Tokenizer.from_file(str(hf_json))
    base = tokenizer.get_vocab_size(with_added_tokens=True)
    tokenizer.add_tokens(["<extra_one>", "<extra_two>"])
    tokenizer.save("added.json")
    texts = ["the <extra_two> model"]
    _build_texts(Path("added.json"), texts, [16])
    manifest = read_json("out/manifest.json")
    assert manifest["tokenizer"]["vocab_size"] == base + 2
    build = open_build("out")
    row = next(build.samples())
    assert (
        build.tokens(row).tolist()
        == Tokenizer.from_file("added.json")
        .encode("the <extra_two> model", add_special_tokens=False)
        .ids
    )
    assert base + 1 in build.tokens(row)


# ---------------------------------------------------------------------------
# Special ids, their sources, dtype
# ---------------------------------------------------------------------------

ACCEPTED = [
    ("albert-base-v2.spiece.model", 30000, 1, "sp.unk_id()", 0, "sp.pad_id()", "uint16"),
    ("chatglm-6b.ice_text.model", 130344, 0, "sp.unk_id()", 3, "sp.pad_id()", "uint32"),
    (
        "all-MiniLM-L6-v2.tokenizer.json",
        30522,
        100,
        "model.unk_token '[UNK]'",
        0,
        "padding.pad_id",
        "uint16",
    ),
    (
        "bert-base-uncased.tokenizer.json",
        30522,
        100,
        "model.unk_token '[UNK]'",
        0,
        "token [PAD]",
        "uint16",
    ),
    ("t5-small.tokenizer.json", 32100, 2, "model.unk_id", 0, "token <pad>", "uint16"),
    (
        "pegasus-autonlp-reuters.tokenizer.json",
        96103,
        105,
        "model.unk_id",
        0,
        "token <pad>",
        "uint32",
    ),
    ("roberta-base.tokenizer.json", 50265, 3, "token <unk>", 1, "token <pad>", "uint16"),
    (
        "envit5-translation.tokenizer.json",
        50048,
        2,
        "model.unk_token '<unk>'",
        0,
        "token <pad>",
        "uint16",
    ),
]


def _gsm8k_texts(count: int) -> list[str]:
    rows = corpora_file("datasets/gsm8k_test.jsonl").read_text(encoding="utf-8").splitlines()
    texts = []
    for line in rows[:count]:
        row = json.loads(line)
        texts.append(f"{row['question']}\n{row['answer']}")
    return texts


@pytest.mark.corpora
@pytest.mark.parametrize(
    ("name", "vocab", "unk", "unk_source", "pad", "pad_source", "dtype"), ACCEPTED
)
def test_corpora_tokenizers_special_ids_and_dtype(
    cwd, name, vocab, unk, unk_source, pad, pad_source, dtype
):
    path = corpora_file(f"tokenizers/{name}")
    before = file_sha256(path)
    texts = [*_gsm8k_texts(8), "Xin chào thế giới", "สวัสดีครับ", "🎉 Ω ≈ ∑"]
    encode = reference_encoder(str(path))
    sizes = [16, 128, max(129, max(len(encode(t)) for t in texts))]
    result, expected = _build_texts(path, texts, sizes, samples_per_shard=(3,))
    build = verify_build("out", expected, encode, sizes, 3, pad_id=pad)
    tokenizer = build.manifest["tokenizer"]
    assert tokenizer == {
        **tokenizer,
        "type": "sentencepiece" if name.endswith(".model") else "hf_json",
        "path": str(path),
        "vocab_size": vocab,
        "unk_id": unk,
        "pad_id": pad,
        "unk_id_source": unk_source,
        "pad_id_source": pad_source,
    }
    assert build.manifest["token_storage"]["dtype"] == dtype
    assert build.manifest["token_storage"]["bytes_per_token"] == (2 if dtype == "uint16" else 4)
    assert build.dtype == np.dtype(dtype).newbyteorder("<")
    assert result.outputs[0].stats["token_dtype"] == dtype
    # UNK counting agrees with the library's own ids.
    unk_total = sum(encode(t).count(unk) for t in texts)
    assert result.outputs[0].stats["unk_tokens"] == unk_total
    if dtype == "uint32":
        largest = max(int(build.tokens(row).max()) for row in build.samples() if row["token_count"])
        assert largest > 65535  # the ids that need uint32 survive the round trip
    assert file_sha256(path) == before


@pytest.mark.corpora
def test_library_ids_agree_with_the_manifest(cwd):
    """The ids in the table above are the libraries' own (not MintDim-side vocab parsing)."""
    albert = spm.SentencePieceProcessor(
        model_file=str(corpora_file("tokenizers/albert-base-v2.spiece.model"))
    )
    assert (albert.unk_id(), albert.pad_id()) == (1, 0)
    bert = Tokenizer.from_file(str(corpora_file("tokenizers/bert-base-uncased.tokenizer.json")))
    assert (bert.token_to_id("[UNK]"), bert.token_to_id("[PAD]")) == (100, 0)
    t5 = corpora_file("tokenizers/t5-small.tokenizer.json")
    assert json.loads(Tokenizer.from_file(str(t5)).to_str())["model"]["unk_id"] == 2
    assert Tokenizer.from_file(str(t5)).token_to_id("<pad>") == 0


@pytest.mark.corpora
def test_truncation_in_pegasus_file_is_ignored(cwd):
    path = corpora_file("tokenizers/pegasus-autonlp-reuters.tokenizer.json")
    library = Tokenizer.from_file(str(path))
    assert library.truncation["max_length"] == 192
    text = " ".join(_gsm8k_texts(8))
    encode = reference_encoder(str(path))
    assert len(library.encode(text).ids) <= 192 < len(encode(text))
    size = len(encode(text))
    _build_texts(path, [text], [size])
    build = verify_build("out", _build_texts_expected([text]), encode, [size], 100, pad_id=0)
    assert next(build.samples())["token_count"] == len(encode(text))


@pytest.mark.corpora
@pytest.mark.parametrize(
    ("name", "token"),
    [
        ("phi-3-mini.tokenizer.json", "pad_id"),
        ("mistral-7b-v0.1.tokenizer.model", "pad_id"),
        ("phi-2.tokenizer.json", "unk_id"),
    ],
)
def test_corpora_tokenizers_rejected(cwd, name, token):
    path = corpora_file(f"tokenizers/{name}")
    write_jsonl("data/a.jsonl", [{"text": "the model"}])
    with pytest.raises(errors.TokenizerSpecialTokenError) as info:
        job(["./data/a.jsonl"], path).run(workers=1)
    assert (info.value.token, info.value.path) == (token, str(path))
    assert not Path("out").exists()


# ---------------------------------------------------------------------------
# dtype boundaries with real (sparse) tokenizer files
# ---------------------------------------------------------------------------


def _word_level(path: str, largest_id: int) -> Path:
    return write_word_level(path, {"[UNK]": 0, "[PAD]": 1, "the": 2, "far": largest_id})


@pytest.mark.parametrize(
    ("largest_id", "dtype"), [(65534, "uint16"), (65535, "uint32"), (70000, "uint32")]
)
def test_dtype_follows_vocab_size_and_ids_read_back(cwd, largest_id, dtype):
    path = _word_level("word.json", largest_id)
    texts = ["the far the", "far", "unknown the"]
    result, expected = _build_texts(path, texts, [4], samples_per_shard=(2,))
    build = verify_build("out", expected, reference_encoder(str(path)), [4], 2, pad_id=1)
    assert build.manifest["tokenizer"]["vocab_size"] == largest_id + 1
    assert build.manifest["token_storage"]["dtype"] == dtype
    width = 2 if dtype == "uint16" else 4
    assert Path("out/unit_4/shard_000000.bin").stat().st_size == 2 * 4 * width
    assert Path("out/unit_4/shard_000001.bin").stat().st_size == 1 * 4 * width
    rows = list(build.samples())
    assert build.record(rows[0]).tolist() == [2, largest_id, 2, 1]
    assert build.record(rows[1]).tolist() == [largest_id, 1, 1, 1]
    assert build.record(rows[2]).tolist() == [0, 2, 1, 1]
    assert result.outputs[0].stats["bytes_per_token"] == width


def test_hf_encode_batch_keeps_ids_beyond_int32(cwd):
    """A real tokenizer.json with a u32 id above 2**31; loaded with the library directly because
    the library's own ``to_str()`` (which MintDim's loader calls) walks every id up to the
    largest one and would take about a minute here."""
    path = _word_level("wide.json", 2**31 + 7)
    library = Tokenizer.from_file(str(path))
    assert library.encode("the far").ids == [2, 2**31 + 7]
    encoder = object.__new__(HFJsonEncoder)
    encoder._tok = library
    flat, lengths = encoder.encode_batch(["the far", "far"], [b"the far", b"far"])
    assert flat.tolist() == [2, 2**31 + 7, 2**31 + 7]
    assert lengths.tolist() == [2, 1]


def test_each_output_uses_its_own_tokenizer_ids_and_dtype(cwd, hf_json):
    """Mapped tokenizers and outputs: PAD, UNK and dtype are per output directory."""
    wide = _word_level("wide.json", 70000)  # unk 0, pad 1, uint32
    write_jsonl("data/a.jsonl", [{"text": "the 中 model"}])
    write_jsonl("data/b.jsonl", [{"text": "the far unknown"}])
    result = job(
        ["./data/a.jsonl", "./data/b.jsonl"],
        [hf_json, wide],
        sizes=[[8]],
        out=["./o1", "./o2"],
    ).run(workers=2)
    first = verify_build(
        "o1",
        [Expected("./data/a.jsonl", 1, "the 中 model")],
        reference_encoder(str(hf_json)),
        [8],
        100,
        pad_id=0,
    )
    second = verify_build(
        "o2",
        [Expected("./data/b.jsonl", 1, "the far unknown")],
        reference_encoder(str(wide)),
        [8],
        100,
        pad_id=1,
    )
    assert (
        first.manifest["token_storage"]["dtype"],
        second.manifest["token_storage"]["dtype"],
    ) == (
        "uint16",
        "uint32",
    )
    assert read_jsonl("o1/unk_index.jsonl")[0]["unk_positions"] == [1]  # [UNK] is 1 here
    assert read_jsonl("o2/unk_index.jsonl")[0]["unk_positions"] == [2]  # and 0 there
    assert [o.stats["unk_tokens"] for o in result.outputs] == [1, 1]


@pytest.mark.parametrize("kind", ["sp_model", "hf_json"])
@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_the_manifest_hashes_the_bytes_the_tokenizer_was_loaded_from(
    cwd, kind, engine, request, monkeypatch
):
    """The tokenizer file is replaced right after validation loaded it: the manifest's SHA-256
    is still that of the bytes the build encodes with, not of a second read."""
    from mintdim.build.tokenizer import validate as tokenizer_validate

    if engine == "fast":
        pytest.importorskip("gigatoken")
    source = request.getfixturevalue(kind)
    local = cwd / f"tok{source.suffix}"
    original = source.read_bytes()
    local.write_bytes(original)
    load = tokenizer_validate.load_encoder

    def load_then_replace(spec):
        try:
            return load(spec)  # FastEngineUnavailable for a model gigatoken refuses
        finally:
            local.write_bytes(original + b" ")  # another file now sits at the path

    monkeypatch.setattr(tokenizer_validate, "load_encoder", load_then_replace)
    write_jsonl("data.jsonl", [{"text": text} for text in TEXTS])
    config = {"path": str(local), "engine": engine}
    job(["data.jsonl"], config).run(workers=1, progress=False)
    manifest = read_json("out/manifest.json")
    assert manifest["tokenizer"]["sha256"] == hashlib.sha256(original).hexdigest()
    assert manifest["tokenizer"]["sha256"] != file_sha256(local)

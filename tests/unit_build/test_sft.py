"""SFT-ready builds on real tokenizers: segment spans, EOS, PAD/UNK fallbacks (issue 10).

Every expectation is computed here, independently of MintDim's encoders: token ids and offsets
come straight from the tokenizer libraries, one text at a time, and each token's segment is found
by a plain Python walk over the segments' character ranges (the definition, not the bulk numpy
code under test).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
from tokenizers import Tokenizer

from mintdim import TokenizerSpecialTokenError, open_build
from mintdim.check.verify import verify_build
from tests.conftest import corpora_file
from tests.unit_build.helpers import job, read_json, read_jsonl, tree_bytes, write_jsonl

pytestmark = pytest.mark.filterwarnings("ignore::mintdim.TemplateLiteralWarning")

ALPACA = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n{output}"
LITERALS = ("### Instruction:\n", "\n\n### Input:\n", "\n\n### Response:\n")
# The raw albert model has no "#" and no capitals: the same layout, in its alphabet.
ALBERT_LITERALS = ("instruction:\n", "\n\ninput:\n", "\n\nresponse:\n")
FIELDS = ["instruction", "input", "output"]
NAMES = ["literal", "instruction", "literal", "input", "literal", "output"]
SIZES = [64, 128, 256, 512, 1024, 4096]

# name -> (tokenizer file, options, lowercase the data, EOS id the library defines)
TOKENIZERS = {
    "mistral-pad-unk": ("mistral-7b-v0.1.tokenizer.model", {"pad_fallback": "unk"}, False, 2),
    "mistral-pad-eos": ("mistral-7b-v0.1.tokenizer.model", {"pad_fallback": "eos"}, False, 2),
    "phi-3-mini": ("phi-3-mini.tokenizer.json", {"pad_fallback": "eos"}, False, 32000),
    "phi-2-unk-eos": (
        "phi-2.tokenizer.json",
        {"pad_fallback": "eos", "unk_fallback": "eos"},
        False,
        50256,
    ),
    "phi-2-unk-none": (
        "phi-2.tokenizer.json",
        {"pad_fallback": "<|endoftext|>", "unk_fallback": "none"},
        False,
        50256,
    ),
    "bert": ("bert-base-uncased.tokenizer.json", {}, False, 102),
    "t5": ("t5-small.tokenizer.json", {}, False, 1),
    # The raw albert model knows lowercase only; it has no EOS (so no append_eos here).
    "albert": ("albert-base-v2.spiece.model", {}, True, None),
}


def _alpaca_rows(lowercase: bool) -> list[dict]:
    path = corpora_file("datasets/self_instruct_seed_alpaca.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows = [{name: row[name] for name in FIELDS} for row in rows]
    if lowercase:
        rows = [{name: value.lower() for name, value in row.items()} for row in rows]
    return rows


class Library:
    """The tokenizer library used directly: ids and per-token start offsets of one text."""

    def __init__(self, path: Path) -> None:
        self.sp = path.suffix == ".model"
        if self.sp:
            self.proc = spm.SentencePieceProcessor(model_file=str(path))
        else:
            self.tok = Tokenizer.from_file(str(path))
            self.tok.no_padding()
            self.tok.no_truncation()

    def encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and each token's (start, end), in characters of ``text``."""
        if self.sp:
            data = text.encode("utf-8")
            proto = self.proc.encode(data, out_type="proto")

            # begin/end are byte offsets: the characters before one are the decoded prefix.
            def chars(offset: int) -> int:
                return len(data[:offset].decode("utf-8", "ignore"))

            spans = [(chars(piece.begin), chars(piece.end)) for piece in proto.pieces]
            return [piece.id for piece in proto.pieces], spans
        encoding = self.tok.encode(text, add_special_tokens=False)
        return encoding.ids, list(encoding.offsets)

    def ids(self, text: str) -> list[int]:
        return self.encode(text)[0]

    def decode(self, ids: list[int]) -> str:
        return self.proc.decode(ids) if self.sp else self.tok.decode(ids)

    def normal(self, text: str) -> str:
        """Text as the tokenizer normalises it, whitespace and case removed, for comparison."""
        if not self.sp and self.tok.normalizer is not None:
            text = self.tok.normalizer.normalize_str(text)
        text = unicodedata.normalize("NFKC", text).replace("▁", " ")
        return "".join(text.split()).lower()


def _template(literals: tuple[str, ...]) -> str:
    return "".join(f"{literal}{{{name}}}" for literal, name in zip(literals, FIELDS, strict=True))


def _pieces(row: dict, literals: tuple[str, ...] = LITERALS) -> list[tuple[str, str]]:
    """(segment name, text) of a rendered Alpaca sample."""
    return [
        piece
        for literal, name in zip(literals, FIELDS, strict=True)
        for piece in (("literal", literal), (name, row[name]))
    ]


def _reference(library: Library, row: dict, mode: str, eos: int | None, literals: tuple):
    """Expected ids and spans [(name, start, stop)] of one sample, computed the slow way."""
    pieces = _pieces(row, literals)
    if mode == "segments":
        ids: list[int] = []
        spans = []
        for name, text in pieces:
            piece_ids = library.ids(text)
            spans.append((name, len(ids), len(ids) + len(piece_ids)))
            ids += piece_ids
    else:
        ids, offsets = library.encode("".join(text for _, text in pieces))
        starts = [start for start, _ in offsets]
        # Each token belongs to the segment holding its first character; where an empty
        # segment starts at the same place as a non-empty one, the non-empty one holds it.
        bounds, position = [], 0
        for _name, text in pieces:
            bounds.append((position, position + len(text)))
            position += len(text)
        owner = []
        for start in starts:
            holding = [k for k, (lo, hi) in enumerate(bounds) if lo <= start < hi]
            owner.append(holding[0] if holding else len(pieces) - 1)
        owner = [max(owner[: i + 1]) for i in range(len(owner))]
        spans = []
        for k, (name, _text) in enumerate(pieces):
            first = sum(1 for o in owner if o < k)
            spans.append((name, first, first + owner.count(k)))
    if eos is not None:
        spans.append(("eos", len(ids), len(ids) + 1))
        ids = [*ids, eos]
    return ids, spans


def _build(tmp: Path, name: str, mode: str, workers: int = 1, **run) -> tuple[Path, list[dict]]:
    file, options, lowercase, eos = TOKENIZERS[name]
    rows = _alpaca_rows(lowercase)
    data = tmp / "alpaca.jsonl"
    if not data.exists():  # the manifest records the input's mtime: write it once
        write_jsonl(data, rows)
    config = {
        "path": str(corpora_file(f"tokenizers/{file}")),
        "encode": mode,
        "append_eos": eos is not None,
        **options,
    }
    out = tmp / f"out-{name}-{mode}-{workers}"
    job(
        [str(data)],
        config,
        fields=[FIELDS],
        templates=[_template(ALBERT_LITERALS if lowercase else LITERALS)],
        sizes=[SIZES],
        build_batch=[16],
        samples_per_shard=[40],
        out=str(out),
    ).run(workers=workers, progress=False, **run)
    return out, rows


@pytest.mark.parametrize("mode", ["whole", "segments"])
@pytest.mark.parametrize("name", list(TOKENIZERS))
def test_spans_cover_every_token_and_match_the_reference(tmp_path, name, mode):
    file, _options, lowercase, eos = TOKENIZERS[name]
    literals = ALBERT_LITERALS if lowercase else LITERALS
    out, rows = _build(tmp_path, name, mode)
    library = Library(corpora_file(f"tokenizers/{file}"))
    report = verify_build(out, deep=True)
    assert report.ok, report.lines("en")
    build = open_build(out)
    unk_id = build.manifest["tokenizer"]["unk_id"]
    index = read_jsonl(out / "sample_index.jsonl")
    assert len(build) == len(rows) == len(index)
    checked = 0
    for sample_id, row in enumerate(rows):
        tokens = build[sample_id].tolist()
        segments = build.segments(sample_id)
        want_ids, want_spans = _reference(library, row, mode, eos, literals)
        assert tokens == want_ids, sample_id
        assert segments == want_spans, sample_id
        # Non-overlapping, in order, covering [0, token_count).
        assert segments[0][1] == 0 and segments[-1][2] == len(tokens)
        assert all(a[2] == b[1] for a, b in zip(segments, segments[1:], strict=False))
        assert [s[0] for s in segments] == NAMES + (["eos"] if eos is not None else [])
        if eos is not None:
            assert tokens[-1] == eos and segments[-1] == ("eos", len(tokens) - 1, len(tokens))
        assert index[sample_id]["empty_fields"] == [f for f in FIELDS if row[f] == ""]
        # A field's tokens decode back to its text. In segments mode always; in whole mode
        # where no token straddles the field's edges (the reference above covers the rest).
        for field_name, start, stop in segments:
            if field_name not in FIELDS:
                continue
            piece = tokens[start:stop]
            if mode == "whole" and not _clean_edges(library, _pieces(row, literals), field_name):
                continue
            if unk_id in piece:  # UNK decodes to its own name, not to the text it replaced
                continue
            assert library.normal(library.decode(piece)) == library.normal(row[field_name])
            checked += 1
    # Segments mode: nearly every field decodes back. Whole mode: only fields whose edges no
    # token straddles can (albert folds "\n" into the next word's "▁" piece, which so starts
    # in the literal before the field: the definition the reference above checks).
    assert checked >= (len(rows) * 2 if mode == "segments" else 1)


def _clean_edges(library: Library, pieces: list[tuple[str, str]], field: str) -> bool:
    """Whether, in the whole text, no token straddles an edge of ``field``."""
    position = [n for n, _ in pieces].index(field)
    lo = sum(len(t) for _, t in pieces[:position])
    hi = lo + len(pieces[position][1])
    _ids, offsets = library.encode("".join(t for _, t in pieces))
    return not any(start < edge < end for start, end in offsets for edge in (lo, hi))


def test_spans_and_shards_are_identical_for_any_worker_count_and_batch(tmp_path):
    one, _ = _build(tmp_path, "phi-3-mini", "whole", workers=1)
    two, _ = _build(tmp_path, "phi-3-mini", "whole", workers=2)
    a, b = tree_bytes(one), tree_bytes(two)
    assert a == b
    assert any(path.endswith(".spans.bin") for path in a)


def test_manifest_records_sequence_template_eos_and_fallback_sources(tmp_path):
    out, _ = _build(tmp_path, "mistral-pad-eos", "segments")
    manifest = read_json(out / "manifest.json")
    tokenizer = manifest["tokenizer"]
    assert (tokenizer["pad_id"], tokenizer["eos_id"], tokenizer["unk_id"]) == (2, 2, 0)
    assert tokenizer["pad_id_source"] == "pad_fallback 'eos': sp.eos_id()"
    assert tokenizer["eos_id_source"] == "sp.eos_id()"
    assert (tokenizer["encode"], tokenizer["append_eos"]) == ("segments", True)
    assert manifest["source"]["sequence_templates"] == [
        [
            {"kind": "literal", "text": "### Instruction:\n"},
            {"kind": "field", "name": "instruction"},
            {"kind": "literal", "text": "\n\n### Input:\n"},
            {"kind": "field", "name": "input"},
            {"kind": "literal", "text": "\n\n### Response:\n"},
            {"kind": "field", "name": "output"},
            {"kind": "eos", "name": "eos"},
        ]
    ]
    spans = manifest["segment_spans"]
    assert spans["stored"] and spans["record_width"] == 1 + 7
    for shard in manifest["shards"]:
        path = out / shard["spans"]["path"]
        assert shard["spans"]["bytes"] == path.stat().st_size == shard["samples"] * 8 * 4
    # Records stay pure tokens then PAD: a shard's bytes are exactly its records.
    build = open_build(out)
    for sample_id in range(len(build)):
        row = read_jsonl(out / "sample_index.jsonl")[sample_id] if sample_id < 3 else None
        if row is None:
            break
        shard = np.fromfile(out / row["shard_path"], dtype="<u2").reshape(-1, row["unit_size"])
        record = shard[row["shard_row"]]
        assert record[: row["token_count"]].tolist() == build[sample_id].tolist()
        assert set(record[row["token_count"] :].tolist()) <= {2}


def _small_build(tmp_path: Path, file: str, options: dict, texts: list[str]) -> Path:
    """A one-field build of ``texts`` with a corpora tokenizer and ``options``; its directory."""
    write_jsonl(tmp_path / "a.jsonl", [{"text": text} for text in texts])
    path = corpora_file(f"tokenizers/{file}")
    out = tmp_path / "out"
    job([str(tmp_path / "a.jsonl")], {"path": str(path), **options}, out=str(out)).run(
        workers=1, progress=False
    )
    return out


def test_library_pad_wins_over_the_fallback_and_the_manifest_says_so(tmp_path):
    options = {"pad_fallback": "eos", "unk_fallback": "none"}
    out = _small_build(tmp_path, "bert-base-uncased.tokenizer.json", options, ["hello world"])
    tokenizer = read_json(out / "manifest.json")["tokenizer"]
    assert tokenizer["pad_id"] == 0
    assert (
        tokenizer["pad_id_source"]
        == "token [PAD] (the library's own id; pad_fallback 'eos' unused)"
    )
    assert tokenizer["unk_id"] == 100 and tokenizer["unk_tier"] == "on"


def test_unk_fallback_none_turns_the_unk_tier_off(tmp_path):
    options = {"pad_fallback": "eos", "unk_fallback": "none"}
    out = _small_build(tmp_path, "phi-2.tokenizer.json", options, ["hello <|endoftext|> world"])
    tokenizer = read_json(out / "manifest.json")["tokenizer"]
    assert tokenizer["unk_id"] is None and tokenizer["unk_tier"] == "off"
    assert read_jsonl(out / "unk_index.jsonl") == []
    assert read_json(out / "stats.json")["unk_tokens"] == 0


def test_the_appended_eos_is_not_counted_as_unk(tmp_path):
    # phi-2 with unk_fallback eos: UNK and EOS are one id; only field text may count as UNK.
    options = {"pad_fallback": "eos", "unk_fallback": "eos", "append_eos": True}
    texts = ["plain text", "a <|endoftext|> b"]
    out = _small_build(tmp_path, "phi-2.tokenizer.json", options, texts)
    unk = read_jsonl(out / "unk_index.jsonl")
    library = Library(corpora_file("tokenizers/phi-2.tokenizer.json"))
    position = library.ids("a <|endoftext|> b").index(50256)
    assert [(row["sample_id"], row["unk_positions"]) for row in unk] == [(1, [position])]


@pytest.mark.parametrize(
    ("file", "options", "token", "option"),
    [
        ("albert-base-v2.spiece.model", {"append_eos": True}, "eos_id", "append_eos"),
        ("mistral-7b-v0.1.tokenizer.model", {}, "pad_id", "pad_fallback"),
        ("phi-2.tokenizer.json", {"pad_fallback": "eos"}, "unk_id", "unk_fallback"),
        ("phi-3-mini.tokenizer.json", {"pad_fallback": "<nope>"}, "pad_id", "pad_fallback"),
        ("mistral-7b-v0.1.tokenizer.model", {"pad_fallback": "<nope>"}, "pad_id", "pad_fallback"),
    ],
)
def test_missing_special_tokens_name_the_option(tmp_path, file, options, token, option):
    write_jsonl(tmp_path / "a.jsonl", [{"text": "hello"}])
    path = corpora_file(f"tokenizers/{file}")
    with pytest.raises(TokenizerSpecialTokenError) as info:
        job(
            [str(tmp_path / "a.jsonl")], {"path": str(path), **options}, out=str(tmp_path / "o")
        ).run(workers=1, progress=False)
    assert info.value.token == token
    for lang in ("en", "vi"):
        assert option in info.value.message(lang)
    assert not (tmp_path / "o").exists()


def test_segments_mode_tokens_may_differ_from_whole_text(tmp_path):
    """The README example: a field after a newline gets SentencePiece's word-start piece when it
    is encoded alone."""
    library = Library(corpora_file("tokenizers/mistral-7b-v0.1.tokenizer.model"))
    whole = library.ids("### Response:\nHello")
    alone = library.ids("### Response:\n") + library.ids("Hello")
    assert whole != alone
    assert library.proc.id_to_piece(alone[-1]) == "▁Hello"
    assert library.proc.id_to_piece(whole[-1]) == "Hello"

"""The fast engine (tokenizer ``engine="fast"``, gigatoken): byte-identical output, the parity
guard firing where it must, and the fallback to the reference engine saying why.

gigatoken is an optional extra (``[fast]``, installed by ``make install``): without it only the
fallback tests run. The corpora tests skip cleanly when ../shared/corpora is absent.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from mintdim.build.api import found_before_work
from mintdim.build.contracts import ParityGuard
from mintdim.build.tokenizer import parity
from mintdim.build.tokenizer.fast import FastEncoder
from mintdim.errors import TokenizerParityError, TokenizerValidationError
from tests.conftest import CORPORA, corpora_file
from tests.unit_build.helpers import job, read_json, train_sp, tree_bytes, write_jsonl

SIZES = ((64, 256, 1024, 4096, 32768),)
ROWS_PER_DATASET = 400


def _needs_gigatoken() -> None:
    pytest.importorskip("gigatoken", reason="the optional extra [fast] is not installed")


def corpora_texts() -> list[str]:
    """Every corpora dataset (blns, Thai, Vietnamese, emoji, code ...): each row's string values
    joined by a newline, at most ``ROWS_PER_DATASET`` rows per file."""
    corpora_file("datasets/blns.jsonl")
    texts = []
    for path in sorted((CORPORA / "datasets").glob("*.jsonl")):
        for raw in path.read_bytes().splitlines()[:ROWS_PER_DATASET]:
            values = json.loads(raw).values()
            texts.append("\n".join(v for v in values if isinstance(v, str)))
    return texts


def without_engine(manifest: dict) -> dict:
    """A manifest without its seal and the engine block only a fast-engine build writes."""
    content = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    content["tokenizer"] = {k: v for k, v in manifest["tokenizer"].items() if k != "engine"}
    return content


# ---------------------------------------------------------------------------
# Byte-identical output
# ---------------------------------------------------------------------------

FAST_TOKENIZERS = [
    pytest.param("roberta-base.tokenizer.json", {}, id="roberta"),
    # phi-2 has neither UNK nor PAD, phi-3-mini and mistral no PAD: the SFT fallbacks supply them.
    pytest.param(
        "phi-2.tokenizer.json", {"pad_fallback": "eos", "unk_fallback": "none"}, id="phi-2"
    ),
    pytest.param("phi-3-mini.tokenizer.json", {"pad_fallback": "eos"}, id="phi-3-mini"),
    pytest.param(
        "mistral-7b-v0.1.tokenizer.model", {"pad_fallback": "eos", "append_eos": True}, id="mistral"
    ),
]
BUILDS = [
    *(pytest.param(*p.values, 2, 64, id=f"{p.id}-workers2") for p in FAST_TOKENIZERS),
    pytest.param(*FAST_TOKENIZERS[0].values, 1, 97, id="roberta-workers1"),
    pytest.param(*FAST_TOKENIZERS[0].values, 3, 1000, id="roberta-workers3"),
]


@pytest.mark.corpora
@pytest.mark.parametrize(("tokenizer", "options"), FAST_TOKENIZERS)
def test_fast_encode_batch_gives_the_reference_ids_on_the_corpora(tokenizer, options):
    _needs_gigatoken()
    from mintdim.build.contracts import TokenizerSpec
    from mintdim.build.tokenizer import load_encoder

    path = corpora_file(f"tokenizers/{tokenizer}")
    kind = "hf_json" if tokenizer.endswith(".json") else "sentencepiece"
    spec = TokenizerSpec(kind=kind, path=str(path), abs_path=str(path), engine="fast", **options)
    fast = load_encoder(spec)
    assert isinstance(fast, FastEncoder)
    texts = corpora_texts()
    flat, lengths = fast.encode_batch(texts, [t.encode() for t in texts])
    # The reference: the library itself, one text at a time.
    expected = [fast.reference.encode(text) for text in texts]
    assert lengths.tolist() == [len(ids) for ids in expected]
    assert flat.tolist() == [i for ids in expected for i in ids]


@pytest.mark.corpora
@pytest.mark.parametrize(("tokenizer", "options", "workers", "build_batch"), BUILDS)
def test_fast_build_is_byte_identical_to_reference(
    cwd, tokenizer, options, workers, build_batch, tmp_path
):
    _needs_gigatoken()
    path = str(corpora_file(f"tokenizers/{tokenizer}"))
    write_jsonl("data.jsonl", [{"text": text} for text in corpora_texts()])
    builds = {}
    for engine in ("reference", "fast"):
        job(
            ["data.jsonl"],
            {"path": path, "engine": engine, **options},
            sizes=SIZES,
            build_batch=(build_batch,),
            out=f"./{engine}",
            samples_per_shard=(700,),
        ).run(workers=workers, progress=False)
        builds[engine] = tree_bytes(cwd / engine)
    reference, fast = builds["reference"], builds["fast"]
    assert reference.keys() == fast.keys()
    for name in reference:
        if name != "manifest.json":
            assert fast[name] == reference[name], name
    manifest = json.loads(fast["manifest.json"])
    assert without_engine(manifest) == without_engine(json.loads(reference["manifest.json"]))
    assert "engine" not in json.loads(reference["manifest.json"])["tokenizer"]
    engine = manifest["tokenizer"]["engine"]
    assert engine["ran"] == "fast" and engine["library"].startswith("gigatoken ")
    # The default guard, by line number alone (whatever build_batch and the workers): the first
    # 512 lines, then lines 1, 513, 1025, ...
    samples = len(corpora_texts())
    sampled = sum(1 for offset in range(samples) if offset < 512 or offset % 512 == 0)
    assert engine["parity"]["rows_checked_during_build"] == sampled
    assert (engine["parity"]["first_rows"], engine["parity"]["every"]) == (512, 512)
    assert engine["parity"]["texts_checked_at_validation"] > min(512, samples)


def test_sentencepiece_control_pieces_in_text_stay_text(cwd):
    """SentencePiece reads the text "</s>" as characters; gigatoken's converter would match it as
    the EOS id unless MintDim drops control pieces from it."""
    _needs_gigatoken()
    model = train_sp(
        cwd,
        "bpe",
        ["the unit build writes shards", "tokens and samples", "xin chao Viet Nam"] * 200,
        model_type="bpe",
        vocab_size=400,
        byte_fallback=True,
        pad_id=0,
        unk_id=1,
        bos_id=2,
        eos_id=3,
        remove_extra_whitespaces=False,  # as Llama and Mistral models do
    )
    texts = ["a </s> b <s> c <unk> d", "</s>", "<s>the unit</s>", "<pad> tokens"]
    write_jsonl("data.jsonl", [{"text": t} for t in texts])
    for engine in ("reference", "fast"):
        job(["data.jsonl"], {"path": str(model), "engine": engine}, out=f"./{engine}").run(
            workers=1, progress=False
        )
    assert read_json("fast/manifest.json")["tokenizer"]["engine"]["ran"] == "fast"
    reference, fast = tree_bytes("reference"), tree_bytes("fast")
    assert {k: v for k, v in fast.items() if k != "manifest.json"} == {
        k: v for k, v in reference.items() if k != "manifest.json"
    }


# ---------------------------------------------------------------------------
# The parity guard
# ---------------------------------------------------------------------------


def test_guard_stops_a_real_divergence_at_validation(cwd):
    """Not injected: gigatoken 0.10 encodes "\n" to no ids with a SentencePiece BPE model that
    removes extra whitespace (SentencePiece keeps a piece for it). The parity corpus holds "\n"
    alone, so the build stops before any work."""
    _needs_gigatoken()
    model = train_sp(
        cwd,
        "bpe",
        ["the unit build writes shards", "tokens and samples"] * 200,
        model_type="bpe",
        vocab_size=400,
        byte_fallback=True,
    )
    write_jsonl("data.jsonl", _rows(10, set()))
    with pytest.raises(TokenizerParityError) as caught:
        job(["data.jsonl"], {"path": str(model), "engine": "fast"}).run(workers=1)
    err = caught.value
    corpus = [json.loads(line) for line in parity.CORPUS.read_bytes().splitlines()]
    assert err.stage == "parity_corpus" and corpus[err.line - 1] == "\n"
    assert err.fast == [] and err.reference and found_before_work(err)
    assert not Path("out").exists()


def _perturb(monkeypatch: pytest.MonkeyPatch, marker: bytes) -> None:
    """Make the fast engine wrong on every text holding ``marker``: its first id plus one."""
    real = FastEncoder.encode_batch

    def perturbed(self, texts, utf8):
        flat, lengths = real(self, texts, utf8)
        flat = flat.copy()
        starts = np.cumsum(lengths) - lengths
        for row, data in enumerate(utf8):
            if marker in data and lengths[row]:
                flat[starts[row]] += 1
        return flat, lengths

    monkeypatch.setattr(FastEncoder, "encode_batch", perturbed)


def _rows(count: int, marked: set[int]) -> list[dict]:
    return [
        {"text": f"sample {i} of the build" + (" MARK" if i in marked else "")}
        for i in range(count)
    ]


@pytest.fixture
def roberta() -> str:
    _needs_gigatoken()
    return str(corpora_file("tokenizers/roberta-base.tokenizer.json"))


GUARD = {"first_rows": 100, "every": 64}
"""A guard small enough to pin on a few hundred rows: lines 1-100, then lines 1, 65, 129, ..."""


def _fast(roberta: str, guard: dict | None = GUARD) -> dict:
    return {"path": roberta, "engine": "fast", **({"parity": guard} if guard else {})}


@pytest.mark.corpora
@pytest.mark.parametrize(("workers", "build_batch"), [(1, 100), (2, 100), (2, 37)])
def test_guard_stops_the_build_at_a_sampled_row(cwd, monkeypatch, roberta, workers, build_batch):
    # Lines 1, 65, 129, 193, 257, ... are sampled whatever the batches: row 256 is line 257.
    write_jsonl("data.jsonl", _rows(400, {256}))
    _perturb(monkeypatch, b"MARK")
    with pytest.raises(TokenizerParityError) as caught:
        job(["data.jsonl"], _fast(roberta), build_batch=(build_batch,)).run(
            workers=workers, progress=False
        )
    err = caught.value
    assert (err.stage, err.file, err.line) == ("build", "data.jsonl", 257)
    assert not found_before_work(err)
    at = err.position - err.window_start
    assert err.fast[at] == err.reference[at] + 1
    assert err.fast[:at] == err.reference[:at] and err.fast[at + 1 :] == err.reference[at + 1 :]
    assert str(err.reference) in err.message("en") and str(err.fast) in err.message("vi")
    assert "data.jsonl:257" in err.message("en") and "data.jsonl:257" in err.message("vi")
    assert 'engine": "reference"' in err.message("en")
    assert not (cwd / "out" / "manifest.json").exists()


@pytest.mark.corpora
@pytest.mark.parametrize("build_batch", [30, 100, 1000])
def test_guard_checks_every_first_row_at_validation(cwd, monkeypatch, roberta, build_batch):
    """``first_rows`` no longer follows ``build_batch``: line 58 is among the first 100 lines
    whether a batch holds 30 of them, 100 or all."""
    write_jsonl("data.jsonl", _rows(300, {57}))  # row 57 is no multiple of 64
    _perturb(monkeypatch, b"MARK")
    with pytest.raises(TokenizerParityError) as caught:
        job(["data.jsonl"], _fast(roberta), build_batch=(build_batch,)).run(
            workers=1, progress=False
        )
    assert (caught.value.stage, caught.value.line) == ("first_rows", 58)
    assert "parity.first_rows" in caught.value.message("en")
    assert "parity.first_rows" in caught.value.message("vi")
    assert found_before_work(caught.value)
    assert not (cwd / "out").exists()


@pytest.mark.corpora
def test_guard_checks_the_parity_corpus_at_validation(cwd, monkeypatch, roberta):
    corpus = [json.loads(line) for line in parity.CORPUS.read_bytes().splitlines()]
    line = next(i for i, text in enumerate(corpus, start=1) if "</s>" in text)
    write_jsonl("data.jsonl", _rows(10, set()))
    _perturb(monkeypatch, b"</s>")
    with pytest.raises(TokenizerParityError) as caught:
        job(["data.jsonl"], {"path": roberta, "engine": "fast"}).run(workers=1, progress=False)
    assert caught.value.stage == "parity_corpus"
    assert caught.value.file.endswith("parity_corpus.jsonl") and caught.value.line == line


@pytest.mark.corpora
def test_unsampled_rows_are_not_reencoded(cwd, monkeypatch, roberta):
    """The guard samples: a difference in a row it does not re-encode goes unseen (the manifest
    says which rows are checked). This pins the sampling rule, not a wish."""
    write_jsonl("data.jsonl", _rows(300, {150}))
    _perturb(monkeypatch, b"MARK")
    job(["data.jsonl"], _fast(roberta), build_batch=(100,)).run(workers=1, progress=False)
    checked = read_json("out/manifest.json")["tokenizer"]["engine"]["parity"]
    # Lines 1-100, then 129, 193 and 257 (rows 128, 192, 256).
    assert checked["rows_checked_during_build"] == 100 + 3
    assert (checked["first_rows"], checked["every"]) == (100, 64)


@pytest.mark.corpora
@pytest.mark.parametrize("build_batch", [7, 100])
def test_first_rows_are_compared_with_the_reference_ids_of_validation(
    cwd, monkeypatch, roberta, build_batch
):
    """The reference library encodes the first rows once (at validation); the build compares
    them with what it gave then, and re-encodes only the later sampled rows."""
    write_jsonl("data.jsonl", _rows(300, set()))
    reencoded = []
    real_check = parity.check

    def spy(encoder, texts, utf8, fast, where, stage, kind):
        if stage == "build":
            reencoded.extend(line for _, line in where)
        return real_check(encoder, texts, utf8, fast, where, stage, kind)

    monkeypatch.setattr(parity, "check", spy)
    job(["data.jsonl"], _fast(roberta), build_batch=(build_batch,)).run(workers=1, progress=False)
    assert sorted(reencoded) == [129, 193, 257]  # rows 128, 192, 256
    checked = read_json("out/manifest.json")["tokenizer"]["engine"]["parity"]
    assert checked["rows_checked_during_build"] == 100 + 3


@pytest.mark.corpora
def test_a_first_row_the_fast_engine_changes_after_validation_stops_the_build(
    cwd, monkeypatch, roberta
):
    """Right at validation, wrong in the build: the recorded reference ids still catch it."""
    write_jsonl("data.jsonl", _rows(300, {57}))
    real = FastEncoder.encode_batch
    calls = []

    def wrong_after_validation(self, texts, utf8):
        calls.append(len(texts))
        flat, lengths = real(self, texts, utf8)
        if len(calls) == 1:  # validation's one call: the parity corpus and the first rows
            return flat, lengths
        flat = flat.copy()
        starts = np.cumsum(lengths) - lengths
        for row, data in enumerate(utf8):
            if b"MARK" in data:
                flat[starts[row]] += 1
        return flat, lengths

    monkeypatch.setattr(FastEncoder, "encode_batch", wrong_after_validation)
    with pytest.raises(TokenizerParityError) as caught:
        job(["data.jsonl"], _fast(roberta), build_batch=(100,)).run(workers=1, progress=False)
    assert (caught.value.stage, caught.value.line) == ("build", 58)
    assert not (cwd / "out" / "manifest.json").exists()


@pytest.mark.corpora
def test_only_the_first_file_has_its_first_rows_checked_whole(cwd, monkeypatch, roberta):
    """The first rows of the data are checked whole; other files are sampled one row in 64."""
    write_jsonl("a.jsonl", _rows(150, set()))
    write_jsonl("b.jsonl", _rows(150, {57}))  # line 58 of the second file: not sampled
    _perturb(monkeypatch, b"MARK")
    job(
        ["a.jsonl", "b.jsonl"],
        _fast(roberta),
        fields=(("text",), ("text",)),
        templates=("{text}", "{text}"),
        build_batch=(100, 100),
        out="./out",
    ).run(workers=1, progress=False)
    checked = read_json("out/manifest.json")["tokenizer"]["engine"]["parity"]
    # a.jsonl: rows 0-99 and 128; b.jsonl: rows 0, 64, 128.
    assert checked["rows_checked_during_build"] == 100 + 1 + 3


@pytest.mark.corpora
def test_every_one_checks_every_row(cwd, monkeypatch, roberta):
    write_jsonl("data.jsonl", _rows(300, set()))
    job(["data.jsonl"], _fast(roberta, {"first_rows": 0, "every": 1}), build_batch=(64,)).run(
        workers=2, progress=False
    )
    checked = read_json("out/manifest.json")["tokenizer"]["engine"]["parity"]
    assert checked["rows_checked_during_build"] == 300
    # A difference on a row no default guard samples (line 151) is found.
    write_jsonl("data.jsonl", _rows(300, {150}))
    _perturb(monkeypatch, b"MARK")
    with pytest.raises(TokenizerParityError) as caught:
        job(["data.jsonl"], _fast(roberta, {"every": 1}), out="./again").run(
            workers=1, progress=False
        )
    assert (caught.value.stage, caught.value.line) == ("first_rows", 151)


@pytest.mark.corpora
def test_rows_checked_and_shards_never_depend_on_batches_workers_pieces_or_the_guard(cwd, roberta):
    """The count the manifest records is a function of line numbers and the guard alone, and
    the shards are the same bytes whatever the guard checks: only the parity record differs."""
    rows = [{"text": f"row {i} " + "word " * (i % 37)} for i in range(3000)]
    write_jsonl("data.jsonl", rows)
    runs = [
        ({}, 4096, 2, None),
        ({}, 7, 1, None),
        ({}, 333, 2, 4096),
        (GUARD, 100, 2, 2048),
        ({"every": 1}, 250, 2, None),
        ({"first_rows": 0, "every": 1000}, 64, 1, None),
    ]
    builds, counts = [], {}
    for n, (guard, build_batch, workers, piece_bytes) in enumerate(runs):
        job(
            ["data.jsonl"],
            _fast(roberta, guard),
            sizes=SIZES,
            build_batch=(build_batch,),
            out=f"./b{n}",
        ).run(workers=workers, piece_bytes=piece_bytes, progress=False)
        files = tree_bytes(cwd / f"b{n}")
        manifest = json.loads(files.pop("manifest.json"))
        record = manifest["tokenizer"]["engine"].pop("parity")
        manifest.pop("manifest_sha256")
        builds.append((files, manifest))
        expected = ParityGuard(**guard)
        assert (record["first_rows"], record["every"]) == (expected.first_rows, expected.every)
        counts.setdefault((expected.first_rows, expected.every), set()).add(
            record["rows_checked_during_build"]
        )
    assert all(build == builds[0] for build in builds[1:])
    # Brute force over line numbers (no blank lines here: row i is line i + 1).
    for (first_rows, every), seen in counts.items():
        assert seen == {sum(1 for o in range(3000) if o < first_rows or o % every == 0)}


@pytest.mark.parametrize(
    ("parity_value", "option", "shown"),
    [
        (True, "parity", "True"),
        ([512], "parity", "[512]"),
        ({"every": True}, "parity.every", "True"),
        ({"every": "64"}, "parity.every", "'64'"),
        ({"every": 1.5}, "parity.every", "1.5"),
        ({"every": 0}, "parity.every", "0"),
        ({"first_rows": -1}, "parity.first_rows", "-1"),
        ({"first_rows": 10, "evry": 3}, "parity", "['evry']"),
    ],
)
def test_a_bad_parity_setting_is_refused_by_name_before_anything_is_written(
    cwd, parity_value, option, shown
):
    model = train_sp(cwd, "guard", ["a few words of text"] * 50, vocab_size=40)
    write_jsonl("data.jsonl", _rows(5, set()))
    with pytest.raises(TokenizerValidationError) as caught:
        job(["data.jsonl"], {"path": str(model), "engine": "fast", "parity": parity_value}).run(
            workers=1, progress=False
        )
    for lang in ("en", "vi"):
        text = caught.value.message(lang)
        assert option in text and shown in text
    assert not Path("out").exists()


def test_settled_rows_are_exactly_those_with_the_recorded_text_and_ids():
    utf8 = [b"one", b"two words", b""]
    flat = np.array([5, 6, 7, 8], dtype=np.uint32)
    lengths = np.array([1, 3, 0])
    digests = parity.row_digests(utf8, flat, lengths)
    assert len(set(digests)) == 3
    known = {10: digests[0], 11: digests[1], 12: digests[2]}
    assert parity.settled(known, [0, 1, 2], [10, 11, 12], utf8, flat, lengths) == [True] * 3
    # Another text, other ids, a line never recorded: each needs the reference again.
    other = [b"one!", b"two words", b""]
    changed = np.array([5, 6, 7, 9], dtype=np.uint32)
    assert parity.settled(known, [0, 1, 2], [10, 11, 12], other, flat, lengths) == [
        False,
        True,
        True,
    ]
    assert parity.settled(known, [1], [10, 11, 12], utf8, changed, lengths) == [False]
    assert parity.settled(known, [0], [13, 11, 12], utf8, flat, lengths) == [False]
    # The split between text and ids is part of the digest.
    assert parity.row_digests([b"a"], flat[:1], lengths[:1]) != parity.row_digests(
        [b"a\x05\x00\x00\x00\x00\x00\x00\x00"], flat[:0], np.array([0])
    )


@pytest.mark.corpora
@pytest.mark.parametrize("count", [0, 1, 7, 400])
def test_validation_encodes_both_engines_with_the_reference_shared_out(roberta, count):
    """The reference's share of the parity texts goes to one thread per core: the ids joined
    back are the library's own, text by text and in order, and no thread outlives the call."""
    from mintdim.build.contracts import TokenizerSpec
    from mintdim.build.tokenizer import load_encoder

    encoder = load_encoder(TokenizerSpec("hf_json", roberta, roberta, engine="fast"))
    texts = corpora_texts()[:count]
    utf8 = [text.encode() for text in texts]
    threads = threading.active_count()
    fast, reference = parity.encode_both(encoder, texts, utf8)
    assert threading.active_count() == threads
    expected = [encoder.reference.encode(text) for text in texts]
    assert reference[1].tolist() == fast[1].tolist() == [len(ids) for ids in expected]
    assert reference[0].tolist() == fast[0].tolist() == [i for ids in expected for i in ids]
    where = [("data.jsonl", line) for line in range(1, count + 1)]
    assert parity.compare(encoder, fast, reference, where, "first_rows") is None
    if fast[0].size:  # the first row whose ids differ is named, with its stage
        changed = (fast[0].copy(), fast[1])
        row = int(np.argmax(fast[1]))  # a text with ids
        changed[0][int(fast[1][:row].sum())] += 1
        error = parity.compare(encoder, changed, reference, where, "first_rows")
        assert (error.stage, error.line) == ("first_rows", row + 1)


_THREADS_AFTER_VALIDATION = """
import os, sys
import mintdim
from mintdim.build.validate import validate

def threads():
    # gigatoken's allocator (jemalloc) runs a background thread its own fork handlers manage.
    names = [open(f"/proc/self/task/{t}/comm").read() for t in os.listdir("/proc/self/task")]
    return sorted(name for name in names if not name.startswith("jemalloc"))

job = (
    mintdim.pipeline("unit-build")
    .source.jsonl(files=["data.jsonl"], fields=[["text"]], templates=["{text}"])
    .tokenizer.hf_json({"path": sys.argv[1], "engine": "fast"})
    .units(sizes=[[64, 4096]], build_batch=[2000])
    .output.dir("out", samples_per_shard=[1000])
)
before = threads()
validate(job._config)
print(before == threads(), before, threads())
"""


@pytest.mark.corpora
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_validation_leaves_no_tokenizer_thread_pool_behind_for_the_workers_fork(cwd, roberta):
    """The workers are forked from this process right after validation: the reference library's
    thread pool must never have started in it (validation encodes on threads of its own, gone
    when it returns). A fresh process, so no earlier test's pool is counted."""
    write_jsonl("data.jsonl", [{"text": text} for text in corpora_texts()])
    run = subprocess.run(
        [sys.executable, "-c", _THREADS_AFTER_VALIDATION, roberta],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        check=True,
    )
    assert run.stdout.startswith("True"), run.stdout


@pytest.mark.corpora
def test_gigatoken_loads_a_tokenizer_json_with_padding_and_truncation_switched_off(cwd, roberta):
    """A tokenizer.json that pads and truncates (as all-MiniLM-L6-v2's does) is rewritten with
    both off before gigatoken loads it: the fast engine gives the reference's exact ids."""
    from mintdim.build.contracts import TokenizerSpec
    from mintdim.build.tokenizer import load_encoder

    content = json.loads(Path(roberta).read_bytes())
    content["truncation"] = {
        "direction": "Right",
        "max_length": 4,
        "strategy": "LongestFirst",
        "stride": 0,
    }
    content["padding"] = {
        "strategy": {"Fixed": 64},
        "direction": "Right",
        "pad_to_multiple_of": None,
        "pad_id": 1,
        "pad_type_id": 0,
        "pad_token": "<pad>",
    }
    Path("tokenizer.json").write_text(json.dumps(content), encoding="utf-8")
    spec = TokenizerSpec("hf_json", "tokenizer.json", str(cwd / "tokenizer.json"), engine="fast")
    encoder = load_encoder(spec)
    assert isinstance(encoder, FastEncoder)
    texts = [text for text in corpora_texts() if len(text) > 1000][:50]
    flat, lengths = encoder.encode_batch(texts, [t.encode() for t in texts])
    expected = [encoder.reference.encode(text) for text in texts]
    assert max(map(len, expected)) > 64  # longer than either setting would let through
    assert lengths.tolist() == [len(ids) for ids in expected]
    assert flat.tolist() == [i for ids in expected for i in ids]


# ---------------------------------------------------------------------------
# Falling back, and the option itself
# ---------------------------------------------------------------------------


def test_fast_on_a_tokenizer_gigatoken_refuses_falls_back_and_says_why(cwd, sp_model, caplog):
    _needs_gigatoken()
    write_jsonl("data.jsonl", _rows(20, set()))
    caplog.set_level(logging.INFO, logger="mintdim")
    job(["data.jsonl"], {"path": str(sp_model), "engine": "fast"}).run(workers=1, progress=False)
    notices = [r.getMessage() for r in caplog.records if 'engine "fast"' in r.getMessage()]
    assert len(notices) == 1 and "unigram" in notices[0] and "sentencepiece 0." in notices[0]
    engine = read_json("out/manifest.json")["tokenizer"]["engine"]
    assert engine == {
        "declared": "fast",
        "ran": "reference",
        "library": engine["library"],
        "fallback_reason": "unsupported",
    }


def test_fast_without_gigatoken_falls_back_in_vietnamese_too(cwd, hf_json, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "gigatoken", None)  # import gigatoken raises ImportError
    monkeypatch.setenv("MINTDIM_LANG", "vi")
    write_jsonl("data.jsonl", _rows(20, set()))
    caplog.set_level(logging.INFO, logger="mintdim")
    job(["data.jsonl"], {"path": str(hf_json), "engine": "fast"}).run(workers=1, progress=False)
    notices = [r.getMessage() for r in caplog.records if 'engine "fast"' in r.getMessage()]
    assert len(notices) == 1 and "chưa cài gigatoken" in notices[0]
    engine = read_json("out/manifest.json")["tokenizer"]["engine"]
    assert (engine["ran"], engine["fallback_reason"]) == ("reference", "not_installed")


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_a_refusal_quoting_json_is_shown_as_the_library_wrote_it(
    cwd, hf_json, monkeypatch, caplog, lang
):
    """gigatoken's words reach the notice verbatim, braces and all: they are filled into a text
    that is formatted again when shown (a ``{`` once crashed the fallback instead of taking it)."""
    _needs_gigatoken()
    import gigatoken

    said = 'expected a model like {"type": "BPE"}, got {}'

    def refuse(data):
        raise RuntimeError(said)

    monkeypatch.setattr(gigatoken.Tokenizer, "from_json", refuse)
    monkeypatch.setenv("MINTDIM_LANG", lang)
    write_jsonl("data.jsonl", _rows(20, set()))
    caplog.set_level(logging.INFO, logger="mintdim")
    job(["data.jsonl"], {"path": str(hf_json), "engine": "fast"}).run(workers=1, progress=False)
    notices = [r.getMessage() for r in caplog.records if 'engine "fast"' in r.getMessage()]
    assert len(notices) == 1 and f"({said})" in notices[0]
    assert read_json("out/manifest.json")["tokenizer"]["engine"]["fallback_reason"] == "unsupported"


def test_reference_is_the_default_and_leaves_the_manifest_unchanged(cwd, hf_json):
    write_jsonl("data.jsonl", _rows(20, set()))
    job(["data.jsonl"], {"path": str(hf_json)}, out="./a").run(workers=1, progress=False)
    job(["data.jsonl"], {"path": str(hf_json), "engine": "reference"}, out="./b").run(
        workers=1, progress=False
    )
    assert tree_bytes("a") == tree_bytes("b")
    assert "engine" not in read_json("a/manifest.json")["tokenizer"]


@pytest.mark.parametrize("engine", ["turbo", "", 1, True, "FAST"])
def test_an_unknown_engine_is_a_config_error(cwd, hf_json, engine):
    write_jsonl("data.jsonl", _rows(2, set()))
    with pytest.raises(TokenizerValidationError) as caught:
        job(["data.jsonl"], {"path": str(hf_json), "engine": engine}).run(workers=1)
    assert (caught.value.problem, caught.value.option) == ("bad_option", "engine")
    assert not Path("out").exists()


# ---------------------------------------------------------------------------
# SentencePiece models converted once: the cache (tokenizer/converted.py)
# ---------------------------------------------------------------------------


def _mistral_encoder():
    from mintdim.build.contracts import TokenizerSpec
    from mintdim.build.tokenizer import load_encoder

    path = corpora_file("tokenizers/mistral-7b-v0.1.tokenizer.model")
    spec = TokenizerSpec(
        "sentencepiece", str(path), str(path), engine="fast", pad_fallback="eos", append_eos=True
    )
    encoder = load_encoder(spec)
    assert isinstance(encoder, FastEncoder)
    return encoder


def _assert_reference_ids(encoder: FastEncoder) -> None:
    texts = corpora_texts()[::7]
    flat, lengths = encoder.encode_batch(texts, [t.encode() for t in texts])
    expected = [encoder.reference.encode(text) for text in texts]
    assert lengths.tolist() == [len(ids) for ids in expected]
    assert flat.tolist() == [i for ids in expected for i in ids]


def _no_conversion(monkeypatch) -> list[bytes]:
    """Count gigatoken's own converter calls (the cache's misses)."""
    import gigatoken._load.sentencepiece as converter

    calls: list[bytes] = []
    real = converter.sentencepiece_to_tokenizer_json

    def counted(data: bytes) -> str:
        calls.append(data)
        return real(data)

    monkeypatch.setattr(converter, "sentencepiece_to_tokenizer_json", counted)
    return calls


@pytest.mark.corpora
def test_a_sentencepiece_model_is_converted_once_then_read_from_the_cache(monkeypatch, tmp_path):
    _needs_gigatoken()
    monkeypatch.setenv("MINTDIM_CACHE_DIR", str(tmp_path))
    calls = _no_conversion(monkeypatch)
    _assert_reference_ids(_mistral_encoder())
    kept = list((tmp_path / "fast-engine").iterdir())
    assert len(calls) == 1 and len(kept) == 1
    _assert_reference_ids(_mistral_encoder())
    assert len(calls) == 1  # the second load read the file
    assert list((tmp_path / "fast-engine").iterdir()) == kept


@pytest.mark.corpora
@pytest.mark.parametrize("damage", ["truncated", "one byte changed", "emptied"])
def test_a_damaged_cached_model_is_converted_afresh(monkeypatch, tmp_path, damage):
    _needs_gigatoken()
    monkeypatch.setenv("MINTDIM_CACHE_DIR", str(tmp_path))
    calls = _no_conversion(monkeypatch)
    _mistral_encoder()
    (kept,) = (tmp_path / "fast-engine").iterdir()
    data = kept.read_bytes()
    # A vocabulary entry's id changed still parses: only the digest in the name can tell.
    changed = data.replace(b'"\xe2\x96\x81the":', b'"\xe2\x96\x81tha":', 1)
    assert changed != data
    kept.write_bytes(
        {"truncated": data[: len(data) // 2], "one byte changed": changed, "emptied": b""}[damage]
    )
    _assert_reference_ids(_mistral_encoder())
    assert len(calls) == 2
    assert [p.read_bytes() for p in (tmp_path / "fast-engine").iterdir()] == [data]


@pytest.mark.corpora
def test_a_cache_directory_that_cannot_be_written_costs_the_conversion_not_the_build(
    monkeypatch, tmp_path
):
    _needs_gigatoken()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("MINTDIM_CACHE_DIR", str(blocked))
    calls = _no_conversion(monkeypatch)
    _assert_reference_ids(_mistral_encoder())
    _assert_reference_ids(_mistral_encoder())
    assert len(calls) == 2 and blocked.read_text() == "not a directory"


def test_the_cache_key_is_the_model_bytes_and_the_converter_version(monkeypatch, tmp_path):
    from mintdim.build.tokenizer.converted import converted

    monkeypatch.setenv("MINTDIM_CACHE_DIR", str(tmp_path))
    made: list[str] = []

    def convert(text: str):
        return lambda: made.append(text) or text.encode()

    assert converted(b"model", "gigatoken 1", convert("a")) == b"a"
    assert converted(b"model", "gigatoken 1", convert("b")) == b"a"  # kept
    assert converted(b"model", "gigatoken 2", convert("c")) == b"c"  # another converter
    assert converted(b"model!", "gigatoken 1", convert("d")) == b"d"  # another model
    assert made == ["a", "c", "d"]
    assert len(list((tmp_path / "fast-engine").iterdir())) == 3


def test_without_a_home_nothing_is_kept_and_the_model_still_converts(monkeypatch):
    """A container's uid with neither $HOME nor a passwd entry: Path.home() raises, the cache is
    skipped, the conversion is not."""
    from pathlib import Path

    from mintdim.build.tokenizer.converted import cache_dir, converted

    for name in ("MINTDIM_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def homeless(cls=None):
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", classmethod(homeless))
    assert cache_dir() is None
    made: list[int] = []
    assert converted(b"model", "gigatoken 1", lambda: made.append(1) or b"json") == b"json"
    assert converted(b"model", "gigatoken 1", lambda: made.append(1) or b"json") == b"json"
    assert made == [1, 1]

"""``mintdim decontaminate`` and ``mintdim verify DIR`` from the command line, and every named
error in English and Vietnamese, with nothing half-written left looking complete."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import mintdim
from mintdim.cli import main
from tests.decontaminate.conftest import GSM8K, MODEL, make_build, training_rows
from tests.test_vietnamese import assert_vietnamese
from tests.unit_build.helpers import tree_bytes

AGAINST = [{"path": str(GSM8K), "fields": ["question", "answer"]}]


def run(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="mintdim")


def _both_languages(error: mintdim.MintDimError) -> None:
    english, vietnamese = error.message("en"), error.message("vi")
    assert english != vietnamese
    assert_vietnamese("\n".join(vietnamese.splitlines()[1:]))


@pytest.fixture(scope="module")
def made(planted: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "out"
    result = run(
        "decontaminate",
        str(planted),
        "--against",
        f"{GSM8K}:question,answer",
        "--out",
        str(out),
        "--workers",
        "2",
    )
    assert result.exit_code == 0, result.output
    assert "gsm8k_test_first300" in result.output
    return out


def test_command_writes_and_verify_passes(made: Path) -> None:
    found = run("verify", str(made))
    assert found.exit_code == 0, found.output
    assert "OK: decontamination" in found.output
    found = run("--lang", "vi", "verify", str(made), "--json")
    assert found.exit_code == 0
    assert json.loads(found.output)["kind"] == "decontamination"
    assert run("verify", str(made / "clean")).exit_code == 0


def test_verify_fails_on_a_changed_clean_shard(made: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(made, copy)
    shard = sorted((copy / "clean").rglob("shard_*.bin"))[0]
    data = bytearray(shard.read_bytes())
    data[0] ^= 1
    shard.write_bytes(bytes(data))
    found = run("verify", str(copy))
    assert found.exit_code == 1
    assert "clean/" in found.output


def test_verify_fails_on_an_edited_manifest(made: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(made, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["options"]["min_matches"] = 5
    (copy / "manifest.json").write_text(json.dumps(manifest))
    found = run("verify", str(copy))
    assert found.exit_code == 1
    assert "manifest" in found.output


def _drop_the_first_hit_and_reseal(directory: Path) -> None:
    """contamination.jsonl without its first line, listed again with its new digest in a
    manifest sealed again: only the pass can tell."""
    from mintdim.split import layout

    hits = directory / "contamination.jsonl"
    hits.write_text("".join(hits.read_text().splitlines(keepends=True)[1:]))
    content = json.loads((directory / "manifest.json").read_text())
    content["files"]["contamination.jsonl"] = layout.file_record(hits)
    (directory / "manifest.json").unlink()
    layout.write_manifest(directory, content)


def test_verify_fails_on_an_edited_list_even_with_its_digest(made: Path, tmp_path: Path) -> None:
    """A sample dropped from contamination.jsonl and the manifest resealed: the pass finds the
    clean build and the list no longer cover every sample."""
    copy = tmp_path / "copy"
    shutil.copytree(made, copy)
    _drop_the_first_hit_and_reseal(copy)
    found = run("verify", str(copy))
    assert found.exit_code == 1, found.output
    assert "coverage" in found.output


def test_verify_of_an_incomplete_directory_exits_2(tmp_path: Path) -> None:
    (tmp_path / "contamination.jsonl").write_text("")
    assert run("verify", str(tmp_path)).exit_code == 2


def test_not_fresh_output_is_refused_and_untouched(planted: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(mintdim.OutputNotFreshError) as caught:
        mintdim.decontaminate(planted, out, against=AGAINST)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert (out / "keep.txt").read_text() == "mine"
    _both_languages(caught.value)
    found = run("decontaminate", str(planted), "--against", f"{GSM8K}:question", "--out", str(out))
    assert found.exit_code == 1


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"ngram": 0}, "ngram"),
        ({"min_matches": 0}, "min_matches"),
        ({"min_tokens": -1}, "min_tokens"),
        ({"item_coverage": 1.5}, "item_coverage"),
        ({"match": "chars"}, "match"),
        ({"workers": 0}, "workers"),
        ({"report_only": "yes"}, "report_only"),
        ({"against": []}, "against"),
        ({"against": ["gsm8k.jsonl"]}, "--against"),
        ({"against": [{"path": str(GSM8K)}]}, "against"),
        ({"against": [f"{GSM8K}:question", f"{GSM8K}:answer"]}, "against.name"),
    ],
)
def test_bad_options_are_named(planted: Path, tmp_path: Path, options: dict, option: str) -> None:
    arguments = {"against": AGAINST, **options}
    with pytest.raises(mintdim.DecontaminateOptionError) as caught:
        mintdim.decontaminate(planted, tmp_path / "o", **arguments)
    assert caught.value.option == option
    assert not (tmp_path / "o").exists()
    _both_languages(caught.value)


def test_missing_benchmark_file(planted: Path, tmp_path: Path) -> None:
    with pytest.raises(mintdim.BenchmarkFileError) as caught:
        mintdim.decontaminate(planted, tmp_path / "o", against=[f"{tmp_path}/none.jsonl:q"])
    assert caught.value.problem == "missing"
    assert not (tmp_path / "o").exists()
    _both_languages(caught.value)
    found = run(
        "decontaminate", str(planted), "--against", f"{tmp_path}/none.jsonl:q", "--out", "x"
    )
    assert found.exit_code == 1 and "none.jsonl" in found.output


def test_unreadable_and_empty_benchmark_files(planted: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(mintdim.BenchmarkFileError) as caught:
        mintdim.decontaminate(planted, tmp_path / "o", against=[f"{empty}:q"])
    assert caught.value.problem == "empty"
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(mintdim.BenchmarkFileError):
        mintdim.decontaminate(planted, tmp_path / "o", against=[f"{folder}:q"])
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"q": "fine"}\n{"q": \n')
    with pytest.raises(mintdim.SourceParseError) as parse:
        mintdim.decontaminate(planted, tmp_path / "o", against=[f"{broken}:q"])
    assert "broken.jsonl" in parse.value.message("en")


def test_a_field_the_benchmark_lacks(planted: Path, tmp_path: Path) -> None:
    with pytest.raises(mintdim.BenchmarkFieldError) as caught:
        mintdim.decontaminate(planted, tmp_path / "o", against=[f"{GSM8K}:question,solution"])
    error = caught.value
    assert (error.field, error.line, error.available) == ("solution", 1, ["question", "answer"])
    assert "gsm8k_test_first300.jsonl:1" in error.message("en")
    _both_languages(error)
    typed = tmp_path / "typed.jsonl"
    typed.write_text('{"q": "a text"}\n{"q": 3}\n')
    with pytest.raises(mintdim.BenchmarkFieldError) as caught:
        mintdim.decontaminate(planted, tmp_path / "o", against=[f"{typed}:q"])
    assert (caught.value.problem, caught.value.line, caught.value.found) == ("type", 2, "int")


def test_a_build_that_is_not_finished(planted: Path, tmp_path: Path) -> None:
    half = tmp_path / "half"
    shutil.copytree(planted, half)
    (half / "manifest.json").unlink()
    with pytest.raises(mintdim.NotABuildError):
        mintdim.decontaminate(half, tmp_path / "o", against=AGAINST)
    found = run("decontaminate", str(half), "--against", f"{GSM8K}:question", "--out", "o")
    assert found.exit_code == 2


def test_a_tokenizer_that_changed(tmp_path: Path) -> None:
    model = tmp_path / "model.model"
    shutil.copy(MODEL, model)
    build = make_build(tmp_path, training_rows()[:20], model=model)
    model.write_bytes(model.read_bytes() + b"\0")
    with pytest.raises(mintdim.TokenizerChangedError) as caught:
        mintdim.decontaminate(build, tmp_path / "o", against=AGAINST)
    assert caught.value.found and caught.value.found != caught.value.expected
    _both_languages(caught.value)
    # Words do not depend on the tokenizer.
    mintdim.decontaminate(build, tmp_path / "w", against=AGAINST, match="words")
    model.unlink()
    with pytest.raises(mintdim.TokenizerChangedError) as caught:
        mintdim.decontaminate(build, tmp_path / "o", against=AGAINST)
    assert caught.value.found == ""


def test_a_packed_build_is_refused(tmp_path: Path) -> None:
    from mintdim import pipeline

    data = tmp_path / "p.jsonl"
    data.write_text("".join(json.dumps({"text": f"sample {i} " * 3}) + "\n" for i in range(40)))
    out = tmp_path / "packed"
    (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece([{"path": str(MODEL)}])
        .units(sizes=[[64]], build_batch=[64], pack=True)
        .output.dir(str(out), samples_per_shard=[16])
        .run(workers=1, progress=False, on_overflow="extend")
    )
    with pytest.raises(mintdim.PackedDecontaminateError) as caught:
        mintdim.decontaminate(out, tmp_path / "o", against=AGAINST)
    _both_languages(caught.value)


def test_a_failed_verification_leaves_no_manifest(planted: Path, tmp_path: Path, monkeypatch):
    from mintdim.decontaminate import job

    def failing(*args, **kwargs):
        return {
            "ok": False,
            "checks": [{"check": "coverage", "ok": False, "failures": 1, "examples": [3]}],
        }

    monkeypatch.setattr(job, "verify", failing)
    with pytest.raises(mintdim.DecontaminationVerificationError) as caught:
        mintdim.decontaminate(planted, tmp_path / "o", against=AGAINST)
    assert not (tmp_path / "o" / "manifest.json").exists()
    assert (tmp_path / "o" / "FAILED.md").is_file()
    _both_languages(caught.value)
    assert run("verify", str(tmp_path / "o")).exit_code == 2


def test_words_and_report_only_directories_verify(planted: Path, tmp_path: Path) -> None:
    out = tmp_path / "w"
    found = run(
        "decontaminate",
        str(planted),
        "--against",
        f"{GSM8K}:question,answer",
        "--out",
        str(out),
        "--match",
        "words",
        "--report-only",
    )
    assert found.exit_code == 0, found.output
    assert not (out / "clean").exists()
    checked = run("verify", str(out))
    assert checked.exit_code == 0, checked.output
    assert "ran again" in checked.output
    # The report-only pass searches every sample again: a retained sample that holds an item
    # fails it even with every digest made to match.
    _drop_the_first_hit_and_reseal(out)
    checked = run("verify", str(out))
    assert checked.exit_code == 1
    assert "retained_clean" in checked.output


def test_words_mode_is_the_same_whatever_the_worker_count(planted: Path, tmp_path: Path) -> None:
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        mintdim.decontaminate(planted, out, against=AGAINST, match="words", workers=workers)
        outs.append(out)
    assert tree_bytes(outs[0]) == tree_bytes(outs[1])


def test_a_full_disk_is_a_named_error_and_nothing_looks_complete(planted, small_disk):
    """A tmpfs too small for the clean build really fills: BuildWriteError naming the output
    directory (place "derived"), no manifest (verify says incomplete), the input untouched."""
    disk = small_disk("128k")
    out = disk / "out"
    before = tree_bytes(planted)
    found = run(
        "decontaminate", str(planted), "--against", f"{GSM8K}:question,answer", "--out", str(out)
    )
    assert found.exit_code != 0
    assert "BuildWriteError" in found.output and "--out" in found.output
    with pytest.raises(mintdim.BuildWriteError) as caught:
        mintdim.decontaminate(planted, disk / "again", against=AGAINST)
    assert (caught.value.place, caught.value.reason) == ("derived", "disk_full")
    assert str(disk / "again") in caught.value.message("en")
    # (Its detail is the operating system's own words, in English.)
    assert "Không ghi được một file của build." in caught.value.message("vi")
    for directory in (out, disk / "again"):
        assert not (directory / "manifest.json").exists()
        assert run("verify", str(directory)).exit_code == 2
    assert tree_bytes(planted) == before


def test_the_file_size_limit_is_a_named_error(planted, tmp_path):
    """RLIMIT_FSIZE in a child, below the clean build's sample index: BuildWriteError with
    file_too_large, place derived, naming the directory; no manifest."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    script = f"""
import resource, sys
import mintdim
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
try:
    mintdim.decontaminate({str(planted)!r}, {str(out)!r}, against=[{f"{GSM8K}:question,answer"!r}])
except mintdim.BuildWriteError as err:
    print(err.reason, err.place, err.directory)
    sys.exit(3)
"""
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 3 and "Operation not permitted" in done.stderr:
        pytest.skip("cannot set RLIMIT_FSIZE here")
    assert (done.returncode, done.stdout.split()) == (3, ["file_too_large", "derived", str(out)])
    assert not (out / "manifest.json").exists()
    assert run("verify", str(out)).exit_code == 2

"""``open_split`` trains without ever touching the test set, and ``mintdim verify SPLIT`` finds a
moved, dropped or duplicated sample and a changed record even when every digest was made to
match again. Tests run as root: the test set is renamed away or damaged, never chmod-ed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import mintdim
from mintdim import SplitDamagedError, SplitOptionError, open_split
from mintdim.cli import main
from mintdim.split.samples import read_build
from mintdim.split.write import write_builds
from tests.unit_build.helpers import reseal_build

from .conftest import ALIAS_RULES, write_sealed


@pytest.fixture(scope="module")
def made(related, tmp_path_factory) -> tuple[Path, Path]:
    """(groups, split) of the related build: a window of 16, seed 11."""
    root = tmp_path_factory.mktemp("made")
    mintdim.group(related[0], root / "groups", keys=["work"], alias_rules=ALIAS_RULES)
    mintdim.split(
        related[0],
        root / "groups",
        root / "split",
        seed=11,
        ratios="train=0.7,validation=0.15,test=0.15",
        window=16,
    )
    return root / "groups", root / "split"


@pytest.fixture
def copy(made, tmp_path) -> Path:
    """A private copy of the split."""
    target = tmp_path / "split"
    shutil.copytree(made[1], target)
    return target


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _train_everything(split) -> int:
    seen = 0
    for build in (split.train, split.validation):
        for batch in build.loader(batch_size=8, seed=0, drop_last=False):
            seen += len(batch.sample_ids)
    return seen


def test_train_validation_and_windows(made) -> None:
    split = open_split(made[1])
    lines = _lines(made[1] / "splits.jsonl")
    assert len(split.train) == sum(line["split"] == "train" for line in lines)
    assert len(split.validation) == sum(line["split"] == "validation" for line in lines)
    assert _train_everything(split) == len(split.train) + len(split.validation)
    windows = _lines(made[1] / "evaluation-windows.jsonl")
    assert split.windows("validation") == [w for w in windows if w["split"] == "validation"]
    assert split.windows() == split.windows("validation")
    with pytest.raises(mintdim.TestSetLockedError) as caught:
        split.test  # noqa: B018
    assert "final_evaluation=True" in caught.value.message("en")
    assert "đánh giá cuối cùng" in caught.value.message("vi")
    with pytest.raises(mintdim.TestSetLockedError):
        split.windows("test")
    with pytest.raises(SplitOptionError):
        split.windows("train")
    final = open_split(made[1], final_evaluation=True)
    assert len(final.test) == sum(line["split"] == "test" for line in lines)
    assert final.windows("test") == [w for w in windows if w["split"] == "test"]


def test_training_works_with_the_test_set_renamed_away(copy, tmp_path) -> None:
    (copy / "test").rename(tmp_path / "elsewhere")
    split = open_split(copy)
    assert _train_everything(split) == len(split.train) + len(split.validation)
    with pytest.raises(mintdim.TestSetLockedError):
        split.test  # noqa: B018
    with pytest.raises(SplitDamagedError) as caught:
        open_split(copy, final_evaluation=True)
    assert (caught.value.path, caught.value.problem) == ("test/manifest.json", "missing")


def test_training_works_with_the_test_set_damaged(copy) -> None:
    shard = next((copy / "test").rglob("shard_*.bin"))
    shard.write_bytes(shard.read_bytes()[:-3])
    (copy / "test" / "manifest.json").write_text("{ not json")
    (copy / "test" / "sample_index.jsonl").unlink()
    split = open_split(copy, full_check=True)
    assert _train_everything(split) == len(split.train) + len(split.validation)
    with pytest.raises(SplitDamagedError):
        open_split(copy, final_evaluation=True)


def test_a_damaged_training_file_is_named(copy) -> None:
    shard = next((copy / "train").rglob("shard_*.bin"))
    data = bytearray(shard.read_bytes())
    data[0] ^= 1
    shard.write_bytes(bytes(data))
    open_split(copy)  # a same-size change in a shard is found by hashing it ...
    with pytest.raises(SplitDamagedError) as caught:
        open_split(copy, full_check=True)
    assert caught.value.problem == "sha256"
    assert caught.value.path == str(shard.relative_to(copy))
    shard.write_bytes(bytes(data[:-2]))  # ... a size change always
    with pytest.raises(SplitDamagedError) as caught:
        open_split(copy)
    assert caught.value.problem == "size" and "khác với manifest" in caught.value.message("vi")
    (copy / "validation" / "stats.json").write_text("{}")
    shard.unlink()
    with pytest.raises(SplitDamagedError) as caught:
        open_split(copy)
    assert caught.value.problem in ("missing", "sha256")


# ---------------------------------------------------------------------------
# mintdim verify SPLIT
# ---------------------------------------------------------------------------


def _verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", *args])
    return result.exit_code, result.output


def test_an_intact_split_verifies(made) -> None:
    code, output = _verify(str(made[1]))
    assert code == 0, output
    assert "every build, file and invariant holds" in output
    assert "compared with the input build" in output
    code, output = _verify(str(made[1]), "--lang", "vi")
    assert code == 0 and "mọi bản build, file và bất biến đều đạt" in output
    code, output = _verify(str(made[1]), "--json")
    report = json.loads(output)
    assert code == 0 and report["ok"] and report["kind"] == "split"
    assert {check["check"] for check in report["checks"]} == {
        "coverage",
        "copied_tokens",
        "groups",
        "joins",
        "windows",
    }


def test_no_split_or_an_incomplete_one_exits_2(copy, tmp_path) -> None:
    code, output = _verify(str(tmp_path / "nothing"))
    assert code == 2
    (copy / "manifest.json").unlink()
    code, output = _verify(str(copy))
    assert code == 2 and "holds no complete split (mintdim split)" in output
    code, output = _verify(str(copy), "--lang", "vi")
    assert code == 2 and "không chứa phân chia (mintdim split) hoàn chỉnh" in output


def _reseal_split(split: Path) -> None:
    """Make the split's manifest vouch for its builds and files as they now are."""
    path = split / "manifest.json"
    content = json.loads(path.read_text())
    for name, entry in content["builds"].items():
        entry["manifest_sha256"] = hashlib.sha256(
            (split / name / "manifest.json").read_bytes()
        ).hexdigest()
    training = []
    for name in ("train", "validation"):
        for file in sorted((split / name).rglob("*")):
            if file.is_file() and file.name != "EMPTY_UNIT.md":
                data = file.read_bytes()
                relative = str(file.relative_to(split))
                training.append(
                    {
                        "path": relative,
                        "bytes": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(),
                    }
                )
    data = (split / "evaluation-windows.jsonl").read_bytes()
    training.append(
        {
            "path": "evaluation-windows.jsonl",
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    )
    content["training_files"] = training
    write_sealed(path, content)


def _rewritten(related_build: Path, copy: Path, tmp_path: Path, move: int, to: int) -> Path:
    """The split's builds written again with input sample ``move`` in split ``to``."""
    samples = read_build(related_build)
    names = ("train", "validation", "test")
    split_of = np.array([names.index(line["split"]) for line in _lines(copy / "splits.jsonl")])
    split_of[move] = to
    target = tmp_path / "rewritten"
    target.mkdir()
    manifest = json.loads((copy / "train" / "manifest.json").read_text())
    common = {k: v for k, v in manifest["derived_from"].items() if k != "split"}
    write_builds(samples, split_of, target, {name: {**common, "split": name} for name in names})
    return target


def _replace(copy: Path, rewritten: Path, names: tuple[str, ...]) -> None:
    for name in names:
        shutil.rmtree(copy / name)
        shutil.copytree(rewritten / name, copy / name)
    _reseal_split(copy)


def _a_test_sample(copy: Path) -> int:
    return next(
        line["sample_id"] for line in _lines(copy / "splits.jsonl") if line["split"] == "test"
    )


def _failed(copy: Path) -> str:
    code, output = _verify(str(copy))
    assert code == 1, output
    return output


def test_a_moved_sample_is_found(related, copy, tmp_path) -> None:
    moved = _a_test_sample(copy)
    _replace(copy, _rewritten(related[0], copy, tmp_path, moved, 0), ("train", "test"))
    for name in ("train", "test"):  # each build alone is intact
        assert mintdim.check.verify.verify_build(copy / name).ok
    output = _failed(copy)
    assert f"input sample {moved} is train sample" in output and "splits.jsonl says test" in output


def test_a_dropped_sample_is_found(related, copy, tmp_path) -> None:
    dropped = _a_test_sample(copy)
    _replace(copy, _rewritten(related[0], copy, tmp_path, dropped, 0), ("test",))
    assert f"input sample {dropped} is in no split" in _failed(copy)


def test_a_duplicated_sample_is_found(related, copy, tmp_path) -> None:
    twice = _a_test_sample(copy)
    _replace(copy, _rewritten(related[0], copy, tmp_path, twice, 0), ("train",))
    output = _failed(copy)
    assert f"input sample {twice} is in 2 places" in output
    code, vietnamese = _verify(str(copy), "--lang", "vi")
    assert code == 1 and "THẤT BẠI" in vietnamese


def test_a_changed_record_is_found_though_every_digest_matches(copy) -> None:
    train = mintdim.open_build(copy / "train")
    row = next(row for row in train.samples() if row["token_count"] >= 3)
    shard = copy / "train" / row["shard_path"]
    records = np.fromfile(shard, dtype=train.dtype).reshape(-1, row["unit_size"])
    a, b = records[row["shard_row"], 1], records[row["shard_row"], 2]
    records[row["shard_row"], 1], records[row["shard_row"], 2] = (b, a) if a != b else (a, a + 1)
    records.tofile(shard)
    reseal_build(copy / "train")
    _reseal_split(copy)
    assert mintdim.check.verify.verify_build(copy / "train").ok  # the build alone cannot tell
    output = _failed(copy)
    assert f"train sample {row['sample_id']} (input {row['source_sample_id']})" in output
    assert "token SHA-256 differs from splits.jsonl" in output


def test_a_changed_split_file_or_build_is_found(copy) -> None:
    lines = (copy / "group-joins.jsonl").read_bytes().splitlines(keepends=True)
    (copy / "group-joins.jsonl").write_bytes(b"".join(lines[1:]))
    output = _failed(copy)
    assert "group-joins.jsonl: " in output and "bytes, the manifest lists" in output
    (copy / "validation" / "stats.json").write_text("{}")
    output = _failed(copy)
    assert "validation/stats.json" in output

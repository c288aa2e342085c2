"""Every public option of run(), scan(), loader(), plan_units() and open_build(), checked one way.

A bool is a bool (``numpy.bool_`` too), an int an int (numpy integers too, ``True`` never), and
anything else is the function's named error, naming the option and showing the value, in both
languages. The table below holds, for every option, values of the wrong type and out of range;
the second half shows that numpy values are taken as the plain values they stand for.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mintdim
from mintdim import (
    LoaderOptionError,
    NotABuildError,
    RunOptionError,
    UnitPlanError,
    open_build,
    pipeline,
    plan_units,
)
from mintdim.errors.base import _show
from tests.conftest import training_text
from tests.unit_build.helpers import job, tree_bytes, write_jsonl

COUNTS = np.array([3, 5, 5, 8, 13, 21, 21, 34])


@pytest.fixture(scope="module")
def built(tmp_path_factory, sp_model) -> Path:
    root = tmp_path_factory.mktemp("options")
    data = write_jsonl(root / "a.jsonl", [{"text": t} for t in training_text(40, seed=3)])
    out = root / "out"
    job([str(data)], sp_model, out=str(out), samples_per_shard=(7,)).run(workers=1)
    return out


def _call(function: str, options: dict[str, Any], build: Path) -> object:
    """Call ``function`` with otherwise valid arguments and ``options``."""
    if function == "run":
        return pipeline("unit-build").run(**options)
    if function == "scan":
        return pipeline("unit-build").scan(**options)
    if function == "loader":
        builds = options.pop("builds", [build])
        return mintdim.loader(builds, **{"batch_size": 2, **options})
    if function == "build.loader":
        return open_build(build).loader(**{"batch_size": 2, **options})
    if function == "plan_units":
        counts = options.pop("counts", COUNTS)
        return plan_units(counts, options.pop("count", 2), **options)
    if function == "open_build":
        return open_build(options["path"])
    raise AssertionError(function)


# (function, option, bad value, more options, error class, rule code)
_RUN_SCAN = [
    (function, option, value, {}, RunOptionError, rule)
    for function in ("run", "scan")
    for option, values, rule in [
        ("workers", [0, -1, "2", True, np.True_, 1.5, np.float64(2)], "positive_int"),
        ("progress", ["no", "yes", 0, 1, np.int64(1)], "bool"),
    ]
    for value in values
]
_RUN = [
    ("run", option, value, more, RunOptionError, rule)
    for option, values, more, rule in [
        ("on_overflow", ["wrap", 1, None], {}, "overflow_policy"),
        ("executor", ["thread", None, 1], {}, "executor"),
        ("ray_address", ["", 5, True], {"executor": "ray"}, "address"),
        ("ray_address", ["auto"], {}, "ray_only"),
        ("resume", ["no", "yes", 0, 1, None, np.int64(0)], {}, "bool"),
        ("piece_bytes", [0, -4096, "4096", True, 4096.0, np.uint8(0)], {}, "positive_int"),
        ("resumable", ["no", "yes", 0, 1, None], {}, "bool"),
        ("resumable", [False, np.False_], {"resume": True}, "resume_stages"),
    ]
    for value in values
]
_LOADERS = [
    ("loader", "builds", value, {}, LoaderOptionError, "builds")
    for value in ["./out", Path("out"), 3, None]
] + [
    (function, option, value, more, LoaderOptionError, rule)
    for function in ("loader", "build.loader")
    for option, values, more, rule in [
        ("batch_size", [0, -2, "2", True, 1.5, np.True_], {}, "positive_int"),
        ("tokens_per_batch", [0, "64", 64.0], {"batch_size": None}, "positive_int"),
        ("seed", [-1, "0", True, 0.0, np.int64(-1)], {}, "non_negative_int"),
        ("epoch", [-1, "1", False, 1.0], {}, "non_negative_int"),
        ("world_size", [0, "2", True, 2.0], {}, "positive_int"),
        ("rank", [1, -1, "0", True, 0.0, np.int64(1)], {}, "rank"),
        ("accum_steps", [0, "2", True, 2.5], {}, "positive_int"),
        ("drop_last", ["no", "yes", "False", 0, 1, None, np.int64(0)], {}, "bool"),
        ("widen", ["yes", "no", 0, 1, None], {}, "bool"),
        ("ignore_id", ["x", "-100", 1.5, True, 2**63, -(2**63) - 1, None], {}, "int64"),
        ("weights", [[1, 2]], {}, "count"),
        (
            "weights",
            [[0], [-1.0], ["1"], [True], [float("nan")], [np.float32("inf")]],
            {},
            "weights",
        ),
        ("targets", [[], [1]], {}, "targets"),
    ]
    for value in values
]
_PLANNER = [
    ("plan_units", option, value, more, UnitPlanError, rule)
    for option, values, more, rule in [
        ("counts", [[[3, 5]], [1.5, 2.0], [3, -1], "35"], {}, "counts"),
        ("count", [0, -1, "2", True, 2.0, np.True_], {}, "positive_int"),
        ("align", [0, "8", True, 8.0], {}, "positive_int"),
        ("max_size", [0, "64", True, 64.0], {}, "positive_int"),
        ("max_size", [4, np.int64(4)], {"align": 8}, "below_align"),
        ("cost", ["flops", None, 1], {}, "cost"),
        (
            "unit_cost",
            [-1, float("inf"), float("nan"), np.float64(-0.5)],
            {"count": None},
            "non_negative",
        ),
        ("unit_cost", ["1", True, None], {"count": None}, "count_or_cost"),
        ("unit_cost", [1.0], {}, "count_or_cost"),
    ]
    for value in values
]
BAD = _RUN_SCAN + _RUN + _LOADERS + _PLANNER


def _code(error: Exception) -> str:
    return next(getattr(error, name) for name in ("rule", "problem") if hasattr(error, name))


def _name(error: Exception) -> str:
    return next(getattr(error, name) for name in ("option", "key") if hasattr(error, name))


@pytest.mark.parametrize(
    ("function", "option", "value", "more", "error", "rule"),
    BAD,
    ids=[f"{row[0]}-{row[1]}={row[2]!r}" for row in BAD],
)
def test_a_bad_option_is_the_functions_named_error(
    built, cwd, function, option, value, more, error, rule
):
    with pytest.raises(error) as caught:
        _call(function, {**more, option: value}, built)
    err = caught.value
    assert type(err) is error
    assert (_name(err), _code(err)) == (option, rule)
    for lang in ("en", "vi"):
        text = err.message(lang)
        assert option in text
        if option not in ("counts", "weights", "targets"):  # shown as a whole
            # A rule checked after the type shows the plain value a numpy one stands for.
            plain = value.item() if isinstance(value, np.generic) else value
            assert _show(value) in text or _show(plain) in text, text
    assert not (cwd / "out").exists()


@pytest.mark.parametrize("value", [123, None, 1.5, b"./out", ["./out"]])
@pytest.mark.parametrize("how", ["open_build", "loader"])
def test_open_build_names_a_value_that_is_no_path(built, how, value):
    with pytest.raises(NotABuildError) as caught:
        if how == "open_build":
            open_build(value)
        else:
            mintdim.loader([built, value], batch_size=2)
    assert caught.value.reason == "not_a_path"
    for lang in ("en", "vi"):
        assert repr(value) in caught.value.message(lang)
        assert "os.PathLike" in caught.value.message(lang)


def test_every_rule_the_shared_checks_raise_has_a_text_in_every_option_error():
    from mintdim.errors.base import _OPTION_RULES
    from mintdim.options import INT_RULES

    codes = {"bool", *INT_RULES}
    assert codes == set(_OPTION_RULES)
    for error, field in ((RunOptionError, "rule"), (LoaderOptionError, "problem")):
        for code in codes:
            shown = error(option="x", value="v", **{field: code}).message("vi")
            assert "x" in shown and "'v' (str)" in shown
    for code in codes:
        assert "'v' (str)" in UnitPlanError(key="x", value="v", rule=code).message("vi")


# ---------------------------------------------------------------------------
# numpy values are the plain values they stand for
# ---------------------------------------------------------------------------


def test_the_loader_takes_numpy_ints_and_bools_as_plain_ones(built):
    plain = {
        "batch_size": 3,
        "seed": 2,
        "epoch": 1,
        "rank": 1,
        "world_size": 2,
        "drop_last": False,
        "accum_steps": 2,
        "ignore_id": -7,
        "widen": True,
        "weights": [2],
    }
    numpy = {
        "batch_size": np.int64(3),
        "seed": np.uint8(2),
        "epoch": np.int32(1),
        "rank": np.int16(1),
        "world_size": np.uint64(2),
        "drop_last": np.False_,
        "accum_steps": np.int8(2),
        "ignore_id": np.int64(-7),
        "widen": np.True_,
        "weights": np.array([2], dtype=np.float32),
    }
    expected = mintdim.loader([built], **plain)
    got = mintdim.loader([built], **numpy)
    assert got.options == expected.options
    for field in ("drop_last", "widen"):
        assert getattr(got.options, field) is plain[field]
    for field in ("batch_size", "seed", "rank", "world_size", "accum_steps", "ignore_id"):
        assert type(getattr(got.options, field)) is int
    assert got.epoch == 1 and type(got.epoch) is int
    assert len(got) == len(expected) > 0
    for a, b in zip(got, expected, strict=True):
        assert a.sample_ids.tolist() == b.sample_ids.tolist()
        assert a.input_ids.dtype == np.int64 and (a.labels == b.labels).all()
        assert (a.labels[a.attention_mask == 0] == -7).all()
    got.set_epoch(np.int64(2))
    assert got.epoch == 2 and type(got.epoch) is int


@pytest.mark.parametrize("text", ["no", "False", "false", "0", ""])
def test_drop_last_read_as_a_string_is_refused_not_taken_as_true(built, text):
    with pytest.raises(LoaderOptionError) as caught:
        open_build(built).loader(batch_size=4, drop_last=text)
    assert caught.value.problem == "bool"
    assert "drop_last phải là True hoặc False" in caught.value.message("vi")


def test_plan_units_takes_numpy_ints_as_plain_ones():
    plain = plan_units(COUNTS, 2, align=4, max_size=32)
    numpy = plan_units(COUNTS, np.int64(2), align=np.uint8(4), max_size=np.int32(32))
    assert numpy.sizes == plain.sizes and numpy.manifest_record() == plain.manifest_record()
    assert all(type(v) is int for v in (numpy.count, numpy.align, numpy.max_size))
    chosen = plan_units(COUNTS, None, unit_cost=np.int64(5))
    assert chosen.manifest_record() == plan_units(COUNTS, None, unit_cost=5).manifest_record()


def test_units_auto_takes_numpy_options_and_records_plain_ones(cwd, sp_model):
    write_jsonl("a.jsonl", [{"text": t} for t in training_text(30, seed=4)])
    declared = job(["./a.jsonl"], sp_model, out="./plain")
    declared.units(sizes="auto", build_batch=[4], count=2, align=8).run(workers=1)
    declared = declared.output.dir("./numpy", samples_per_shard=[100])
    declared.units(sizes="auto", build_batch=[4], count=np.int64(2), align=np.int8(8)).run(
        workers=1
    )
    plain = json.loads((cwd / "plain" / "manifest.json").read_bytes())["units"]
    numpy = json.loads((cwd / "numpy" / "manifest.json").read_bytes())["units"]
    assert numpy == plain and plain["planned"]["count"] == 2 and plain["planned"]["align"] == 8


def test_run_takes_numpy_ints_and_bools_as_plain_ones(cwd, sp_model):
    write_jsonl("a.jsonl", [{"text": t} for t in training_text(30, seed=4)])
    job(["./a.jsonl"], sp_model, out="./plain").run(
        workers=1, progress=False, resume=False, piece_bytes=512, resumable=True
    )
    job(["./a.jsonl"], sp_model, out="./numpy").run(
        workers=np.int64(1),
        progress=np.False_,
        resume=np.False_,
        piece_bytes=np.uint32(512),
        resumable=np.True_,
    )
    plain, numpy = tree_bytes("plain"), tree_bytes("numpy")
    assert plain.keys() == numpy.keys() and len(plain) > 3
    for name in plain:
        if name != "manifest.json":  # it names its output directory
            assert plain[name] == numpy[name], name


def test_declared_counts_take_numpy_ints_and_record_plain_ones(cwd, sp_model):
    """Unit sizes, build_batch, samples_per_shard and max_line_bytes computed with numpy (sizes
    from percentiles, say) build what the same Python ints build: every file byte for byte."""
    write_jsonl("a.jsonl", [{"text": t} for t in training_text(30, seed=4)])
    for out, number in (("./plain", int), ("./numpy", np.int64), ("./numpy32", np.uint32)):
        declared = job(
            ["./a.jsonl"],
            sp_model,
            out=out,
            sizes=[[number(8), number(16), number(32), number(64)]],
            build_batch=[number(4)],
            samples_per_shard=[number(7)],
        )
        declared = declared.source.jsonl(
            files=["./a.jsonl"],
            fields=[["text"]],
            templates=["{text}"],
            max_line_bytes=number(4096),
        )
        declared.run(workers=1, progress=False)
    plain = tree_bytes("plain")
    assert len(plain) > 5
    for other in ("numpy", "numpy32"):
        got = tree_bytes(other)
        assert got.keys() == plain.keys()
        for name in plain:
            if name != "manifest.json":  # it names its output directory
                assert got[name] == plain[name], (other, name)
        manifest = json.loads(got["manifest.json"])
        assert manifest["units"]["sizes"] == [8, 16, 32, 64]


@pytest.mark.parametrize(
    ("where", "value"),
    [("sizes", np.int64(0)), ("sizes", np.True_), ("build_batch", np.int64(-4))],
)
def test_numpy_counts_break_the_same_rules(cwd, sp_model, where, value):
    write_jsonl("a.jsonl", [{"text": "x"}])
    settings = {
        "sizes": [[8, 16]],
        "build_batch": [4],
        where: [[value]] if where == "sizes" else [value],
    }
    with pytest.raises(mintdim.UnitValidationError, match="positive integer"):
        job(["./a.jsonl"], sp_model, **settings).run(workers=1, progress=False)


def test_scan_takes_a_numpy_worker_count(cwd, sp_model):
    write_jsonl("a.jsonl", [{"text": t} for t in training_text(20, seed=6)])
    declared = job(["./a.jsonl"], sp_model)
    expected = declared.scan(workers=1, progress=False).token_counts
    got = declared.scan(workers=np.int64(1), progress=np.False_).token_counts
    assert np.array_equal(got, expected) and got.size == 20


def test_open_build_takes_any_path_like(built):
    class Place(os.PathLike):
        def __fspath__(self) -> str:
            return str(built)

    assert len(open_build(Place())) == len(open_build(str(built))) == 40

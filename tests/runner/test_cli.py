"""End to end: ``python -m mintdim.run`` in a subprocess, as a user runs it."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mintdim.errors import UnitOverflowError
from mintdim.runner.demo import DEMO_DIR
from tests.waiting import SAFETY_NET, wait_for

from .conftest import REPO, cli_env, run_cli

OVERFLOW = UnitOverflowError.summary

DEMO_ALPACA = str(DEMO_DIR / "self_instruct_seed_alpaca.jsonl")


def only_run_dir(cwd: Path) -> Path:
    (day,) = (cwd / "outputs").iterdir()
    (run,) = day.iterdir()
    return run


def assert_compact(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert "HYDRA_FULL_ERROR" not in stderr


def test_no_arguments_builds_the_bundled_demo_from_any_directory(tmp_path) -> None:
    # The default run: workers=null (every core), progress=null (no bar: stderr is a pipe).
    done = run_cli(cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = only_run_dir(tmp_path)
    build = run / "build"
    manifest = json.loads((build / "manifest.json").read_text())
    stats = json.loads((build / "stats.json").read_text())
    # outside the checkout the bundled files are recorded by their absolute path
    assert manifest["source"]["files"] == [DEMO_ALPACA]
    assert manifest["tokenizer"]["path"] == str(DEMO_DIR / "demo_unigram.model")
    assert manifest["source"]["templates"][0].startswith("### Instruction:\n{instruction}")
    assert stats["total_samples"] == 175
    assert stats["samples_with_unk"] > 0  # the demo shows the UNK audit at work
    assert (run / ".hydra" / "config.yaml").is_file()
    assert (run / "mintdim.log").is_file()
    resolved = (run / "resolved_config.yaml").read_text()
    assert "${" not in resolved and str(build) in resolved
    assert f"built {build}: 175 samples" in done.stdout
    assert "padding" in done.stdout
    # Shard lines and the summary go through Hydra's job logging: its console (stdout) and the
    # job's log file, each line once, in the spec's form after Hydra's prefix.
    shown = [line for line in done.stdout.splitlines() if "[unit-build] shard=" in line]
    assert len(shown) == stats["shard_count"] == len(set(shown))
    assert all("[mintdim.unit_build][INFO] - [unit-build] shard=" in line for line in shown)
    logged = (run / "mintdim.log").read_text(encoding="utf-8")
    assert logged.count("[unit-build] shard=") == stats["shard_count"]
    assert logged.count(f"built {build}: 175 samples") == 1
    assert "[unit-build]" not in done.stderr
    assert_compact(done.stderr)


def test_with_a_progress_bar_each_line_still_shows_once(tmp_path) -> None:
    done = run_cli("workers=1", "progress=true", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stats = json.loads((only_run_dir(tmp_path) / "build" / "stats.json").read_text())
    both = done.stdout + done.stderr
    assert both.count("[unit-build] shard=") == stats["shard_count"]
    assert both.count("built ") == 1
    assert "unit-build: 100%|" in done.stderr


@pytest.mark.parametrize(
    "override",
    ["hydra/job_logging=disabled", "+hydra.job_logging.loggers.mintdim.level=WARNING"],
)
def test_hydra_job_logging_config_silences_mintdim_lines(tmp_path, override) -> None:
    done = run_cli("workers=1", override, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[unit-build]" not in done.stdout + done.stderr
    assert "built " not in done.stdout + done.stderr
    assert (only_run_dir(tmp_path) / "build" / "manifest.json").is_file()


def test_runner_lines_in_vietnamese(tmp_path) -> None:
    done = run_cli("workers=1", "lang=vi", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    build = only_run_dir(tmp_path) / "build"
    assert f"đã build {build}: 175 mẫu, 35,733 token trong 42,272 slot" in done.stdout


def test_source_alpaca_units_small_works_out_of_the_box(tmp_path) -> None:
    done = run_cli("source=alpaca", "units=small", "workers=1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((only_run_dir(tmp_path) / "build" / "manifest.json").read_text())
    assert manifest["source"]["fields"] == [["instruction", "input", "output"]]
    assert manifest["source"]["templates"] == ["{instruction}\n\n{input}\n\n{output}"]
    assert manifest["units"]["sizes"][0] == 64


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_overrides_of_every_kind_with_relative_paths_from_the_cwd(tmp_path) -> None:
    pairs = [{"prompt": f"What is {i} plus {i}?", "response": f"It is {2 * i}."} for i in range(7)]
    texts = [{"text": "A short line."}, {"text": "Another line of text, a bit longer."}] * 2
    write_jsonl(tmp_path / "data" / "pairs.jsonl", pairs)
    write_jsonl(tmp_path / "data" / "texts.jsonl", texts)
    (tmp_path / "tok").mkdir()
    shutil.copy(DEMO_DIR / "demo_bpe.tokenizer.json", tmp_path / "tok" / "demo.json")

    done = run_cli(
        "source=jsonl",
        "source.files=[./data/pairs.jsonl,./data/texts.jsonl]",
        "source.fields=[[prompt,response],[text]]",
        # a real newline inside the quoted value (bash: $'...'); Hydra keeps "\n" literally
        'source.templates=["{prompt}\n{response}","{text}"]',
        "tokenizer=hf_json",
        "tokenizer.path=[./tok/demo.json]",
        "units.sizes=[[8,16,32],[4,8,16,32]]",
        "units.build_batch=[2,3]",
        "output=dir",
        "output.dir=[./out/pairs,./out/texts]",
        "output.samples_per_shard=[2,3]",
        "workers=1",
        "progress=false",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    pairs_manifest = json.loads((tmp_path / "out/pairs/manifest.json").read_text())
    texts_manifest = json.loads((tmp_path / "out/texts/manifest.json").read_text())
    assert pairs_manifest["source"]["files"] == ["./data/pairs.jsonl"]
    assert pairs_manifest["source"]["templates"] == ["{prompt}\n{response}"]
    assert pairs_manifest["tokenizer"]["path"] == "./tok/demo.json"
    assert pairs_manifest["units"]["sizes"] == [8, 16, 32]
    assert texts_manifest["units"]["sizes"] == [4, 8, 16, 32]
    assert pairs_manifest["output"]["samples_per_shard"] == 2
    assert texts_manifest["source"]["fields"] == [["text"]]
    stats = json.loads((tmp_path / "out/pairs/stats.json").read_text())
    assert stats["total_samples"] == 7
    for size, count in stats["unit_distribution"].items():
        shards = list((tmp_path / f"out/pairs/unit_{size}").glob("shard_*.bin"))
        assert len(shards) == -(-count // 2)  # ceil(count / samples_per_shard)
    assert json.loads((tmp_path / "out/texts/stats.json").read_text())["duplicate_samples"] == 4
    assert not (tmp_path / "outputs" / "x").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["units.foo=1"],
            ["Key 'foo' not in 'UnitsConfig'", "MintDim: Valid keys in units: sizes, build_batch"],
        ),
        (
            ["units.build_batch=[many]"],
            [
                "Error merging override units.build_batch=[many]",
                "MintDim: units.build_batch: list of samples per tokenizer batch",
                "Example: units.build_batch=[4096]",
            ],
        ),
        (
            ["units=huge"],
            ["Could not find 'units/huge'", "Available options in 'units':", "\tsmall"],
        ),
        (
            ["+units.foo=1", "lang=vi"],
            [
                "UnknownConfigKeyError:",
                "Key không hợp lệ:\n- units.foo",
                "- units: sizes, build_batch",
            ],
        ),
        (
            ["-m", "units.build_batch=[1],[x]"],
            [
                "Value 'x' of type 'str' could not be converted to Integer",
                "MintDim: units.build_batch:",
            ],
        ),
    ],
    ids=["unknown-key", "wrong-type", "unknown-option", "force-added-key-vi", "sweep-bad-value"],
)
def test_a_bad_override_fails_before_any_work(tmp_path, args, expected) -> None:
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    for text in expected:
        assert text in done.stderr
    assert_compact(done.stderr)
    assert not list(tmp_path.glob("outputs/*/*/build"))
    assert not list(tmp_path.glob("multirun/*/*/*/build"))
    assert "Sweep summary" not in done.stdout


@pytest.mark.parametrize(
    ("args", "env", "headline"),
    [
        ([], {}, f"UnitOverflowError:\n{OVERFLOW.en}"),
        (["lang=vi"], {}, f"UnitOverflowError:\n{OVERFLOW.vi}"),
        ([], {"MINTDIM_LANG": "vi"}, f"UnitOverflowError:\n{OVERFLOW.vi}"),
    ],
    ids=["en", "lang=vi", "MINTDIM_LANG=vi"],
)
def test_a_mintdim_error_prints_its_message_in_the_chosen_language(
    tmp_path, args, env, headline
) -> None:
    done = run_cli("units.sizes=[[64]]", "workers=1", *args, cwd=tmp_path, env=cli_env(**env))
    assert done.returncode == 1
    assert headline in done.stderr
    assert f"{DEMO_ALPACA}:1" in done.stderr
    assert_compact(done.stderr)
    assert (only_run_dir(tmp_path) / "build" / "unit_64" / "UNIT_BUILD_FAILED.md").is_file()


@pytest.mark.parametrize(
    ("override", "headline"),
    [
        ("units.sizes=[[256,128]]", "UnitValidationError:"),  # found by run()'s validation
        ("workers=0", "RunOptionError:"),  # found by run() before validation
        # units.sizes also takes "auto", so the core, not Hydra, checks its items
        ("units.sizes=[[a]]", "units.sizes[0][0] must be a positive integer"),
    ],
)
def test_every_error_found_before_any_work_exits_2(tmp_path, override, headline) -> None:
    done = run_cli(override, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert headline in done.stderr
    assert_compact(done.stderr)
    assert not list(tmp_path.glob("outputs/*/*/build"))


_STALLED_RUNNER = """
import signal, sys, time
from pathlib import Path
from mintdim.build.batch import BatchEncoder

# Ctrl-C raises KeyboardInterrupt, as at a terminal, even when the suite itself was started with
# SIGINT ignored (a script's background job), which this process inherits.
signal.signal(signal.SIGINT, signal.default_int_handler)

def stall(self, raw):  # the build has begun: stop here until the test's signal arrives
    Path("stalled").touch()
    while True:  # however long that takes: only the signal ends this
        time.sleep(3600)

BatchEncoder.__call__ = stall
from mintdim.runner.app import main
sys.argv = ["mintdim-run", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize(
    ("signal_name", "args"),
    [("SIGTERM", ["workers=1"]), ("SIGINT", ["-m", "units=small,large", "workers=1"])],
    ids=["run-sigterm", "sweep-ctrl-c"],
)
def test_an_interrupted_build_exits_130_and_ends_the_sweep(tmp_path, signal_name, args) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", _STALLED_RUNNER, *args, f"hydra.sweep.dir={tmp_path / 'sweep'}"],
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for((tmp_path / "stalled").exists, "the build began and stalled", process)
        process.send_signal(getattr(signal, signal_name))
        _, stderr = process.communicate()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert (
        f"BuildInterruptedError:\nThe build was stopped before it finished.\n\nSignal:\n{signal_name}"
        in stderr
    )
    assert_compact(stderr)
    builds = list(tmp_path.glob("outputs/*/*/build")) + list(tmp_path.glob("sweep/*/build"))
    assert len(builds) == 1  # a sweep's second job never started
    assert not (builds[0] / "manifest.json").exists()
    assert list(builds[0].glob("unit_*/UNIT_BUILD_FAILED.md"))


def test_full_error_env_shows_the_traceback(tmp_path) -> None:
    done = run_cli(
        "units.sizes=[[64]]", "workers=1", cwd=tmp_path, env=cli_env(MINTDIM_FULL_ERROR="1")
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "UnitOverflowError" in done.stderr


def test_cfg_job_help_and_info_work_as_in_any_hydra_app(tmp_path) -> None:
    cfg = run_cli("--cfg", "job", "source=qa", cwd=tmp_path)
    assert cfg.returncode == 0, cfg.stderr
    assert "- ${mintdim_demo:gsm8k_test_first300.jsonl}" in cfg.stdout
    assert "- - question\n    - answer" in cfg.stdout

    help_ = run_cli("--help", cwd=tmp_path)
    assert help_.returncode == 0, help_.stderr
    assert help_.stdout.startswith("== mintdim ==")
    assert "units: auto, fixed, large, medium, packed, small, spec" in help_.stdout
    assert "source: alpaca, demo, jsonl, mapped, parquet, prompt_response, qa" in help_.stdout
    assert "--hydra-help" in help_.stdout
    assert "Tạo các shard token" in help_.stdout and "MINTDIM_LANG=vi" in help_.stdout

    info = run_cli("--info", "searchpath", cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    assert f"file://{REPO / 'conf'}" in info.stdout
    assert not (tmp_path / "outputs").exists()  # none of these ran a build


def test_parallel_sweep_with_joblib_summarises_a_failed_job(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    done = run_cli(
        "-m",
        "units.sizes=[[64,128]],[[128,256,512,1024,2048,4096]]",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "workers=1",
        f"hydra.sweep.dir={sweep}",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "Joblib.Parallel" in done.stdout  # really the joblib launcher
    doc = json.loads((sweep / "sweep_summary.json").read_text())
    assert (doc["finished"], doc["jobs_total"], doc["jobs_failed"]) == (True, 2, 1)
    ok, failed = doc["jobs"]
    assert (ok["job"], ok["status"], ok["outputs"]) == (1, "completed", ["1/build"])
    assert ok["overrides"] == ["units.sizes=[[128,256,512,1024,2048,4096]]", "workers=1"]
    assert ok["samples"] == 175 and ok["slots"] == ok["tokens"] + ok["pad_tokens"]
    assert (failed["job"], failed["status"], failed["error_type"]) == (
        0,
        "failed",
        "UnitOverflowError",
    )
    assert "| - | 0 | units.sizes=[[64,128]] workers=1 | FAILED: UnitOverflowError" in done.stdout
    assert (sweep / "sweep_summary.md").read_text() in done.stdout
    assert f"UnitOverflowError:\n{OVERFLOW.en}" in done.stderr
    assert_compact(done.stderr)
    assert json.loads((sweep / "1/build/stats.json").read_text())["total_samples"] == 175


def test_a_reused_sweep_dir_never_reuses_an_output_dir(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    first = run_cli("-m", "units=large", "workers=1", f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = (sweep / "0/build/manifest.json").read_bytes()
    again = run_cli("-m", "units=large", "workers=1", f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert again.returncode == 1
    # Notices go through Hydra's logging (its console is stdout), each once.
    assert again.stdout.count("already holds a sweep summary") == 1
    assert again.stdout.count("[mintdim] job 0 failed: SweepOutputError:") == 1
    assert "SweepOutputError:\nA sweep job's output directory already exists." in again.stderr
    assert_compact(again.stderr)
    assert (sweep / "0/build/manifest.json").read_bytes() == before
    doc = json.loads((sweep / "sweep_summary.json").read_text())
    assert [(j["job"], j["status"]) for j in doc["jobs"]] == [(0, "failed")]


def test_shell_completion_with_the_console_script(tmp_path) -> None:
    script = Path(sys.executable).with_name("mintdim-run")
    if not script.exists():
        pytest.skip("mintdim-run is not installed in this environment (make test installs it)")
    install = subprocess.run(
        [str(script), "-sc", "install=bash"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=SAFETY_NET, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    assert "complete -o nospace -o default -F hydra_bash_completion mintdim-run" in install.stdout
    for line, expected in (("mintdim-run uni", "units="), ("mintdim-run units=", "units=small")):
        query = subprocess.run(
            [str(script), "-sc", "query=bash"],
            cwd=tmp_path,
            env=cli_env(COMP_LINE=line, COMP_POINT=str(len(line))),
            capture_output=True, text=True, timeout=SAFETY_NET, check=False,
        )  # fmt: skip
        assert query.returncode == 0, query.stderr
        assert expected in query.stdout.split()

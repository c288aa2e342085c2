"""docs/cluster.md's two-machine setup, run for real: two Ray nodes on this host, one build.

``ray start --head`` then ``ray start --address`` (each node one CPU, so Ray must put one actor
on each), then the same build through the API (``executor="ray", ray_address=...``) and through
the runner (``executor=ray executor.address=...``), each in its own driver process as a user
runs it. Each build's log names the nodes its actors ran on and the pieces they handled: both
nodes must appear with work. Both outputs must be byte-identical to a local ``workers=2`` build.
A driver without the cluster's token gets ``RayConnectionError`` saying what to set.

The cluster is private to the test: its own temporary directory (``--temp-dir``: nothing is
written to /tmp/ray, so ``ray.init()`` elsewhere on this machine never finds it), free ports,
and a token of its own (Ray's token authentication, ``RAY_AUTH_MODE=token``). Its processes are
ended as the process groups the two ``ray start`` commands made, never with ``ray stop`` (which
ends every Ray process of the machine, other builds' included). Ray is an optional extra:
without it the module is skipped (CI installs it).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit_build.helpers import tree_bytes, write_jsonl
from tests.waiting import SAFETY_NET

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
NODE_LINE = re.compile(r"\[unit-build\] ray node=(\w+) address=\S+ actors=(\d+) tasks=(\d+)")

_DRIVER = """
import sys
from tests.unit_build.helpers import job
address, model, data, out = sys.argv[1:]
built = job([data], model, sizes=[[8, 16, 32, 64]], build_batch=[16], samples_per_shard=[11], out=out)
if address == "local":
    built.run(workers=2, piece_bytes=2000)
else:
    built.run(executor="ray", ray_address=address, workers=2, piece_bytes=2000)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def _cluster_env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # test_ray.py sets it to 0 (single-node mode) for its own cluster; a second node needs it on.
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    env.pop("RAY_ADDRESS", None)
    env["RAY_AUTH_MODE"] = "token"
    env["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    return env


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[tuple[str, dict[str, str]]]:
    """A head and a worker node (one CPU each) on this host: (address, driver environment)."""
    env = _cluster_env()
    temp_dir = tempfile.mkdtemp(prefix="mdray")  # short: Ray's socket paths live under it
    common = ["--num-cpus=1", "--object-store-memory=100000000", f"--temp-dir={temp_dir}"]
    common.append("--disable-usage-stats")
    groups: list[int] = []

    def ray_start(*args: str) -> str:
        started = subprocess.Popen(
            [RAY, "start", *args, *common],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # every process it starts stays in this group
        )
        groups.append(started.pid)
        output, _ = started.communicate(timeout=SAFETY_NET)
        assert started.returncode == 0, output
        return output

    try:
        port = _free_port()
        head = ray_start("--head", f"--port={port}", "--include-dashboard=false")
        # Ray turns 127.0.0.1 in --address into this host's own address, and the head binds
        # the address it printed: the worker joins at that one.
        (ip,) = re.findall(r"Local node IP: (\S+)", head)
        address = f"{ip}:{port}"
        ray_start(f"--address={address}")
        yield address, env
    finally:
        for group in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + 3  # Ray's GCS may take longer: it is killed then
        for group in groups:
            while time.monotonic() < deadline and _alive(group):
                time.sleep(0.1)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _nodes_with_work(log: str) -> dict[str, int]:
    """Pieces per node id, from a build's ``ray node=...`` lines."""
    found = {node: int(pieces) for node, _, pieces in NODE_LINE.findall(log)}
    assert found, log
    return found


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=SAFETY_NET, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_one_build_across_two_nodes_api_and_runner_matches_local(two_nodes, tmp_path, sp_model):
    address, env = two_nodes
    rows = [{"text": f"sample {i} " + "xin chào thế giới " * (i % 3)} for i in range(3000)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    driver = [sys.executable, "-c", _DRIVER]

    _run([*driver, "local", str(sp_model), str(data), str(tmp_path / "local")], env, tmp_path)
    api_log = _run(
        [*driver, address, str(sp_model), str(data), str(tmp_path / "api")], env, tmp_path
    )
    runner_log = _run(
        [
            sys.executable, "-m", "mintdim.run", "source=jsonl", f"source.files=[{data}]",
            "source.fields=[[text]]", "source.templates=['{text}']", "tokenizer=sentencepiece",
            f"tokenizer.path=[{sp_model}]", "units.sizes=[[8,16,32,64]]",
            "units.build_batch=[16]", "output=dir", f"output.dir=[{tmp_path / 'runner'}]",
            "output.samples_per_shard=[11]", "executor=ray", f"executor.address={address}",
            "workers=2", "piece_bytes=2000",
        ],
        env,
        tmp_path,
    )  # fmt: skip

    reference = tree_bytes(tmp_path / "local")
    for log, out in [(api_log, "api"), (runner_log, "runner")]:
        nodes = _nodes_with_work(log)
        assert len(nodes) == 2 and all(pieces > 0 for pieces in nodes.values()), log
        assert tree_bytes(tmp_path / out) == reference, out
    assert _nodes_with_work(api_log).keys() == _nodes_with_work(runner_log).keys()


def test_a_driver_without_the_cluster_token_gets_a_named_error(two_nodes, tmp_path, sp_model):
    address, env = two_nodes
    data = write_jsonl(tmp_path / "data.jsonl", [{"text": "one"}, {"text": "two"}])
    no_token = {k: v for k, v in env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, address, str(sp_model), str(data), str(tmp_path / "out")],
        env={**no_token, "MINTDIM_LANG": "vi"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SAFETY_NET,
        check=False,
    )
    assert done.returncode == 1
    assert "mintdim.errors.execution.RayConnectionError: RayConnectionError:" in done.stderr
    assert f"ray status --address {address}" in done.stderr and "RAY_AUTH_MODE=token" in done.stderr
    assert "không kết nối được vào cluster Ray" in done.stderr  # the user's language
    assert not (tmp_path / "out" / "manifest.json").exists()

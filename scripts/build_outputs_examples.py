"""Rebuild ``outputs_examples/demo_sweep`` (the committed demo outputs), or check it is current.

    python scripts/build_outputs_examples.py          # rebuild the committed files
    python scripts/build_outputs_examples.py --check  # rebuild in a temp dir, compare byte for byte

It runs the padding sweep of the bundled demo with the runner, exactly as a user would::

    python -m mintdim.run -m units=small,medium,large,fixed,auto,packed workers=1 \\
        hydra.sweep.dir=<dir> 'hydra.sweep.subdir=${hydra:runtime.choices.units}'

from the repository root, so the demo files are recorded as ``mintdim/demo/...`` (see
``mintdim/runner/demo.py``) and nothing in the kept files depends on the machine. Kept: each
job's build directory (``<units>/build/``), ``sweep_summary.json`` / ``sweep_summary.md``, the
pictures (``sweep_padding.png``, ``auto/units_plan.png``) and ``best_possible.md`` (each unit
set's padding beside the exact optimum with as many units).
Left out: Hydra's ``.hydra/``, logs and ``resolved_config.yaml``, which hold times and absolute
paths. ``outputs_examples/README.md`` is written by hand and not touched.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "outputs_examples" / "demo_sweep"
UNIT_SETS = ("small", "medium", "large", "fixed", "auto", "packed")
SUMMARY_FILES = ("sweep_summary.json", "sweep_summary.md")
BEST_POSSIBLE = "best_possible.md"
"""The padding of each unit set beside the exact optimum with as many units (README quotes it)."""


def sweep_command(sweep_dir: Path) -> list[str]:
    """The runner command that produces the examples."""
    return [
        sys.executable,
        "-m",
        "mintdim.run",
        "-m",
        f"units={','.join(UNIT_SETS)}",
        "workers=1",
        f"hydra.sweep.dir={sweep_dir}",
        "hydra.sweep.subdir=${hydra:runtime.choices.units}",
    ]


def build(dest: Path) -> None:
    """Run the sweep in a scratch directory and copy the kept files into ``dest`` (new)."""
    with tempfile.TemporaryDirectory() as scratch:
        sweep = Path(scratch) / "sweep"
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        )
        done = subprocess.run(
            sweep_command(sweep), cwd=REPO, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"the sweep failed (exit {done.returncode}):\n{done.stderr}")
        dest.mkdir(parents=True)
        for name in SUMMARY_FILES:
            shutil.copy2(sweep / name, dest / name)
        for units in UNIT_SETS:
            shutil.copytree(sweep / units / "build", dest / units / "build")
        # The pictures (matplotlib is in the dev install): the sweep's padding bars and the
        # units=auto job's token-length histogram with its planned unit boundaries.
        for picture in sweep.glob("*.png"):
            shutil.copy2(picture, dest / picture.name)
        for picture in sweep.glob("*/*.png"):
            shutil.copy2(picture, dest / picture.relative_to(sweep))
    (dest / BEST_POSSIBLE).write_text(best_possible(dest), encoding="utf-8")


def best_possible(sweep: Path) -> str:
    """A markdown table: each unit set's padding and the least padding any set of as many units
    allows (``mintdim.plan_units`` on the build's own token counts)."""
    from mintdim import open_build, plan_units

    doc = json.loads((sweep / SUMMARY_FILES[0]).read_text(encoding="utf-8"))
    lines = [
        "| unit set | units | padding | best possible with the same number of units |",
        "|---|---:|---:|---:|",
    ]
    for row in doc["jobs"]:
        build = open_build(sweep / row["outputs"][0])
        counts = np.concatenate([build.unit_index(size)["token_count"] for size in build.units])
        if build.packed:
            # Packed rows: the best is the fewest rows any packing could use, ceil(tokens / W).
            size = max(build.units)
            slots = -(-int(counts.sum()) // size) * size
            best_ratio = (slots - int(counts.sum())) / slots
        else:
            best_ratio = plan_units(counts, len(build.units)).padding_ratio
        lines.append(
            f"| `units={row['job_dir']}` | {len(build.units)} | {row['padding_ratio']:.2%} "
            f"| {best_ratio:.2%} |"
        )
    return "\n".join(lines) + "\n"


def differences(expected: Path, actual: Path) -> list[str]:
    """Relative paths that differ, are missing or are extra, comparing file bytes (PNG sizes).

    A manifest records each input's mtime, which a fresh checkout sets to the time of the
    checkout: manifests are compared with those (and the seal over them) left out.
    """

    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    want, got = files(expected), files(actual)
    diff = [f"missing: {p}" for p in sorted(want - got)] + [
        f"extra: {p}" for p in sorted(got - want)
    ]
    for rel in sorted(want & got):
        if rel.endswith("manifest.json"):
            same = _without_mtimes(expected / rel) == _without_mtimes(actual / rel)
        elif rel.endswith(".png"):
            # Pictures: their pixels depend on the matplotlib and font versions installed, and
            # the data they draw is compared above; a PNG of the same size is current.
            same = _png_size(expected / rel) == _png_size(actual / rel)
        else:
            same = filecmp.cmp(expected / rel, actual / rel, shallow=False)
        if not same:
            diff.append(f"differs: {rel}")
    return diff


def _png_size(path: Path) -> tuple[int, int] | None:
    """Width and height from a PNG's IHDR chunk; None when the file is not a PNG."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _without_mtimes(path: Path) -> dict:
    content = json.loads(path.read_bytes())
    for entry in content["source"]["inputs"]:
        del entry["mtime_ns"]
    del content["manifest_sha256"]
    return content


def main(argv: list[str] | None = None) -> int:
    """Rebuild the examples, or with ``--check`` report whether they are current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as scratch:
            fresh = Path(scratch) / "demo_sweep"
            build(fresh)
            diff = differences(TARGET, fresh)
        for line in diff:
            print(line)
        print("outputs_examples/demo_sweep is " + ("STALE" if diff else "current"))
        return 1 if diff else 0
    if TARGET.exists():
        shutil.rmtree(TARGET)
    build(TARGET)
    total = sum(p.stat().st_size for p in TARGET.rglob("*") if p.is_file())
    print(f"rebuilt {TARGET.relative_to(REPO)} ({total / 1024:.1f} KiB)")
    # The build directories are named build/, which .gitignore ignores: new files need -f.
    print("commit with: git add -f outputs_examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())

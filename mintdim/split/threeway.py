"""``mintdim.split(build, groups, out, ...)`` / ``mintdim split BUILD --groups GROUPS --out SPLIT``:
train, validation and test builds that share no group.

The groups must have been made from this very build (their manifest names its manifest's
SHA-256). Groups are allocated whole (split/allocate.py), the records copied into three
complete builds (split/write.py), and the split directory gets::

    train/ validation/ test/     complete MintDim builds (verify, open_build, the loader)
    splits.jsonl                 one line per input sample: where it went
    group-joins.jsonl            every join edge (its ends must stay together) with its split
    evaluation-windows.jsonl     with a window: validation and test windows (split/windows.py)
    report.json, REPORT.md       per stratum and split: groups, samples, tokens, targets
    verification.json            the independent pass (split/verification.py)
    manifest.json                last: inputs, seed, policy, file digests, training_files

``splits.jsonl`` (keys in this order)::

    {"sample_id":0,"source_file":"./data/a.jsonl","source_line":1,"stratum":"edo",
     "group":0,"split":"train","split_sample_id":0,"token_count":143,"token_sha256":"..."}

``training_files`` lists every file of ``train`` and ``validation`` (and the windows file) with
its size and SHA-256: what ``open_split`` opens and checks, never a file of ``test``. The same
inputs, groups and seed give a byte-identical directory, whatever the worker count.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from mintdim.build.formats import manifest as build_manifest
from mintdim.build.formats.layout import AUDIT_FILES
from mintdim.errors import (
    GroupsMismatchError,
    PackedSplitError,
    SplitDirectoryError,
    SplitOptionError,
    SplitRatioError,
    SplitVerificationError,
)
from mintdim.read.reader import open_build
from mintdim.shared import durable
from mintdim.split import layout, report, verification, windows
from mintdim.split.allocate import SWAP_CANDIDATES, SWAP_ROUNDS, allocate, parse_ratios
from mintdim.split.groupfiles import GROUPS, JOINS, KINDS, read_groups, read_joins
from mintdim.split.samples import SOURCE_FILE, BuildSamples, read_build, read_records
from mintdim.split.text import value_text
from mintdim.split.write import Written, write_builds

__all__ = ["SplitResult", "build_files", "split", "split_settings"]

_LINES = 65536
"""splits.jsonl lines written at a time."""


@dataclass(frozen=True, slots=True)
class SplitResult:
    """What ``split()`` wrote."""

    path: str
    samples: dict[str, int]
    """Samples per split."""
    tokens: dict[str, int]
    report: dict = field(repr=False)
    """The content of report.json."""


def split(
    build: str | os.PathLike[str],
    groups: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    seed: int,
    ratios: Mapping[str, float] | str,
    stratify: str | None = None,
    ratios_by_stratum: Mapping[str, Mapping[str, float] | str] | None = None,
    window: int | None = None,
    workers: int = 1,
) -> SplitResult:
    """Split the finished build ``build`` by the groups in ``groups`` into the fresh directory
    ``out``.

    ``ratios``: the share of groups for each of train, validation and test (a dict, or
    ``"train=0.98,validation=0.01,test=0.01"``); ``stratify``: a source field (or
    ``source_file``) whose values get their own targets; ``ratios_by_stratum``: other shares for
    some strata; ``window``: cut validation and test into evaluation windows of at most
    ``window + 1`` ids; ``workers``: threads of the verification pass (the output is the same
    for every count).
    """
    shares, overrides = split_settings(seed, ratios, stratify, ratios_by_stratum, window, workers)
    samples = read_build(build)
    if "pack" in samples.manifest["units"]:
        raise PackedSplitError(build=samples.shown)
    groups_path, groups_manifest, groups_raw = _groups_directory(groups, samples)
    group_of = read_groups(groups_path, os.fspath(groups), samples.shown, samples.count)
    edges = read_joins(groups_path)
    stratum_of = _strata(samples, stratify)
    strata = sorted(set(stratum_of))
    for name in overrides:
        if name not in strata:
            raise SplitRatioError(
                option=f"ratios_by_stratum[{name!r}]",
                value=dict(zip(layout.SPLIT_NAMES, overrides[name], strict=True)),
                problem="unknown_stratum",
                stratum=name,
                known=strata,
            )
    group_ids, group_index = np.unique(group_of, return_inverse=True)
    stratum_index = np.searchsorted(
        np.array(strata, dtype=object), np.array(stratum_of, dtype=object)
    )
    allocation = allocate(
        group_index, stratum_index, strata, samples.token_counts, shares, overrides, seed
    )
    split_of = allocation.split_of_group[group_index]
    inputs = {os.fspath(build): samples.path, os.fspath(groups): groups_path}
    layout.check_fresh(out, inputs)
    source = open_build(samples.path)
    path = layout.fresh_directory(out, inputs)
    with layout.running(path, "mintdim split"):
        provenance = {
            "build_manifest_sha256": samples.manifest_sha256,
            "groups_manifest_sha256": hashlib.sha256(groups_raw).hexdigest(),
            "seed": seed,
        }
        written = write_builds(
            samples,
            split_of,
            path,
            {name: {**provenance, "split": name} for name in layout.SPLIT_NAMES},
        )
        _write_splits(path, samples, stratum_of, group_of, split_of, written)
        _write_group_joins(path, edges, split_of)
        if window is not None:
            _write_windows(path, samples, stratum_of, group_of, split_of, window)
        checked = verification.verify(path, window, source, workers)
        durable.write_json_atomic(path / verification.FILENAME, checked)
        if not checked["ok"]:
            raise SplitVerificationError(
                directory=os.fspath(out),
                failed_en=verification.failed_lines(checked, "en"),
                failed_vi=verification.failed_lines(checked, "vi"),
            )
        content = _report(samples, stratum_of, group_of, split_of, allocation.strata, edges)
        content["windows"] = _window_counts(samples, split_of, window)
        content["policy"] = _policy(shares, overrides, stratify, window)
        content["seed"] = seed
        content["verification_ok"] = checked["ok"]
        durable.write_json_atomic(path / report.REPORT_JSON, content)
        (path / report.REPORT_MD).write_text(report.split_markdown(content), encoding="utf-8")
        layout.write_manifest(
            path,
            _manifest(path, samples, groups, groups_manifest, groups_raw, seed, content, written),
        )
    totals = content["splits"]
    return SplitResult(
        os.fspath(out),
        {name: totals[name]["samples"] for name in layout.SPLIT_NAMES},
        {name: totals[name]["tokens"] for name in layout.SPLIT_NAMES},
        content,
    )


def split_settings(
    seed: object,
    ratios: object,
    stratify: object,
    ratios_by_stratum: Mapping[str, object] | None,
    window: object,
    workers: object,
) -> tuple[tuple[float, float, float], dict[str, tuple[float, float, float]]]:
    """``split()``'s options checked (named errors) before any work; the shares and the
    per-stratum shares. The runner checks them before it builds."""
    for name, value, least in (("seed", seed, 0), ("workers", workers, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            rule = "positive" if least else "non_negative"
            raise SplitOptionError(option=name, value=value, rule=rule)
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 1
    ):
        raise SplitOptionError(option="window", value=window, rule="positive")
    if stratify is not None and (not isinstance(stratify, str) or not stratify):
        raise SplitOptionError(option="stratify", value=stratify, rule="field_name")
    overrides = {
        str(name): parse_ratios(value, f"ratios_by_stratum[{name!r}]")
        for name, value in (ratios_by_stratum or {}).items()
    }
    return parse_ratios(ratios), overrides


def _groups_directory(
    groups: str | os.PathLike[str], samples: BuildSamples
) -> tuple[Path, dict, bytes]:
    """The groups directory, refused unless it is complete, intact and made from this build."""
    path, content, raw = layout.read_manifest(groups, layout.GROUPS_KIND)
    expected = content["build"]["manifest_sha256"]
    if expected != samples.manifest_sha256:
        raise GroupsMismatchError(
            groups=os.fspath(groups),
            build=samples.shown,
            problem="other_build",
            expected=expected,
            found=samples.manifest_sha256,
        )
    for name in (GROUPS, JOINS):
        listed = content["files"][name]
        if not (path / name).is_file() or layout.file_record(path / name) != listed:
            raise SplitDirectoryError(
                directory=os.fspath(groups), kind="groups", reason="file_changed", detail=name
            )
    return path, content, raw


def _strata(samples: BuildSamples, stratify: str | None) -> list[str]:
    """Each sample's stratum: the field's value as text ("" when missing or empty; every
    sample's without ``stratify``)."""
    if stratify is None:
        return [""] * samples.count
    if stratify == SOURCE_FILE:
        return [samples.sources[int(i)] for i in samples.files.tolist()]
    found = [""] * samples.count
    for batch in read_records(samples, [(stratify, "stratify")]):
        for sample_id, value in zip(batch.ids.tolist(), batch.values[stratify], strict=True):
            found[sample_id] = value_text(value) or ""
    return found


# ---------------------------------------------------------------------------
# The split's own files
# ---------------------------------------------------------------------------


def _write_splits(
    path: Path,
    samples: BuildSamples,
    stratum_of: list[str],
    group_of: np.ndarray,
    split_of: np.ndarray,
    written: Written,
) -> None:
    """splits.jsonl: one line per input sample, its keys in the documented order (each line
    composed from its values' JSON: a source file and a stratum are spelled once each)."""
    sources = [orjson.dumps(name).decode() for name in samples.sources]
    strata = {label: orjson.dumps(label).decode() for label in set(stratum_of)}
    names = [orjson.dumps(name).decode() for name in layout.SPLIT_NAMES]
    columns = zip(
        samples.files.tolist(),
        samples.lines.tolist(),
        stratum_of,
        group_of.tolist(),
        split_of.tolist(),
        written.new_ids.tolist(),
        samples.token_counts.tolist(),
        written.token_sha256,
        strict=True,
    )
    with open(path / verification.SPLITS, "xb") as handle:
        lines = []
        for sample_id, (file, line, stratum, group, k, new, count, digest) in enumerate(columns):
            lines.append(
                f'{{"sample_id":{sample_id},"source_file":{sources[file]},"source_line":{line},'
                f'"stratum":{strata[stratum]},"group":{group},"split":{names[k]},'
                f'"split_sample_id":{new},"token_count":{count},"token_sha256":"{digest.hex()}"}}\n'
            )
            if len(lines) >= _LINES:
                handle.write("".join(lines).encode())
                lines = []
        handle.write("".join(lines).encode())


def _write_group_joins(path: Path, edges: list, split_of: np.ndarray) -> None:
    with open(path / verification.GROUP_JOINS, "xb") as handle:
        for edge in edges:
            row = {
                "a": edge.a,
                "b": edge.b,
                "kind": edge.kind,
                "split": layout.SPLIT_NAMES[int(split_of[edge.a])],
                "evidence": edge.evidence,
            }
            handle.write(orjson.dumps(row) + b"\n")


def _write_windows(
    path: Path,
    samples: BuildSamples,
    stratum_of: list[str],
    group_of: np.ndarray,
    split_of: np.ndarray,
    window: int,
) -> None:
    with open(path / windows.FILENAME, "xb") as handle:
        for k in (1, 2):
            members = np.flatnonzero(split_of == k)  # by input id: the split's id order
            owner, start, length = windows.cut(samples.token_counts[members], window)
            for j, s, n in zip(owner.tolist(), start.tolist(), length.tolist(), strict=True):
                original = int(members[j])
                row = {
                    "split": layout.SPLIT_NAMES[k],
                    "sample_id": j,
                    "start": s,
                    "length": n,
                    "stratum": stratum_of[original],
                    "group": int(group_of[original]),
                }
                handle.write(orjson.dumps(row) + b"\n")


def _window_counts(samples: BuildSamples, split_of: np.ndarray, window: int | None) -> dict | None:
    if window is None:
        return None
    counts = {}
    for k in (1, 2):
        tokens = samples.token_counts[split_of == k]
        owner, _, length = windows.cut(tokens, window)
        counts[layout.SPLIT_NAMES[k]] = {
            "window": window,
            "windows": int(owner.size),
            "samples": int(tokens.size),
            "samples_without_window": int((tokens < 2).sum()),
            "predicted_tokens": int((length - 1).sum()),
            "short_windows": int((length < window + 1).sum()),
        }
    return counts


def _policy(
    shares: tuple[float, float, float],
    overrides: Mapping[str, tuple[float, float, float]],
    stratify: str | None,
    window: int | None,
) -> dict[str, object]:
    names = layout.SPLIT_NAMES
    return {
        "ratios": dict(zip(names, shares, strict=True)),
        "ratios_by_stratum": {
            name: dict(zip(names, value, strict=True)) for name, value in sorted(overrides.items())
        },
        "stratify": stratify,
        "window": window,
        "allocation": "whole groups; sparse strata first; group-count targets by largest "
        "remainder, at least one group for each of the first splits with a positive share; "
        "then seeded bounded swaps for token balance",
        "swap_rounds": SWAP_ROUNDS,
        "swap_candidates": SWAP_CANDIDATES,
    }


def _report(
    samples: BuildSamples,
    stratum_of: list[str],
    group_of: np.ndarray,
    split_of: np.ndarray,
    strata: list[dict],
    edges: list,
) -> dict[str, object]:
    names = layout.SPLIT_NAMES
    tokens = samples.token_counts
    per_split = {}
    for k, name in enumerate(names):
        chosen = split_of == k
        per_split[name] = {
            "groups": int(np.unique(group_of[chosen]).size),
            "samples": int(chosen.sum()),
            "tokens": int(tokens[chosen].sum()),
        }
    for name in names:
        for key in ("groups", "samples", "tokens"):
            total = sum(per_split[n][key] for n in names)
            per_split[name][f"share_of_{key}"] = (
                round(per_split[name][key] / total, 6) if total else 0.0
            )
    labels, stratum_index = np.unique(np.array(stratum_of, dtype=object), return_inverse=True)
    by_split = np.bincount(stratum_index * 3 + split_of, minlength=3 * labels.size).reshape(-1, 3)
    position = {label: i for i, label in enumerate(labels.tolist())}
    for entry in strata:
        counts = by_split[position[entry["stratum"]]].tolist()
        entry["samples_by_split"] = dict(zip(names, counts, strict=True))
    pairs = np.unique(group_of * max(labels.size, 1) + stratum_index)
    groups_of_pairs = np.unique(pairs // max(labels.size, 1), return_counts=True)[1]
    a = np.array([edge.a for edge in edges], dtype=np.int64)
    return {
        "build": {"path": samples.shown, "manifest_sha256": samples.manifest_sha256},
        "splits": per_split,
        "strata": strata,
        "unmet_targets": [
            {"stratum": entry["stratum"], **miss}
            for entry in strata
            for miss in entry["unmet_targets"]
        ],
        "coverage_gaps": [
            {"stratum": entry["stratum"], "split": gap}
            for entry in strata
            for gap in entry["coverage_gaps"]
        ],
        "groups_across_strata": int((groups_of_pairs > 1).sum()),
        "duplicate_review": {
            "edges": {kind: sum(edge.kind == kind for edge in edges) for kind in KINDS},
            "edges_by_split": dict(
                zip(names, np.bincount(split_of[a], minlength=3).tolist(), strict=True)
            ),
            "groups_of_two_or_more": int((np.bincount(group_of) > 1).sum()),
        },
    }


def _manifest(
    path: Path,
    samples: BuildSamples,
    groups: str | os.PathLike[str],
    groups_manifest: dict,
    groups_raw: bytes,
    seed: int,
    content: dict,
    written: Written,
) -> dict[str, object]:
    top = [
        verification.SPLITS,
        verification.GROUP_JOINS,
        *([windows.FILENAME] if (path / windows.FILENAME).is_file() else []),
        report.REPORT_JSON,
        report.REPORT_MD,
        verification.FILENAME,
    ]
    builds = {
        name: {
            "path": name,
            "manifest_sha256": written.manifest_sha256[name],
            "samples": content["splits"][name]["samples"],
            "tokens": content["splits"][name]["tokens"],
        }
        for name in layout.SPLIT_NAMES
    }
    training = [
        entry
        for name in layout.SPLIT_NAMES[:2]
        for entry in build_files(name, written.manifests[name], written.manifest_sha256[name])
    ]
    if (path / windows.FILENAME).is_file():
        training.append({"path": windows.FILENAME, **layout.file_record(path / windows.FILENAME)})
    return {
        **layout.header(layout.SPLIT_KIND),
        "build": samples.record(),
        "groups": {
            "path": os.fspath(groups),
            "manifest_sha256": hashlib.sha256(groups_raw).hexdigest(),
            "settings": groups_manifest["settings"],
        },
        "seed": seed,
        "policy": content["policy"],
        "builds": builds,
        "files": {name: layout.file_record(path / name) for name in top},
        "training_files": training,
    }


def build_files(name: str, content: dict, manifest_sha256: str) -> list[dict[str, object]]:
    """Every file of the split's build ``name`` with its size and SHA-256, from its manifest:
    the manifest itself, shards (and spans), unit indexes and audit files."""
    listed = [
        {
            "path": f"{name}/{build_manifest.FILENAME}",
            "bytes": len(durable.json_bytes(content)),
            "sha256": manifest_sha256,
        }
    ]
    for entry in [*content["shards"], *content["unit_indexes"]]:
        listed.append(
            {"path": f"{name}/{entry['path']}", "bytes": entry["bytes"], "sha256": entry["sha256"]}
        )
        if "spans" in entry:
            spans = entry["spans"]
            listed.append(
                {
                    "path": f"{name}/{spans['path']}",
                    "bytes": spans["bytes"],
                    "sha256": spans["sha256"],
                }
            )
    for audit in AUDIT_FILES:
        facts = content["audit_files"][audit]
        listed.append(
            {"path": f"{name}/{audit}", "bytes": facts["bytes"], "sha256": facts["sha256"]}
        )
    return listed

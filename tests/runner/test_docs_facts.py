"""README.md and docs/ state facts that hold: links resolve, named options, keys and make targets
exist, install lines never point at the registry's unrelated `mintdim`, and the padding figures
are the committed example sweep's."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from mintdim import __version__

from .conftest import REPO

README = REPO / "README.md"
RUNNER_DOC = REPO / "docs" / "runner.md"
GROUPS = ("source", "tokenizer", "units", "output")
PAGES = [
    README,
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "benchmarks").glob("*.md")),
    REPO / "outputs_examples" / "README.md",
]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def code_blocks(markdown: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", markdown, flags=re.S | re.M)


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    headings = re.findall(r"^#{1,6} (.+)$", prose, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def bundled_options() -> set[str]:
    return {f"{p.parent.name}={p.stem}" for p in (REPO / "conf").glob("*/*.yaml")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    for target in _LINK.findall(text(page)):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: link to missing {target}"
        if anchor:
            assert resolved.suffix == ".md", f"{page.name}: anchor into a non-page {target}"
            assert anchor in anchors(text(resolved)), f"{page.name}: no heading for {target}"


def test_readme_is_a_front_door() -> None:
    assert len(text(README).splitlines()) <= 450


def test_readme_installs_only_from_a_checkout_or_a_wheel() -> None:
    readme = text(README)
    installs = [
        line.split("#")[0].split()
        for block in code_blocks(readme, "bash")
        for line in block.splitlines()
        if "pip install" in line
    ]
    assert installs
    for words in installs:
        targets = [w.strip("\"'") for w in words[words.index("install") + 1 :]]
        targets = [t for t in targets if not t.startswith("-")]
        assert targets and all(t.startswith((".", "dist/")) for t in targets), words
    # and it says why `pip install mintdim` is wrong, outside any code block
    assert "`pip install mintdim`" in readme


def test_wheel_names_in_readme_are_this_version() -> None:
    names = re.findall(r"dist/mintdim-([^-\s]+)-py3-none-any\.whl", text(README))
    assert names and set(names) == {__version__}


def test_readme_padding_figures_are_the_example_sweep() -> None:
    sweep = json.loads(text(REPO / "outputs_examples" / "demo_sweep" / "sweep_summary.json"))
    rows = {
        m.group(1): [cell.strip() for cell in m.group(2).split("|")]
        for m in re.finditer(r"^\| `units=(\w+)`[^|]*\|(.*)\|$", text(README), flags=re.M)
        if m.group(2).count("|") == 3  # the sweep table (the best-possible table has 3 cells)
    }
    jobs = {job["job_dir"]: job for job in sweep["jobs"]}
    assert set(rows) == set(jobs) >= {"fixed", "small"}
    for name, (_sizes, slots, padding, on_disk) in rows.items():
        job = jobs[name]
        assert slots == f"{job['slots']:,}"
        assert padding.strip("*") == f"{job['padding_ratio']:.2%}"
        size = job["bytes_on_disk"]
        expected = f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.1f} KiB"
        assert on_disk == expected
    (first, *_) = sweep["jobs"]
    assert f"{first['samples']} instruction samples, {first['tokens']:,} tokens" in text(README)


def test_runner_doc_lists_exactly_the_bundled_options() -> None:
    table = text(RUNNER_DOC).split("### Groups and options\n", 1)[1].split("\n#", 1)[0]
    listed, group = set(), None
    for m in re.finditer(r"^\| (?:`(\w+)`)? *\| `(\w+)`", table, flags=re.M):
        group = m.group(1) or group
        listed.add(f"{group}={m.group(2)}")
    assert listed == bundled_options()


def test_every_documented_group_override_exists() -> None:
    pattern = re.compile(rf"(?<![\w/.])({'|'.join(GROUPS)})=([\w,]+)")
    for page in (README, RUNNER_DOC, REPO / "outputs_examples" / "README.md"):
        # an example of the user's own config directory defines its option on the same page
        own = {f"{g}={o}" for g, o in re.findall(r"/(\w+)/(\w+)\.yaml", text(page))}
        for group, options in pattern.findall(text(page)):
            for option in options.split(","):
                assert f"{group}={option}" in bundled_options() | own, (
                    f"{page.name}: {group}={option}"
                )


def test_every_documented_key_is_in_the_config(compose_cfg) -> None:
    keys = re.findall(r"^\| `([\w.]+)` \|", text(RUNNER_DOC), flags=re.M)
    cfg = compose_cfg()
    assert {"source.files", "units.sizes", "output.samples_per_shard", "workers"} <= set(keys)
    for key in keys:
        assert OmegaConf.select(cfg, key, default="absent", throw_on_missing=False) != "absent", key


def test_every_documented_make_target_exists() -> None:
    targets = set(re.findall(r"^([\w-]+):", text(REPO / "Makefile"), flags=re.M))
    # README names the two a newcomer runs; docs/development.md lists every target.
    in_readme = set(re.findall(r"`make ([a-z]+)", text(README)))
    named = in_readme | set(re.findall(r"`make ([a-z]+)", text(REPO / "docs" / "development.md")))
    assert {"demo", "test"} <= in_readme
    assert {"demo", "test", "lint", "docs", "examples"} <= named <= targets


def test_dev_extra_installs_every_optional_extra() -> None:
    extras = tomllib.loads(text(REPO / "pyproject.toml"))["project"]["optional-dependencies"]
    for extra in set(extras) - {"dev"}:
        assert f"mintdim[{extra}]" in extras["dev"], f"add mintdim[{extra}] to the dev extra"


def test_readme_extras_table_lists_every_optional_extra() -> None:
    extras = tomllib.loads(text(REPO / "pyproject.toml"))["project"]["optional-dependencies"]
    section = text(README).split("### Optional extras", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `([\w-]+)` \|", section, flags=re.M)
    assert sorted(rows) == sorted(extras), "one row per extra of pyproject.toml"


def test_readme_sample_index_line_is_the_committed_example() -> None:
    committed = text(REPO / "outputs_examples/demo_sweep/small/build/sample_index.jsonl")
    (block,) = code_blocks(text(README), "json")
    assert block.strip() in committed.splitlines()


def test_readme_best_possible_table_is_the_committed_one() -> None:
    committed = text(REPO / "outputs_examples" / "demo_sweep" / "best_possible.md")
    assert committed in text(README)

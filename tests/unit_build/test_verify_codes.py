"""verify's failure codes are declared once (mintdim/check/codes.py): the docs list exactly that
table, every message renders in both languages from its declared facts, a code, check or facts not
declared is refused where it is added, and the codes the source reports are the declared ones."""

from __future__ import annotations

import ast
import itertools
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from mintdim.check.codes import CHECKS, CODES, REGENERATE, render, splice
from mintdim.check.report import VerifyReport

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "verify-and-inspect.md"
CHECK_SOURCES = sorted((REPO / "mintdim" / "check").rglob("*.py"))


def test_the_docs_list_the_declared_codes():
    text = DOC.read_text(encoding="utf-8")
    assert splice(text) == text, f"the failure codes in {DOC.name} are stale; run: make docs"
    for name, code in CODES.items():
        row = f"| `{name}` | {', '.join(f'`{check}`' for check in code.checks)} |"
        assert row in text and code.meaning.en in text and code.meaning.vi in text


def test_the_command_rewrites_only_the_generated_section(tmp_path):
    doc = tmp_path / "doc.md"
    shutil.copy(DOC, doc)
    current = doc.read_text(encoding="utf-8")
    stale = current.replace("| `deep_extra` |", "| `deep_extras` |", 1)
    assert stale != current
    doc.write_text(stale, encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "mintdim.check.codes", str(doc)],
        cwd=REPO,
        check=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "PYTHONPATH": str(REPO)},
    )
    assert doc.read_text(encoding="utf-8") == current
    assert REGENERATE.replace("docs/verify-and-inspect.md", "") in current
    with pytest.raises(ValueError, match="markers"):
        splice(current.replace(render(), ""))


def test_every_code_renders_its_declared_facts_in_both_languages():
    for name, code in CODES.items():
        assert set(code.checks) <= set(CHECKS), name
        assert len(set(code.facts)) == len(code.facts), name
        facts = {fact: f"<{fact}>" for fact in code.facts}
        for lang in ("en", "vi"):
            template = getattr(code.text, lang)
            fields = {field for _, field, _, _ in string.Formatter().parse(template) if field}
            assert fields <= set(code.facts), (name, lang, fields - set(code.facts))
            shown = code.text.render(lang, **facts)
            assert all(f"{facts[field]!r}" in shown or facts[field] in shown for field in fields)
        assert code.text.en != code.text.vi or not code.text.en.strip("{}_ !r"), name
        assert code.meaning.en != code.meaning.vi, name
    assert {check for code in CODES.values() for check in code.checks} == set(CHECKS)


def test_a_code_check_or_facts_not_declared_is_refused_where_it_is_added():
    report = VerifyReport(directory="d", deep=False)
    with pytest.raises(ValueError, match="'sha265' is not declared"):
        report.add("shards", "unit_8/shard_000000.bin", "sha265", actual="a", listed="b")
    with pytest.raises(ValueError, match="not 'manifest'"):
        report.add("manifest", "manifest.json", "sha256", actual="a", listed="b")
    with pytest.raises(TypeError, match=r"takes the facts \('actual', 'listed'\)"):
        report.add("shards", "unit_8/shard_000000.bin", "sha256", actual="a")
    with pytest.raises(TypeError, match="takes the facts"):
        report.add("files", "stats.json", "missing", line=3)
    assert report.ok and not report.hidden
    report.add("shards", "unit_8/shard_000000.bin", "sha256", actual="a", listed="b")
    failure = report.failures[0]
    assert failure.message("en") == "unit_8/shard_000000.bin: SHA-256 a, the manifest lists b"
    assert failure.message("vi") == "unit_8/shard_000000.bin: SHA-256 a, manifest ghi b"


def _code_positions(trees: list[ast.Module]) -> dict[str, int]:
    """Each function of mintdim/check that takes a ``code``: the position of that argument."""
    positions: dict[str, int] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                names = [arg.arg for arg in [*node.args.posonlyargs, *node.args.args]]
                names = names[1:] if names[:1] == ["self"] else names
                if "code" in names:
                    positions[node.name] = names.index("code")
    return positions


def _literals(node: ast.expr) -> list[str]:
    """The strings an argument can be: a literal, or either literal of ``a if ... else b``;
    [] for anything else (which the test cannot read)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        both = [_literals(node.body), _literals(node.orelse)]
        return both[0] + both[1] if all(both) else []
    return []


def test_the_codes_the_source_reports_are_exactly_the_declared_ones():
    """Every call in mintdim/check that hands a failure code on (``report.add``, and the helpers
    that take a ``code``) passes a declared code, or forwards its own ``code``, and a report's
    ``add`` names a check and facts declared for it; every declared code is passed somewhere, so
    the table lists no code verify never reports. (``add`` refuses the same at run time.)"""
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in CHECK_SOURCES]
    positions = _code_positions(trees)
    assert {"add", "_fail", "_slot_failures"} <= set(positions)
    used: set[str] = set()
    for path, tree in zip(CHECK_SOURCES, trees, strict=True):
        for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name not in positions:
                continue
            if name == "add" and not ast.unparse(func.value).endswith("report"):
                continue  # not a VerifyReport's add (a StatsCounter's, a set's)
            given = [kw.value for kw in call.keywords if kw.arg == "code"]
            if not given and len(call.args) > positions[name]:
                given = [call.args[positions[name]]]
            where = f"{path.relative_to(REPO)}:{call.lineno}"
            assert given, where
            if isinstance(given[0], ast.Name) and given[0].id == "code":
                continue  # forwards the code its caller gave, checked at that call
            codes = _literals(given[0])
            assert codes and set(codes) <= set(CODES), (where, codes)
            used.update(codes)
            if name != "add":
                continue
            for code, check in itertools.product(codes, _literals(call.args[0])):
                assert check in CODES[code].checks, (where, check, code)
            facts = {kw.arg for kw in call.keywords}
            if None not in facts:  # no **facts: the keywords are all of them
                for code in codes:
                    assert facts == set(CODES[code].facts), (where, code, facts)
    assert used == set(CODES)

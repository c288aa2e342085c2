"""docs/error-catalogue.md is exactly what the error classes render: it cannot drift from the code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from mintdim.errors import error_classes
from mintdim.errors.catalogue import REGENERATE, render

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "docs" / "error-catalogue.md"


def test_committed_catalogue_is_the_rendered_one():
    assert CATALOGUE.read_text(encoding="utf-8") == render(), (
        f"stale; run: make docs ({REGENERATE})"
    )


def test_catalogue_has_one_entry_per_class_with_every_example_in_both_languages():
    text = render()
    assert re.findall(r"^### \d+\. (\w+)$", text, re.M) == [c.__name__ for c in error_classes()]
    for cls in error_classes():
        for facts in cls.examples:
            for lang in ("en", "vi"):
                assert f"```text\n{cls(**facts).message(lang)}\n```" in text


def test_the_command_writes_the_catalogue_as_utf8(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "mintdim.errors.catalogue"],
        cwd=REPO,
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"},
    )
    assert out.stdout.decode("utf-8") == render()

"""README's error catalogue and the error classes cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from mintdim.shared.errors import error_classes

REPO = Path(__file__).resolve().parents[1]
_ENTRY = re.compile(r"^### \d+\. (\w+)$", re.M)
_BLOCK = re.compile(r"```text\n(.*?)```", re.S)
_VIETNAMESE = re.compile(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.I)


def _catalogue(readme: str) -> dict[str, str]:
    section = readme.split("## Error catalogue", 1)[1].split("\n## ", 1)[0]
    names = _ENTRY.findall(section)
    bodies = _ENTRY.split(section)[2::2]
    assert len(names) == len(set(names)), "an error is documented twice"
    return dict(zip(names, bodies, strict=True))


def test_readme_documents_exactly_the_error_classes():
    documented = _catalogue((REPO / "README.md").read_text(encoding="utf-8"))
    assert set(documented) == {cls.__name__ for cls in error_classes()}


def test_every_documented_error_has_english_and_vietnamese_text():
    documented = _catalogue((REPO / "README.md").read_text(encoding="utf-8"))
    for name, body in documented.items():
        blocks = _BLOCK.findall(body)
        assert blocks, f"{name} has no message example"
        assert all(block.splitlines()[0] == f"{name}:" for block in blocks), name
        vietnamese = [block for block in blocks if _VIETNAMESE.search(block)]
        assert vietnamese and len(vietnamese) < len(blocks), f"{name} lacks one language"


def test_readme_catalogue_is_the_docs_catalogue():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    catalogue = (REPO / "docs" / "error-catalogue.md").read_text(encoding="utf-8")
    body = "\n".join(catalogue.splitlines()[1:]).strip("\n")
    assert body in readme, "run: python scripts/sync_readme.py"

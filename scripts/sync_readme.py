"""Paste ``docs/error-catalogue.md`` into README.md's "Error catalogue" section, or check it.

    python scripts/sync_readme.py          # rewrite the README section
    python scripts/sync_readme.py --check  # exit 1 when README and the catalogue disagree

The section sits between the ``<!-- BEGIN error-catalogue ... -->`` and ``<!-- END
error-catalogue -->`` markers. The catalogue's own title line (``# ...``) is left out: README's
``## Error catalogue`` heading replaces it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
CATALOGUE = REPO / "docs" / "error-catalogue.md"
_SECTION = re.compile(
    r"(<!-- BEGIN error-catalogue[^\n]*-->\n)(.*?)(<!-- END error-catalogue -->)", re.S
)


def catalogue_body() -> str:
    """The catalogue without its title line, ending with one newline."""
    lines = CATALOGUE.read_text(encoding="utf-8").splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines).strip("\n") + "\n"


def synced(readme: str) -> str:
    """README text with the catalogue section replaced by the current catalogue."""
    if not _SECTION.search(readme):
        raise SystemExit("README.md has no error-catalogue markers")
    return _SECTION.sub(lambda m: m.group(1) + "\n" + catalogue_body() + "\n" + m.group(3), readme)


def main(argv: list[str] | None = None) -> int:
    """Rewrite README's catalogue section, or with ``--check`` report whether it is current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = parser.parse_args(argv)
    current = README.read_text(encoding="utf-8")
    wanted = synced(current)
    if args.check:
        print("README error catalogue is " + ("current" if wanted == current else "STALE"))
        return 0 if wanted == current else 1
    README.write_text(wanted, encoding="utf-8")
    print(f"pasted {CATALOGUE.relative_to(REPO)} into {README.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

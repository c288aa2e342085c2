"""PNG pictures of padding: token-length histograms with unit boundaries, and a sweep's padding.

Drawn with matplotlib, an optional extra (``pip install -e ".[plot]"`` in a MintDim checkout, or
``pip install matplotlib``). Without it nothing here fails: :func:`available` is False and the
callers print :data:`NO_MATPLOTLIB` once, in the user's language, and carry on. Files are
written with the Agg backend and without a creation time or software stamp, so the same input
and matplotlib version give the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mintdim.shared.lang import Bilingual

__all__ = ["NO_MATPLOTLIB", "available", "length_histogram", "sweep_padding"]

NO_MATPLOTLIB = Bilingual(
    "MintDim: no pictures ({what}): matplotlib is not installed. Install it with "
    'pip install matplotlib (or pip install -e ".[plot]" in the MintDim checkout).',
    "MintDim: không vẽ hình ({what}): chưa cài matplotlib. Hãy cài bằng "
    'pip install matplotlib (hoặc pip install -e ".[plot]" trong thư mục mã nguồn MintDim).',
)
"""What a build or plan says instead of drawing, when matplotlib is missing."""

_METADATA = {"Software": None}
"""PNG text chunks: none, so the bytes do not depend on when or by which build they were drawn."""

_LENGTH_TEXT = {
    "title": Bilingual("Token lengths and unit sizes", "Độ dài token và unit size"),
    "x": Bilingual("token count per sample", "số token mỗi mẫu"),
    "y": Bilingual("samples", "số mẫu"),
    "units": Bilingual("unit sizes (padding {padding:.2%})", "unit size (padding {padding:.2%})"),
}
_SWEEP_TEXT = {
    "title": Bilingual("Padding per unit set", "Padding theo bộ unit"),
    "x": Bilingual(
        "padding ratio (share of slots that hold PAD)", "tỉ lệ padding (phần slot là PAD)"
    ),
}


def available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    return plt


def length_histogram(
    path: str | os.PathLike[str],
    lengths: np.ndarray,
    samples: np.ndarray,
    sizes: Sequence[int],
    padding_ratio: float,
    title: str = "",
) -> Path:
    """A histogram of token counts (``lengths`` with ``samples`` each) with a line per unit size."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(9, 4.5), dpi=100)
    top = max(int(lengths.max(initial=1)), max(sizes, default=1))
    bins = np.linspace(0, top, min(80, top) + 1)
    axes.hist(lengths, bins=bins, weights=samples, color="#4a7fb5")
    for i, size in enumerate(sizes):
        label = _LENGTH_TEXT["units"].render(padding=padding_ratio) if i == 0 else None
        axes.axvline(size, color="#d1495b", linewidth=1, linestyle="--", label=label)
    axes.set_xlabel(_LENGTH_TEXT["x"].render())
    axes.set_ylabel(_LENGTH_TEXT["y"].render())
    heading = _LENGTH_TEXT["title"].render()
    axes.set_title(f"{heading}: {title}" if title else heading)
    if sizes:
        axes.legend(loc="upper right")
    return _save(figure, plt, path)


def sweep_padding(
    path: str | os.PathLike[str], labels: Sequence[str], padding_ratios: Sequence[float]
) -> Path:
    """One horizontal bar per completed job: its padding ratio, least padding on top."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(8, 1.2 + 0.5 * len(labels)), dpi=100)
    rows = np.arange(len(labels))
    axes.barh(rows, padding_ratios, color="#4a7fb5")
    axes.set_yticks(rows, labels=list(labels))
    axes.invert_yaxis()
    for row, ratio in zip(rows, padding_ratios, strict=True):
        axes.text(ratio, row, f" {ratio:.2%}", va="center")
    axes.set_xlim(0, 1.15)  # ratios are at most 1; the room on the right holds the labels
    axes.set_xlabel(_SWEEP_TEXT["x"].render())
    axes.set_title(_SWEEP_TEXT["title"].render())
    return _save(figure, plt, path)


def _save(figure, plt, path: str | os.PathLike[str]) -> Path:
    target = Path(path)
    figure.tight_layout()
    figure.savefig(target, format="png", metadata=_METADATA)
    plt.close(figure)
    return target

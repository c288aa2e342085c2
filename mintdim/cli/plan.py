"""``mintdim plan``: the exact best unit sizes for k = 1 .. K, from a finished build or a scan.

Reads the token counts of a finished build (its unit indexes: every sample's exact count) or
scans the input of a runner config (the same Hydra overrides as ``python -m mintdim.run``, e.g.
``mintdim plan source=alpaca tokenizer=demo_hf_json``), plans every k with
``units/optimal.plans_up_to``, and prints one table row per k: sizes, padding ratio, pad tokens,
shard bytes and samples per unit. ``--write`` saves one plan as a units YAML the runner loads,
``--png`` a histogram of the token lengths with that plan's unit boundaries.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import numpy as np
from hydra.errors import HydraException

from mintdim import plots
from mintdim.build.contracts import UnitPlan
from mintdim.build.units.optimal import plans_up_to
from mintdim.build.units.packing import ALGORITHM as packing_algorithm
from mintdim.build.units.packing import pack
from mintdim.build.units.validate import COSTS
from mintdim.cli.bilingual import Command, PathType, language_option, option
from mintdim.errors import MintDimError, NotABuildError
from mintdim.shared.lang import Bilingual

__all__ = ["plan", "units_yaml"]

_TEXT = {
    "source_build": Bilingual(
        "{samples:,} samples, {tokens:,} tokens, from the build {path}",
        "{samples:,} mẫu, {tokens:,} token, từ bản build {path}",
    ),
    "source_scan": Bilingual(
        "{samples:,} samples, {tokens:,} tokens, scanned from {files}",
        "{samples:,} mẫu, {tokens:,} token, quét từ {files}",
    ),
    "options": Bilingual(
        "Exact plans (fewest padded slots) with align={align}, max_size={max_size}, cost={cost}:",
        "Phương án tối ưu chính xác (ít slot padding nhất) với align={align}, "
        "max_size={max_size}, cost={cost}:",
    ),
    "header": Bilingual(
        "| k | sizes | padding ratio | pad tokens | shard bytes | samples per unit |",
        "| k | unit size | tỉ lệ padding | số token PAD | dung lượng shard | số mẫu mỗi unit |",
    ),
    "too_long": Bilingual(
        "{count:,} samples are longer than max_size and fit no plan (the longest: {longest:,} tokens).",
        "{count:,} mẫu dài hơn max_size, không vừa phương án nào (dài nhất: {longest:,} token).",
    ),
    "written": Bilingual(
        "Wrote the {k}-unit plan to {path}. Build with it:\n  {command}",
        "Đã ghi phương án {k} unit vào {path}. Build với nó:\n  {command}",
    ),
    "picture": Bilingual(
        "Wrote the token-length histogram with the {k}-unit boundaries to {path}",
        "Đã ghi histogram độ dài token với ranh giới {k} unit vào {path}",
    ),
    "bad_yaml": Bilingual(
        "must be <config dir>/units/<name>.yaml (the runner loads it as units=<name>)",
        "phải có dạng <thư mục config>/units/<tên>.yaml (runner nạp nó bằng units=<tên>)",
    ),
    "build_and_overrides": Bilingual(
        "give either --build or runner overrides, not both",
        "chỉ dùng --build hoặc các override của runner, không dùng cả hai",
    ),
    "no_samples": Bilingual(
        "there are no samples to plan from", "không có mẫu nào để lập phương án"
    ),
    "count_range": Bilingual(
        "--count {count} is more than the {k} plans in the table",
        "--count {count} lớn hơn số phương án trong bảng ({k})",
    ),
    "packed": Bilingual(
        "Packed into rows of {width:,} ({algorithm}): {rows:,} rows for {samples:,} samples "
        "({tokens:,} tokens); the fewest possible is {bound:,} ({over:+.2%}); padding "
        "{padding:.2%}.",
        "Xếp vào các hàng {width:,} slot ({algorithm}): {rows:,} hàng cho {samples:,} mẫu "
        "({tokens:,} token); ít nhất có thể là {bound:,} ({over:+.2%}); padding {padding:.2%}.",
    ),
    "packed_too_long": Bilingual(
        "{count:,} samples are longer than {width:,} tokens and fit no row (on_overflow decides).",
        "{count:,} mẫu dài hơn {width:,} token, không vừa hàng nào (on_overflow quyết định).",
    ),
    "yaml_head": Bilingual(
        "# Planned by `mintdim plan`: the exact best {k} unit sizes for {samples:,} samples "
        "(padding {padding:.2%}, align={align}, cost={cost}).",
        "# Lập bởi `mintdim plan`: {k} unit size tối ưu chính xác cho {samples:,} mẫu "
        "(padding {padding:.2%}, align={align}, cost={cost}).",
    ),
}

_HELP = {
    "plan": Bilingual(
        "Exact best unit sizes for k = 1..K, from a finished build (--build DIR) or a scan of "
        "the input that runner overrides name (e.g. source=alpaca tokenizer=demo_hf_json).",
        "Các unit size tối ưu chính xác cho k = 1..K, từ một bản build đã xong (--build DIR) "
        "hoặc quét dữ liệu đầu vào mà các override của runner chỉ ra (vd. source=alpaca "
        "tokenizer=demo_hf_json).",
    ),
    "build": Bilingual("A finished build.", "Một bản build đã xong."),
    "max_units": Bilingual(
        "Plan every k from 1 to K units.", "Lập phương án cho mọi k từ 1 đến K unit."
    ),
    "align": Bilingual(
        "Every size is a multiple of this.", "Mọi unit size đều là bội số của số này."
    ),
    "max_size": Bilingual(
        "The largest size allowed (longer samples are listed, never dropped).",
        "Unit size lớn nhất được phép (mẫu dài hơn được liệt kê, không bao giờ bị bỏ).",
    ),
    "cost": Bilingual(
        "What a slot costs: 1 (tokens) or its unit's size (attention).",
        "Chi phí của một ô: 1 (tokens) hoặc bằng unit size của nó (attention).",
    ),
    "count": Bilingual(
        "The plan --write and --png use (default: K).",
        "Phương án mà --write và --png dùng (mặc định: K).",
    ),
    "write": Bilingual(
        "Save that plan as <config dir>/units/<name>.yaml, for the runner's units=<name>.",
        "Lưu phương án đó thành <thư mục config>/units/<tên>.yaml, cho units=<tên> của runner.",
    ),
    "png": Bilingual(
        "Draw the token-length histogram with that plan's boundaries (PNG).",
        "Vẽ histogram độ dài token với ranh giới của phương án đó (PNG).",
    ),
    "workers": Bilingual("Scan processes.", "Số tiến trình quét."),
    "pack": Bilingual(
        "Also predict packing whole samples into rows of W slots: rows, the lower bound and "
        "padding.",
        "Dự đoán thêm việc xếp nguyên mẫu vào các hàng W slot: số hàng, cận dưới và padding.",
    ),
}


@click.command(
    cls=Command, text=_HELP["plan"], context_settings={"help_option_names": ["-h", "--help"]}
)
@click.argument("overrides", nargs=-1)
@option("--build", "build_dir", type=PathType(file_okay=False), text=_HELP["build"])
@option(
    "-k",
    "--max-units",
    default=16,
    show_default=True,
    type=click.IntRange(min=1),
    text=_HELP["max_units"],
)
@option("--align", default=1, show_default=True, type=click.IntRange(min=1), text=_HELP["align"])
@option("--max-size", default=None, type=click.IntRange(min=1), text=_HELP["max_size"])
@option(
    "--cost",
    default="tokens",
    show_default=True,
    type=click.Choice(COSTS),
    text=_HELP["cost"],
)
@option("--count", default=None, type=click.IntRange(min=1), text=_HELP["count"])
@option("--write", "write_path", type=PathType(dir_okay=False), text=_HELP["write"])
@option("--png", "png_path", type=PathType(dir_okay=False), text=_HELP["png"])
@option("--workers", default=None, type=click.IntRange(min=1), text=_HELP["workers"])
@option("--pack", "pack_width", default=None, type=click.IntRange(min=1), text=_HELP["pack"])
@language_option
def plan(
    overrides: tuple[str, ...],
    build_dir: str | None,
    max_units: int,
    align: int,
    max_size: int | None,
    cost: str,
    count: int | None,
    write_path: str | None,
    png_path: str | None,
    workers: int | None,
    pack_width: int | None,
) -> None:
    """``mintdim plan``; its help is ``_HELP["plan"]``."""
    if build_dir is not None and overrides:
        raise click.UsageError(_TEXT["build_and_overrides"].render())
    if write_path is not None and not _loadable(Path(write_path)):
        raise click.BadParameter(_TEXT["bad_yaml"].render(), param_hint="--write")
    with _reported():
        counts, bytes_per_token, build_batch = _counts(overrides, build_dir, workers)
        table = plans_up_to(counts, max_units, align=align, max_size=max_size, cost=cost)
    click.echo(_TEXT["options"].render(align=align, max_size=max_size, cost=cost))
    click.echo("")
    click.echo(render_table(table, bytes_per_token))
    if table and table[0].too_long.size:
        longest = int(counts[table[0].too_long].max())
        click.echo(_TEXT["too_long"].render(count=table[0].too_long.size, longest=longest))
    if pack_width is not None:
        _packed(counts, pack_width)
    chosen_k = count if count is not None else len(table)
    if chosen_k > len(table):
        raise click.BadParameter(
            _TEXT["count_range"].render(count=chosen_k, k=len(table)), param_hint="--count"
        )
    chosen = table[chosen_k - 1]
    if write_path is not None:
        target = Path(write_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(units_yaml(chosen, build_batch, counts.size), encoding="utf-8")
        command = f"python -m mintdim.run --config-dir {target.parent.parent} units={target.stem}"
        click.echo(_TEXT["written"].render(k=chosen_k, path=target, command=command))
    if png_path is not None:
        _draw(chosen, chosen_k, png_path)


@contextmanager
def _reported() -> Iterator[None]:
    """A MintDim error is shown as its message (exit 1; 2 when --build names no finished build,
    as for ``mintdim verify``), an override Hydra refuses as Hydra's (exit 2): no traceback."""
    try:
        yield
    except MintDimError as err:
        click.echo(err.message(), err=True)
        sys.exit(2 if isinstance(err, NotABuildError) else 1)
    except HydraException as err:
        click.echo(str(err), err=True)
        sys.exit(2)


def _counts(
    overrides: tuple[str, ...], build_dir: str | None, workers: int | None
) -> tuple[np.ndarray, int, int]:
    """Every sample's token count, the bytes of one slot, and the build_batch for a YAML; says
    where the counts came from."""
    if build_dir is not None:
        counts, bytes_per_token, build_batch = _from_build(Path(build_dir))
        where = _TEXT["source_build"].render(
            samples=counts.size, tokens=int(counts.sum()), path=build_dir
        )
    else:
        counts, bytes_per_token, build_batch, files = _from_scan(overrides, workers)
        where = _TEXT["source_scan"].render(
            samples=counts.size, tokens=int(counts.sum()), files=", ".join(files)
        )
    if not counts.size:
        raise click.ClickException(_TEXT["no_samples"].render())
    click.echo(where)
    return counts, bytes_per_token, build_batch


def _packed(counts: np.ndarray, width: int) -> None:
    """What packing the samples into rows of ``width`` would give (``units/packing.py``)."""
    fitting = counts[counts <= width]
    packing = pack(fitting, width)
    click.echo("")
    click.echo(
        _TEXT["packed"].render(
            width=width,
            algorithm=packing_algorithm,
            rows=packing.rows,
            samples=fitting.size,
            tokens=packing.tokens,
            bound=packing.lower_bound,
            over=packing.rows / packing.lower_bound - 1 if packing.lower_bound else 0.0,
            padding=packing.padding_ratio,
        )
    )
    if fitting.size < counts.size:
        click.echo(_TEXT["packed_too_long"].render(count=counts.size - fitting.size, width=width))


def _draw(chosen: UnitPlan, k: int, path: str) -> None:
    if not plots.available():
        click.echo(plots.NO_MATPLOTLIB.render(what=path), err=True)
        return
    plots.length_histogram(
        path, chosen.lengths, chosen.length_samples, chosen.sizes, chosen.padding_ratio
    )
    click.echo(_TEXT["picture"].render(k=k, path=path))


def render_table(table: tuple[UnitPlan, ...], bytes_per_token: int) -> str:
    """The markdown table of the plans, one row per k."""
    lines = [_TEXT["header"].render(), "|---:|---|---:|---:|---:|---|"]
    for k, unit_plan in enumerate(table, start=1):
        cells = (
            k,
            ", ".join(str(size) for size in unit_plan.sizes),
            f"{unit_plan.padding_ratio:.2%}",
            f"{unit_plan.pad_tokens:,}",
            f"{unit_plan.total_slots * bytes_per_token:,}",
            ", ".join(f"{n:,}" for n in unit_plan.samples_per_unit),
        )
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines)


def units_yaml(unit_plan: UnitPlan, build_batch: int, samples: int) -> str:
    """A units group file for the runner (``units=<name>``) holding one plan's sizes."""
    head = _TEXT["yaml_head"]
    facts = {
        "k": len(unit_plan.sizes),
        "samples": samples,
        "padding": unit_plan.padding_ratio,
        "align": unit_plan.align,
        "cost": unit_plan.cost,
    }
    sizes = ", ".join(str(size) for size in unit_plan.sizes)
    return (
        f"{head.render('en', **facts)}\n{head.render('vi', **facts)}\n"
        f"sizes:\n  - [{sizes}]\nbuild_batch: [{build_batch}]\n"
    )


def _loadable(path: Path) -> bool:
    return path.suffix == ".yaml" and path.parent.name == "units"


def _from_build(path: Path) -> tuple[np.ndarray, int, int]:
    from mintdim import open_build

    build = open_build(path)
    counts = [build.unit_index(size)["token_count"] for size in build.units]
    joined = np.concatenate(counts).astype(np.int64) if counts else np.empty(0, np.int64)
    return joined, build.dtype.itemsize, _DEFAULT_BUILD_BATCH


_DEFAULT_BUILD_BATCH = 4096


def _from_scan(
    overrides: tuple[str, ...], workers: int | None
) -> tuple[np.ndarray, int, int, tuple[str, ...]]:
    from mintdim.runner.translate import scan_job

    job, build_batch = scan_job(list(overrides))
    result = job.scan(workers=workers, progress=sys.stderr.isatty())
    return result.token_counts, result.bytes_per_token, build_batch, result.files

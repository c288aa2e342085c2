"""Errors of the units stage: unit sizes, the planner and samples longer than every unit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    _OPTION_RULES,
    KINDS,
    MintDimError,
    _choice,
    _say,
    _show,
    format_location,
    sample_heading,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "UnitOverflowError",
    "UnitPlanError",
    "UnitValidationError",
]


class UnitValidationError(MintDimError, ValueError):
    """Raised when a units value breaks a rule; ``key`` is the full key, e.g. units.sizes[0][2]."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        "positive_int": Bilingual("must be a positive integer", "phải là số nguyên dương"),
        "ascending": Bilingual("must be sorted ascending", "phải tăng dần"),
        "non_empty": Bilingual("must not be empty", "không được rỗng"),
        "list_of_lists": Bilingual(
            "must be a list of lists of integers", "phải là list các list số nguyên"
        ),
        "list_of_ints": Bilingual(
            "must be a list of positive integers (one shared, or one per file)",
            "phải là list các số nguyên dương (một giá trị dùng chung, hoặc mỗi file một giá trị)",
        ),
        "too_large": Bilingual(
            "must be at most 16,777,216 (2**24): every sample of a unit is stored as unit_size "
            "slots, so one record of a larger unit would take more than 64 MiB, far beyond any "
            "model's context",
            "phải nhỏ hơn hoặc bằng 16,777,216 (2**24): mỗi mẫu của một unit được lưu thành "
            "unit_size ô, nên một bản ghi của unit lớn hơn sẽ chiếm hơn 64 MiB, vượt xa ngữ cảnh "
            "của mọi mô hình",
        ),
        "bool": Bilingual("must be true or false", "phải là true hoặc false"),
    }

    key: str
    value: object
    rule: str = _choice(_PROBLEMS)

    summary = Bilingual("Invalid unit config.", "Unit config không hợp lệ.")
    examples = (
        {"key": "units.sizes[0][1]", "value": 128, "rule": "ascending"},
        {"key": "units.sizes[0][3]", "value": 2**40, "rule": "too_large"},
    )

    _RULES = Bilingual(
        "- sizes must be positive integers\n- sizes must be sorted ascending\n"
        "- build_batch must be a positive integer",
        "- sizes phải là các số nguyên dương\n- sizes phải tăng dần\n"
        "- build_batch phải là số nguyên dương",
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.RULES, self._RULES
        yield (
            _H.PROBLEM,
            _say(
                Bilingual("{key} {broken}, got {shown}", "{key} {broken}, hiện tại là {shown}"),
                broken=self._PROBLEMS[self.rule],
                shown=_show(self.value),
            ),
        )


class UnitPlanError(UnitValidationError):
    """Raised when an option of the unit planner (``units(sizes="auto", ...)`` or
    ``plan_units``) breaks a rule; ``key`` names it, e.g. ``units.align``."""

    _PROBLEMS: ClassVar[dict[str, Bilingual]] = {
        **_OPTION_RULES,
        "count_or_cost": Bilingual(
            "needs exactly one of count and unit_cost (unit_cost only with count=None)",
            "cần đúng một trong count và unit_cost (unit_cost chỉ khi count=None)",
        ),
        "non_negative": Bilingual("must be a finite number >= 0", "phải là số hữu hạn >= 0"),
        "below_align": Bilingual(
            "must be at least align (the smallest allowed size)",
            "phải ít nhất bằng align (size nhỏ nhất được phép)",
        ),
        "cost": Bilingual('must be "tokens" or "attention"', 'phải là "tokens" hoặc "attention"'),
        "auto_only": Bilingual(
            'applies only with sizes="auto" (units=auto in the runner)',
            'chỉ dùng được với sizes="auto" (units=auto trong runner)',
        ),
        "counts": Bilingual(
            "must be a 1-D array of integer token counts >= 0",
            "phải là mảng 1 chiều các số token nguyên >= 0",
        ),
        "nothing_to_plan": Bilingual(
            "has no sample to plan from: the input holds no sample",
            "không có mẫu nào để lập phương án: dữ liệu đầu vào không có mẫu",
        ),
    }

    rule: str = _choice(_PROBLEMS)

    summary = Bilingual("Invalid unit planning option.", "Tùy chọn lập unit không hợp lệ.")
    examples = ({"key": "units.align", "value": 0, "rule": "positive_int"},)

    _RULES = Bilingual(
        "- count (at most this many sizes) and align are positive integers\n"
        "- max_size, when given, is an integer >= align\n"
        '- cost is "tokens" or "attention"\n'
        "- unit_cost >= 0 replaces count (count=None): the planner picks how many\n"
        '- these options apply only with sizes="auto"',
        "- count (nhiều nhất bấy nhiêu size) và align là số nguyên dương\n"
        "- max_size, nếu có, là số nguyên >= align\n"
        '- cost là "tokens" hoặc "attention"\n'
        "- unit_cost >= 0 thay cho count (count=None): bộ lập tự chọn số unit\n"
        '- các tùy chọn này chỉ dùng với sizes="auto"',
    )


class UnitOverflowError(MintDimError, ValueError):
    """Raised when samples have more tokens than the largest configured unit size.

    A build reports every such sample at once: ``file``/``line``/``token_count`` are the first
    (the spec's sections), ``count`` how many there are, ``largest_at``/``largest_count`` the
    longest, ``first_at``/``first_counts`` the first few (``file:line`` and token count).
    ``stopped_at`` (``file:line``) is set when counting had to stop early at a line with another
    error.
    """

    file: str
    line: int
    token_count: int
    max_unit_size: int
    count: int = 1
    largest_at: str = ""
    largest_count: int = 0
    first_at: list[str] = ()
    first_counts: list[int] = ()
    stopped_at: str = ""
    kind: str = _choice(KINDS, "jsonl")
    """``parquet``: the locations are ``file:row``, not ``file:line``."""

    _SAMPLE = Bilingual("{at} ({tokens:,} tokens)", "{at} ({tokens:,} token)")

    examples = (
        {
            "file": "./data/alpaca.jsonl",
            "line": 18291,
            "token_count": 417,
            "max_unit_size": 320,
            "largest_at": "./data/alpaca.jsonl:18291",
            "largest_count": 417,
            "first_at": ["./data/alpaca.jsonl:18291"],
            "first_counts": [417],
        },
        {
            "file": "./data/xquad_vi.jsonl",
            "line": 392,
            "token_count": 1063,
            "max_unit_size": 1024,
            "count": 37,
            "largest_at": "./data/xquad_vi.jsonl:401",
            "largest_count": 2373,
            "first_at": [
                "./data/xquad_vi.jsonl:392",
                "./data/xquad_vi.jsonl:401",
                "./data/xquad_vi.jsonl:517",
            ],
            "first_counts": [1063, 2373, 1190],
        },
    )

    summary = Bilingual(
        "Sample token length exceeds max unit size.",
        "Độ dài token của mẫu vượt quá unit lớn nhất.",
    )

    def _sections(self) -> Iterator[Any]:
        yield sample_heading(self.kind), format_location(self.file, self.line)
        yield "token_count", self.token_count
        yield "max_unit_size", self.max_unit_size
        if self.count > 1:
            yield (
                Bilingual("Overflowing samples", "Số mẫu bị tràn"),
                Bilingual(
                    "{count:,} (every sample longer than {max_unit_size} tokens)",
                    "{count:,} (mọi mẫu dài hơn {max_unit_size} token)",
                ),
            )
            yield (
                Bilingual("Largest", "Mẫu dài nhất"),
                _say(self._SAMPLE, at=self.largest_at, tokens=self.largest_count),
            )
            yield (
                Bilingual("First overflowing samples", "Các mẫu tràn đầu tiên"),
                *(
                    _say("- {line}", line=_say(self._SAMPLE, at=at, tokens=tokens))
                    for at, tokens in zip(self.first_at, self.first_counts, strict=True)
                ),
            )
        if self.stopped_at:
            yield (
                Bilingual("Counted up to", "Đã đếm đến"),
                _say(
                    Bilingual(
                        "{stopped_at}: that record has another error, so later samples were not "
                        "counted",
                        "{stopped_at}: bản ghi đó có lỗi khác, nên các mẫu sau chưa được đếm",
                    )
                ),
            )
        yield Bilingual("Increase unit sizes and run again.", "Hãy tăng unit sizes rồi chạy lại.")
        if self.count > 1:
            yield Bilingual(
                "To see sizes that hold every sample: mintdim plan, or build with units=auto.",
                "Để xem các size chứa được mọi mẫu: mintdim plan, hoặc build với units=auto.",
            )

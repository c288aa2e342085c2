"""The typed schema of the runner's config (Hydra structured configs) and its help texts.

``conf/config.yaml`` lists ``mintdim_schema`` first in its defaults, so every group file and
every command-line override is merged into these dataclasses: an unknown key, a value of the
wrong type or an unknown enum value fails while Hydra composes, before any work. Every list
follows the Python API's rule: one entry shared by every input file, or one entry per file.
"""

from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, get_type_hints

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from mintdim.build.contracts import ParityGuard

__all__ = [
    "SCHEMA_NAME",
    "ExecutorConfig",
    "ExecutorName",
    "EncodeMode",
    "Lang",
    "MintDimConfig",
    "OutputConfig",
    "OverflowPolicy",
    "PlanCost",
    "SourceConfig",
    "SourceKind",
    "SplitConfig",
    "SplitName",
    "TokenizerConfig",
    "TokenizerEngine",
    "TokenizerType",
    "UnitsConfig",
    "field_help",
    "node_schema",
    "register_configs",
    "valid_keys",
]

SCHEMA_NAME = "mintdim_schema"
"""ConfigStore name of :class:`MintDimConfig`; differs from every YAML name on purpose
(Hydra's automatic schema matching by equal names is deprecated)."""


class SourceKind(Enum):
    """Which fluent source step the runner calls."""

    jsonl = "jsonl"
    parquet = "parquet"


class TokenizerType(Enum):
    """Which fluent tokenizer step the runner calls."""

    sentencepiece = "sentencepiece"
    hf_json = "hf_json"


class ExecutorName(Enum):
    """Where the pieces of a build are encoded."""

    local = "local"
    ray = "ray"


class EncodeMode(Enum):
    """The tokenizer key ``encode``: how segment spans are found (null: none stored)."""

    whole = "whole"
    segments = "segments"


class OverflowPolicy(Enum):
    """``run(on_overflow=...)``: what a sample longer than the largest unit does."""

    abort = "abort"
    skip = "skip"
    truncate = "truncate"
    extend = "extend"


class PlanCost(Enum):
    """What ``units=auto`` minimises."""

    tokens = "tokens"
    attention = "attention"


class TokenizerEngine(Enum):
    """The tokenizer key ``engine``: the tokenizer's own library, or gigatoken (parity-guarded)."""

    reference = "reference"
    fast = "fast"


class SplitName(Enum):
    """Whether the runner groups and splits the build after it: ``split=none`` or
    ``split=threeway``."""

    none = "none"
    threeway = "threeway"


class DecontaminateName(Enum):
    """Whether the runner decontaminates the build after it: ``decontaminate=none`` or
    ``decontaminate=ngrams``."""

    none = "none"
    ngrams = "ngrams"


class MatchMode(Enum):
    """What decontamination matches: the build's token ids, or normalised words."""

    tokens = "tokens"
    words = "words"


class Lang(Enum):
    """Language of MintDim's error messages."""

    en = "en"
    vi = "vi"


def _help(en: str, vi: str, example: str) -> dict[str, str]:
    return {"en": en, "vi": vi, "example": example}


@dataclass
class SourceConfig:
    """``.source.<kind>(files=..., fields=..., templates=...)``."""

    files: list[str] = field(
        default=MISSING,
        metadata=_help(
            "list of input paths (JSONL, compressed JSONL or, with kind parquet, Parquet), "
            "relative to the current directory",
            "list đường dẫn file đầu vào (JSONL, JSONL nén hoặc, với kind parquet, Parquet), "
            "tính từ thư mục hiện tại",
            "source.files=[./data/a.jsonl,./data/b.jsonl.zst]",
        ),
    )
    fields: list[list[str]] = field(
        default=MISSING,
        metadata=_help(
            "list of field-name lists: one shared by every file, or one per file",
            "list các list tên field: một list dùng chung, hoặc mỗi file một list",
            "source.fields=[[instruction,input,output]]",
        ),
    )
    templates: list[str] = field(
        default=MISSING,
        metadata=_help(
            "list of templates with {field} placeholders: one shared, or one per file",
            "list template có placeholder {field}: một template dùng chung, hoặc mỗi file một",
            "'source.templates=[\"{prompt}\\n{response}\"]'",
        ),
    )
    max_line_bytes: int | None = field(
        default=None,
        metadata=_help(
            "longest JSONL line read, or most bytes a Parquet row's fields hold (null: 64 MiB)",
            "dòng JSONL dài nhất được đọc, hoặc số byte tối đa các field của một hàng Parquet "
            "(null: 64 MiB)",
            "source.max_line_bytes=268435456",
        ),
    )
    kind: SourceKind = field(
        default=SourceKind.jsonl,
        metadata=_help(
            "jsonl (plain, gzip, zstandard, xz or bzip2, told apart by their bytes) or parquet "
            "(extra [parquet]; fields are columns, source_line is the row)",
            "jsonl (thường, gzip, zstandard, xz hoặc bzip2, phân biệt theo các byte) hoặc "
            "parquet (phần tuỳ chọn [parquet]; field là cột, source_line là số hàng)",
            "source.kind=parquet",
        ),
    )


@dataclass
class ParityConfig:
    """The tokenizer key ``parity``: what the fast engine's parity guard checks during a build."""

    first_rows: int = field(
        default=ParityGuard().first_rows,
        metadata=_help(
            "the fast engine's guard re-derives the rows on the first file's first N lines with "
            "the reference library (0: none)",
            "bộ kiểm tra của engine fast tokenize lại bằng thư viện tham chiếu các hàng trên N "
            "dòng đầu của file đầu tiên (0: không hàng nào)",
            "tokenizer.parity.first_rows=4096",
        ),
    )
    every: int = field(
        default=ParityGuard().every,
        metadata=_help(
            "then one row in N of every file, by line number (1: every row)",
            "sau đó cứ N hàng thì kiểm tra một hàng của mọi file, theo số dòng (1: mọi hàng)",
            "tokenizer.parity.every=1",
        ),
    )


@dataclass
class TokenizerConfig:
    """``.tokenizer.<type>([{"path": p} for p in path])``."""

    type: TokenizerType = field(
        default=MISSING,
        metadata=_help(
            "sentencepiece (a .model file) or hf_json (a tokenizer.json file)",
            "sentencepiece (file .model) hoặc hf_json (file tokenizer.json)",
            "tokenizer.type=hf_json",
        ),
    )
    path: list[str] = field(
        default=MISSING,
        metadata=_help(
            "list of tokenizer file paths: one shared by every file, or one per file",
            "list đường dẫn file tokenizer: một file dùng chung, hoặc mỗi file một",
            "tokenizer.path=[./tokenizer/tokenizer.model]",
        ),
    )
    engine: TokenizerEngine = field(
        default=TokenizerEngine.reference,
        metadata=_help(
            "reference (the tokenizer's own library) or fast (gigatoken, extra [fast], checked "
            "against the reference while it runs; other tokenizers fall back and say why)",
            "reference (thư viện của chính tokenizer) hoặc fast (gigatoken, phần tuỳ chọn [fast], "
            "được đối chiếu với engine tham chiếu khi chạy; tokenizer khác tự quay về và nói lý do)",
            "tokenizer.engine=fast",
        ),
    )
    encode: EncodeMode | None = field(
        default=None,
        metadata=_help(
            "store each sample's segment spans: whole (exact whole-text tokens, spans from the "
            "library's offsets), segments (each segment encoded alone), or null (no spans)",
            "lưu span của từng segment trong mỗi mẫu: whole (token của cả văn bản, span lấy từ "
            "offset của thư viện), segments (mã hoá riêng từng segment), hoặc null (không lưu)",
            "tokenizer.encode=whole",
        ),
    )
    append_eos: bool = field(
        default=False,
        metadata=_help(
            "append the tokenizer's own EOS id to every sample (its last segment, eos)",
            "thêm EOS của chính tokenizer vào cuối mỗi mẫu (segment cuối, eos)",
            "tokenizer.append_eos=true",
        ),
    )
    pad_fallback: str | None = field(
        default=None,
        metadata=_help(
            "PAD when the library has none: eos, unk, or an existing token string",
            "PAD khi thư viện không có: eos, unk, hoặc một token có sẵn",
            "tokenizer.pad_fallback=eos",
        ),
    )
    unk_fallback: str | None = field(
        default=None,
        metadata=_help(
            "UNK when the library has none: eos, an existing token string, or none (UNK tier off)",
            "UNK khi thư viện không có: eos, một token có sẵn, hoặc none (tắt tầng UNK)",
            "tokenizer.unk_fallback=none",
        ),
    )
    parity: ParityConfig = field(
        default_factory=ParityConfig,
        metadata=_help(
            "the fast engine's parity guard: first_rows and every (docs/fast-engine.md)",
            "bộ kiểm tra parity của engine fast: first_rows và every (docs/fast-engine.md)",
            "tokenizer.parity.every=64",
        ),
    )


@dataclass
class UnitsConfig:
    """``.units(sizes=..., build_batch=..., count=..., align=..., ...)``."""

    # Any: a list of size lists, or the string "auto" (OmegaConf has no union types); the core
    # checks the value and names the key when it is neither.
    sizes: Any = field(
        default=MISSING,
        metadata=_help(
            "list of ascending unit-size lists (one shared by every file, or one per file), "
            "or auto: planned exactly from a scan of the data",
            "list các list unit size tăng dần (một list dùng chung, hoặc mỗi file một list), "
            "hoặc auto: lập tối ưu chính xác từ một lần quét dữ liệu",
            "units.sizes=[[128,192,256,320]]",
        ),
    )
    build_batch: list[int] = field(
        default=MISSING,
        metadata=_help(
            "list of samples per tokenizer batch: one shared, or one per file",
            "list số mẫu mỗi batch tokenizer: một giá trị dùng chung, hoặc mỗi file một",
            "units.build_batch=[4096]",
        ),
    )
    count: int | None = field(
        default=None,
        metadata=_help(
            "sizes=auto: at most this many unit sizes (default 8)",
            "sizes=auto: nhiều nhất bấy nhiêu unit size (mặc định 8)",
            "units=auto units.count=8",
        ),
    )
    align: int | None = field(
        default=None,
        metadata=_help(
            "sizes=auto: every size a multiple of this (default 1)",
            "sizes=auto: mọi size là bội số của giá trị này (mặc định 1)",
            "units=auto units.align=64",
        ),
    )
    max_size: int | None = field(
        default=None,
        metadata=_help(
            "sizes=auto: no unit larger than this; longer samples overflow",
            "sizes=auto: không unit nào lớn hơn giá trị này; mẫu dài hơn bị tràn",
            "units=auto units.max_size=4096",
        ),
    )
    cost: PlanCost | None = field(
        default=None,
        metadata=_help(
            "sizes=auto: minimise padded slots (tokens) or slots weighted by unit size "
            "(attention); default tokens",
            "sizes=auto: tối thiểu số slot (tokens) hoặc slot nhân với unit size (attention); "
            "mặc định tokens",
            "units=auto units.cost=attention",
        ),
    )
    unit_cost: float | None = field(
        default=None,
        metadata=_help(
            "sizes=auto with count=null: the price of one more unit, so the planner picks how many",
            "sizes=auto với count=null: giá của thêm một unit, để bộ lập chọn số unit",
            "units=auto units.count=null units.unit_cost=100000",
        ),
    )
    pack: bool = field(
        default=False,
        metadata=_help(
            "pack several whole samples into each row of a unit (docs/packing.md)",
            "xếp nhiều mẫu nguyên vẹn vào mỗi hàng của một unit (docs/packing.md)",
            "units=small units.pack=true",
        ),
    )


@dataclass
class OutputConfig:
    """``.output.dir(dir, samples_per_shard=...)``."""

    dir: list[str] = field(
        default=MISSING,
        metadata=_help(
            "list of output directories (new or empty): one shared, or one per file",
            "list thư mục output (mới hoặc rỗng): một thư mục dùng chung, hoặc mỗi file một",
            "output.dir=[./artifacts/units]",
        ),
    )
    samples_per_shard: list[int] = field(
        default=MISSING,
        metadata=_help(
            "list of records per shard file: one shared, or one per file",
            "list số bản ghi mỗi file shard: một giá trị dùng chung, hoặc mỗi file một",
            "output.samples_per_shard=[10000]",
        ),
    )


@dataclass
class ExecutorConfig:
    """``job.run(executor=name, ray_address=address)``."""

    name: ExecutorName = field(
        default=ExecutorName.local,
        metadata=_help(
            "local (processes on this machine) or ray (actors on a Ray cluster)",
            "local (các process trên máy này) hoặc ray (các actor trên một cluster Ray)",
            "executor=ray",
        ),
    )
    address: str | None = field(
        default=None,
        metadata=_help(
            "Ray cluster: null (local or RAY_ADDRESS), auto, or ray://<head>:10001",
            "cluster Ray: null (cục bộ hoặc RAY_ADDRESS), auto, hoặc ray://<head>:10001",
            "executor.address=auto",
        ),
    )


@dataclass
class SplitConfig:
    """``mintdim.group(build, ...)`` then ``mintdim.split(build, groups, ...)`` inside the job
    directory (``split=threeway``); nothing with ``split=none``."""

    name: SplitName = field(
        default=SplitName.none,
        metadata=_help(
            "none (build only) or threeway (then group and split the build in the job directory)",
            "none (chỉ build) hoặc threeway (rồi nhóm và phân chia bản build trong thư mục job)",
            "split=threeway",
        ),
    )
    seed: int = field(
        default=0,
        metadata=_help(
            "seed of the allocation: the same build, groups and seed give the same split",
            "seed của phép phân bổ: cùng bản build, nhóm và seed cho cùng phân chia",
            "split.seed=7",
        ),
    )
    ratios: dict[str, float] = field(
        default_factory=lambda: {"train": 0.98, "validation": 0.01, "test": 0.01},
        metadata=_help(
            "shares of groups for train, validation and test (each >= 0, summing to 1)",
            "tỉ lệ nhóm cho train, validation và test (mỗi tỉ lệ >= 0, tổng bằng 1)",
            "'split.ratios={train:0.9,validation:0.05,test:0.05}'",
        ),
    )
    stratify: str | None = field(
        default=None,
        metadata=_help(
            "a source field (or source_file) whose values get their own targets",
            "một field nguồn (hoặc source_file) mà mỗi giá trị có mục tiêu riêng",
            "split.stratify=source_file",
        ),
    )
    ratios_by_stratum: dict[str, Any] = field(
        default_factory=dict,
        metadata=_help(
            "other shares for some strata: {stratum: {train: .., validation: .., test: ..}}",
            "tỉ lệ khác cho một số tầng: {tầng: {train: .., validation: .., test: ..}}",
            "'split.ratios_by_stratum={edo:{train:0.9,validation:0.05,test:0.05}}'",
        ),
    )
    window: int | None = field(
        default=None,
        metadata=_help(
            "evaluation windows of at most W+1 ids over validation and test (null: none)",
            "cửa sổ đánh giá tối đa W+1 id trên validation và test (null: không có)",
            "split.window=2048",
        ),
    )
    keys: list[str] = field(
        default_factory=list,
        metadata=_help(
            "source fields whose equal (normalized) values join samples into one group",
            "các field nguồn mà giá trị (đã chuẩn hóa) bằng nhau thì gộp mẫu vào một nhóm",
            "'split.keys=[work_id,title]'",
        ),
    )
    alias_rules: list[str] = field(
        default_factory=list,
        metadata=_help(
            "'REGEX=>REPLACEMENT' rules canonicalizing key values further",
            "các quy tắc 'REGEX=>REPLACEMENT' chuẩn hóa thêm giá trị khóa",
            "'split.alias_rules=[\"\\s*vol\\.?\\s*\\d+$=>\"]'",
        ),
    )
    joins: str | None = field(
        default=None,
        metadata=_help(
            "a reviewer's JSONL of manual joins ({a, b, reason} per line)",
            "file JSONL các liên kết thủ công của người rà soát ({a, b, reason} mỗi dòng)",
            "split.joins=./review/joins.jsonl",
        ),
    )
    near_duplicates: bool = field(
        default=True,
        metadata=_help(
            "search and confirm near-duplicates (character 5-grams)",
            "tìm và xác nhận bản gần trùng (5-gram ký tự)",
            "split.near_duplicates=false",
        ),
    )
    min_chars: int = field(
        default=200,
        metadata=_help(
            "near-duplicate rule: least significant characters of the shorter sample",
            "quy tắc gần trùng: số ký tự có nghĩa tối thiểu của mẫu ngắn hơn",
            "split.min_chars=200",
        ),
    )
    min_distinct: int = field(
        default=100,
        metadata=_help(
            "near-duplicate rule: least distinct 5-grams of the shorter sample",
            "quy tắc gần trùng: số 5-gram khác nhau tối thiểu của mẫu ngắn hơn",
            "split.min_distinct=100",
        ),
    )
    coverage: float = field(
        default=0.9,
        metadata=_help(
            "near-duplicate rule: least share of the shorter sample's 5-grams in the other",
            "quy tắc gần trùng: tỉ lệ tối thiểu 5-gram của mẫu ngắn hơn có trong mẫu kia",
            "split.coverage=0.9",
        ),
    )
    sketch_size: int = field(
        default=40,
        metadata=_help(
            "near-duplicate search: values of each sample's MinHash signature",
            "tìm gần trùng: số giá trị trong chữ ký MinHash của mỗi mẫu",
            "split.sketch_size=40",
        ),
    )
    band_rows: int = field(
        default=5,
        metadata=_help(
            "near-duplicate search: signature values per LSH band",
            "tìm gần trùng: số giá trị chữ ký mỗi band LSH",
            "split.band_rows=5",
        ),
    )
    min_shared: int = field(
        default=1,
        metadata=_help(
            "near-duplicate search: least band buckets a compared pair shares",
            "tìm gần trùng: số bucket band chung tối thiểu của một cặp được so sánh",
            "split.min_shared=1",
        ),
    )
    max_postings: int = field(
        default=128,
        metadata=_help(
            "near-duplicate search cap: a bucket with more samples is compared as a star",
            "giới hạn tìm gần trùng: bucket có nhiều mẫu hơn được so sánh theo hình sao",
            "split.max_postings=128",
        ),
    )
    max_candidates: int = field(
        default=128,
        metadata=_help(
            "near-duplicate search cap: candidates kept per sample",
            "giới hạn tìm gần trùng: số ứng viên giữ lại cho mỗi mẫu",
            "split.max_candidates=128",
        ),
    )


@dataclass
class DecontaminateConfig:
    """``mintdim.decontaminate(build, out, against=..., ngram=..., match=...)`` inside the job
    directory (``decontaminate=ngrams``); nothing with ``decontaminate=none``."""

    name: DecontaminateName = field(
        default=DecontaminateName.none,
        metadata=_help(
            "none (build only) or ngrams (then remove the samples holding benchmark items)",
            "none (chỉ build) hoặc ngrams (rồi loại các mẫu chứa mục benchmark)",
            "decontaminate=ngrams",
        ),
    )
    against: list[str] = field(
        default_factory=list,
        metadata=_help(
            "benchmark files and fields, each PATH:FIELD[,FIELD...]",
            "các file benchmark và field, mỗi mục PATH:FIELD[,FIELD...]",
            "'decontaminate.against=[\"./eval/gsm8k_test.jsonl:question,answer\"]'",
        ),
    )
    ngram: int = field(
        default=13,
        metadata=_help(
            "length of the n-grams matched", "độ dài n-gram được so", "decontaminate.ngram=13"
        ),
    )
    match: MatchMode = field(
        default=MatchMode.tokens,
        metadata=_help(
            "tokens (the build's own ids) or words (normalised words of the rendered text)",
            "tokens (chính id của bản build) hoặc words (từ đã chuẩn hóa của văn bản đã dựng)",
            "decontaminate.match=words",
        ),
    )


@dataclass
class MintDimConfig:
    """The whole build config: four groups plus run options."""

    source: SourceConfig = field(
        default=MISSING,
        metadata=_help(
            "input files, their fields and templates (group: source=<option>)",
            "file đầu vào, fields và template (group: source=<option>)",
            "source=alpaca",
        ),
    )
    tokenizer: TokenizerConfig = field(
        default=MISSING,
        metadata=_help(
            "tokenizer type and file(s) (group: tokenizer=<option>)",
            "loại tokenizer và file (group: tokenizer=<option>)",
            "tokenizer=demo_hf_json",
        ),
    )
    units: UnitsConfig = field(
        default=MISSING,
        metadata=_help(
            "unit sizes and tokenizer batch size (group: units=<option>)",
            "unit size và kích thước batch tokenizer (group: units=<option>)",
            "units=small",
        ),
    )
    output: OutputConfig = field(
        default=MISSING,
        metadata=_help(
            "output directories and samples per shard (group: output=<option>)",
            "thư mục output và số mẫu mỗi shard (group: output=<option>)",
            "output=dir",
        ),
    )
    executor: ExecutorConfig = field(
        default_factory=ExecutorConfig,
        metadata=_help(
            "where pieces are encoded (group: executor=local or executor=ray)",
            "nơi các phần dữ liệu được encode (group: executor=local hoặc executor=ray)",
            "executor=ray",
        ),
    )
    split: SplitConfig = field(
        default_factory=SplitConfig,
        metadata=_help(
            "group and split the build in the job directory (group: split=none or split=threeway)",
            "nhóm và phân chia bản build trong thư mục job (group: split=none hoặc split=threeway)",
            "split=threeway",
        ),
    )
    decontaminate: DecontaminateConfig = field(
        default_factory=DecontaminateConfig,
        metadata=_help(
            "remove the samples holding benchmark items, in the job directory (group: "
            "decontaminate=none or decontaminate=ngrams)",
            "loại các mẫu chứa mục benchmark, trong thư mục job (group: decontaminate=none "
            "hoặc decontaminate=ngrams)",
            "decontaminate=ngrams",
        ),
    )
    workers: int | None = field(
        default=None,
        metadata=_help(
            "build processes (Ray: actors): a positive int, or null for every core",
            "số process build (Ray: số actor): số nguyên dương, hoặc null để dùng mọi core",
            "workers=1",
        ),
    )
    resume: bool = field(
        default=False,
        metadata=_help(
            "continue the unfinished build in output.dir, reusing its staged fragments",
            "tiếp tục lần build dở dang trong output.dir, dùng lại các fragment đã lưu",
            "resume=true",
        ),
    )
    resumable: bool = field(
        default=True,
        metadata=_help(
            "stage fragments so an interrupted build can resume (peak disk ~2x the output); "
            "false: stream into the output (~1x, local only, no resume)",
            "lưu fragment để lần build bị gián đoạn có thể tiếp tục (đĩa lúc cao nhất ~2x "
            "output); false: ghi thẳng vào output (~1x, chỉ chạy cục bộ, không tiếp tục được)",
            "resumable=false",
        ),
    )
    piece_bytes: int | None = field(
        default=None,
        metadata=_help(
            "input bytes per piece of work: a positive int, or null to pick from the input size",
            "số byte đầu vào mỗi phần việc: số nguyên dương, hoặc null để chọn theo kích thước đầu vào",
            "piece_bytes=67108864",
        ),
    )
    progress: bool | None = field(
        default=None,
        metadata=_help(
            "progress bar: true, false, or null (only when stderr is a terminal)",
            "thanh tiến trình: true, false, hoặc null (chỉ khi stderr là terminal)",
            "progress=false",
        ),
    )
    on_overflow: OverflowPolicy = field(
        default=OverflowPolicy.abort,
        metadata=_help(
            "a sample longer than the largest unit: abort, skip, truncate, or extend",
            "mẫu dài hơn unit lớn nhất: abort, skip, truncate, hoặc extend",
            "on_overflow=skip",
        ),
    )
    lang: Lang | None = field(
        default=None,
        metadata=_help(
            "language of MintDim's messages: en, vi, or null (MINTDIM_LANG, else en)",
            "ngôn ngữ thông báo của MintDim: en, vi, hoặc null (MINTDIM_LANG, nếu không thì en)",
            "lang=vi",
        ),
    )


def register_configs() -> None:
    """Store the schema in Hydra's ConfigStore (needed before composing ``conf/``)."""
    ConfigStore.instance().store(name=SCHEMA_NAME, node=MintDimConfig)


def node_schema(dotted: str) -> Any:
    """The dataclass (or leaf type) at a dotted key, or None when the key is not in the schema.

    List indexes in the key (``units.sizes[0]``) are ignored.
    """
    node: Any = MintDimConfig
    for part in _parts(dotted):
        if not is_dataclass(node):
            return None
        match = {f.name: f for f in fields(node)}.get(part)
        if match is None:
            return None
        node = _resolve_type(node, part)
    return node


def valid_keys(node: Any) -> list[str]:
    """The keys of a schema dataclass, in declaration order."""
    return [f.name for f in fields(node)] if is_dataclass(node) else []


def field_help(dotted: str) -> dict[str, str] | None:
    """The help texts (``en``, ``vi``, ``example``) of the field at a dotted key, if any."""
    parts = _parts(dotted)
    if not parts:
        return None
    parent = node_schema(".".join(parts[:-1])) if len(parts) > 1 else MintDimConfig
    if not is_dataclass(parent):
        return None
    match = {f.name: f for f in fields(parent)}.get(parts[-1])
    return dict(match.metadata) if match is not None and match.metadata else None


def _parts(dotted: str) -> list[str]:
    cleaned = dotted.split("[", 1)[0] if "[" in dotted else dotted
    return [p for p in cleaned.split(".") if p]


def _resolve_type(parent: Any, name: str) -> Any:
    return get_type_hints(parent)[name]

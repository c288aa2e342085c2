"""The failure codes of ``mintdim verify``, declared once: :data:`CODES` (and :data:`CHECKS`).

A failure's ``check``, ``code`` and ``facts`` are stable for scripts that read
``mintdim verify --json``. Each code declares the checks that report it, the keys of its facts,
what it means and the text of its message, in English and Vietnamese. ``VerifyReport.add``
refuses a code, check or facts not declared here at once (:func:`require`: a programming error),
so a mistyped code fails where it is added, not only when its message is shown.

docs/verify-and-inspect.md lists them in a section generated from these tables;
``python -m mintdim.check.codes docs/verify-and-inspect.md`` (``make docs``) rewrites that
section, and a test fails while it is stale.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mintdim.shared.lang import Bilingual

__all__ = ["CHECKS", "CODES", "REGENERATE", "Code", "render", "require", "splice"]

REGENERATE = "python -m mintdim.check.codes docs/verify-and-inspect.md"
"""The command that rewrites the generated section of the docs (``make docs`` runs it)."""


@dataclass(frozen=True, slots=True)
class Code:
    """One failure code: who reports it, with which facts, what it means, what it says."""

    checks: tuple[str, ...]
    """The checks (a failure's ``check``) that report this code."""
    facts: tuple[str, ...]
    """The keys of its ``facts``, every one given each time."""
    meaning: Bilingual
    """What it means, for the catalogue in the docs."""
    text: Bilingual
    """Its message after ``path: ``, with the facts as fields."""


CHECKS: dict[str, Bilingual] = {
    "manifest": Bilingual(
        "`manifest.json`: complete, of a known format version, sealed, in MintDim's exact bytes",
        "`manifest.json`: hoàn chỉnh, có format version đã biết, được niêm phong, đúng từng byte "
        "MintDim ghi",
    ),
    "shards": Bilingual(
        "each listed shard: its entry, presence, size and SHA-256",
        "từng shard được liệt kê: mục trong manifest, sự tồn tại, kích thước và SHA-256",
    ),
    "padding": Bilingual(
        "the slots after each record's tokens hold PAD",
        "các ô sau các token của mỗi bản ghi là PAD",
    ),
    "vocabulary": Bilingual(
        "every id is inside the vocabulary",
        "mọi id đều nằm trong bộ từ vựng",
    ),
    "sample_index": Bilingual(
        "`sample_index.jsonl`: each line's form and each sample's place",
        "`sample_index.jsonl`: dạng của từng dòng và vị trí của từng mẫu",
    ),
    "unit_index": Bilingual(
        "each filled unit's `index.npy`: presence, size, SHA-256, its records' sample ids and "
        "token counts",
        "`index.npy` của mỗi unit có mẫu: sự tồn tại, kích thước, SHA-256, id mẫu và số token của "
        "các bản ghi",
    ),
    "boundaries": Bilingual(
        "each packed unit's boundary index: presence, size, SHA-256, every sample in exactly "
        "one row, back to back from slot 0, never past the width, the rows best-fit decreasing "
        "gives",
        "boundary index của mỗi unit packed: sự tồn tại, kích thước, SHA-256, mỗi mẫu ở đúng "
        "một hàng, liền nhau từ ô 0, không vượt độ rộng, đúng các hàng best-fit decreasing "
        "cho ra",
    ),
    "spans": Bilingual(
        "each shard's segment-span file: presence, size, SHA-256, its records",
        "file segment span của mỗi shard: sự tồn tại, kích thước, SHA-256, các bản ghi",
    ),
    "overflow_index": Bilingual(
        "`overflow_index.jsonl`: each row names its sample, place and policy",
        "`overflow_index.jsonl`: mỗi dòng nêu đúng mẫu, vị trí và chính sách của nó",
    ),
    "duplicate_index": Bilingual(
        "`duplicate_index.jsonl`: exactly the groups of equal hashes of the index",
        "`duplicate_index.jsonl`: đúng các nhóm hash bằng nhau của index",
    ),
    "unk_index": Bilingual(
        "`unk_index.jsonl`: exactly the UNK ids found in the shards",
        "`unk_index.jsonl`: đúng các id UNK tìm thấy trong các shard",
    ),
    "stats": Bilingual(
        "`stats.json` and `histogram.json`: the recounted totals, in MintDim's exact bytes",
        "`stats.json` và `histogram.json`: các tổng đếm lại, đúng từng byte MintDim ghi",
    ),
    "files": Bilingual(
        "the directory: nothing the manifest does not account for, every audit file there with "
        "its size and SHA-256",
        "thư mục: không có gì ngoài những gì manifest tính đến, mọi file kiểm tra đều có mặt với "
        "kích thước và SHA-256 của nó",
    ),
    "deep": Bilingual(
        "`--deep`: the tokenizer, the inputs' fingerprints and every record's reference encoding",
        "`--deep`: tokenizer, dấu vân tay của các file đầu vào và mã hóa tham chiếu của mọi bản "
        "ghi",
    ),
}
"""Every check a failure can name (its ``check``), with what it checks."""

CODES: dict[str, Code] = {
    "manifest_json": Code(
        checks=("manifest", "stats"),
        facts=("detail",),
        meaning=Bilingual(
            "The file is not valid JSON (for the manifest: the other checks do not run).",
            "File không phải JSON hợp lệ (với manifest: các kiểm tra khác không chạy).",
        ),
        text=Bilingual(
            "not valid JSON ({detail})",
            "không phải JSON hợp lệ ({detail})",
        ),
    ),
    "manifest_status": Code(
        checks=("manifest",),
        facts=("status", "version", "known"),
        meaning=Bilingual(
            "The manifest is not that of a complete build of a format version this MintDim knows; "
            "the other checks do not run.",
            "Manifest không phải của một bản build hoàn chỉnh có format version mà MintDim này "
            "biết; các kiểm tra khác không chạy.",
        ),
        text=Bilingual(
            "status {status!r}, format_version {version!r}: this MintDim verifies complete builds of "
            "format version {known}",
            "status {status!r}, format_version {version!r}: MintDim này kiểm tra các bản build hoàn "
            "chỉnh có format version {known}",
        ),
    ),
    "manifest_key": Code(
        checks=("manifest",),
        facts=("key",),
        meaning=Bilingual(
            "A key the checks need is missing from the manifest or malformed; the other checks do "
            "not run.",
            "Một khóa mà các kiểm tra cần bị thiếu trong manifest hoặc sai dạng; các kiểm tra "
            "khác không chạy.",
        ),
        text=Bilingual(
            "key {key!r} is missing or malformed (a build by an older MintDim, or a damaged file)",
            "khóa {key!r} bị thiếu hoặc sai dạng (bản build của MintDim cũ hơn, hoặc file bị hỏng)",
        ),
    ),
    "manifest_seal": Code(
        checks=("manifest",),
        facts=(),
        meaning=Bilingual(
            "`manifest_sha256` is not the SHA-256 of the manifest's content: the manifest was "
            "changed after the build.",
            "`manifest_sha256` không phải SHA-256 của nội dung manifest: manifest đã bị thay đổi "
            "sau khi build.",
        ),
        text=Bilingual(
            "manifest_sha256 does not match the manifest's content: the file was changed",
            "manifest_sha256 không khớp với nội dung manifest: file đã bị thay đổi",
        ),
    ),
    "json_form": Code(
        checks=("manifest", "stats"),
        facts=(),
        meaning=Bilingual(
            "The JSON parses, but its bytes are not the exact form MintDim writes.",
            "JSON đọc được, nhưng các byte không đúng dạng chính xác MintDim ghi.",
        ),
        text=Bilingual(
            "the bytes differ from the exact form MintDim writes, though the content parses",
            "các byte khác với dạng chính xác MintDim ghi, dù nội dung vẫn đọc được",
        ),
    ),
    "missing": Code(
        checks=("sample_index", "shards", "unit_index", "spans", "files", "boundaries"),
        facts=(),
        meaning=Bilingual(
            "A file the build must hold is not there (or is listed under another name than the "
            "writer gives it).",
            "Một file bản build phải có không tồn tại (hoặc được liệt kê dưới tên khác với tên "
            "trình ghi đặt).",
        ),
        text=Bilingual(
            "listed in the manifest but missing",
            "có trong manifest nhưng không tồn tại",
        ),
    ),
    "size": Code(
        checks=("shards", "spans", "unit_index", "files", "boundaries"),
        facts=("actual", "listed"),
        meaning=Bilingual(
            "A file's size is not the one the manifest lists.",
            "Kích thước của một file khác với kích thước manifest ghi.",
        ),
        text=Bilingual(
            "{actual} bytes, the manifest lists {listed}",
            "{actual} byte, manifest ghi {listed}",
        ),
    ),
    "sha256": Code(
        checks=("shards", "spans", "unit_index", "files", "deep", "boundaries"),
        facts=("actual", "listed"),
        meaning=Bilingual(
            "A file's SHA-256 is not the one the manifest lists (`deep`: the tokenizer file's is "
            "not the one the build recorded).",
            "SHA-256 của một file khác với giá trị manifest ghi (`deep`: SHA-256 của file "
            "tokenizer khác với giá trị bản build đã ghi lại).",
        ),
        text=Bilingual(
            "SHA-256 {actual}, the manifest lists {listed}",
            "SHA-256 {actual}, manifest ghi {listed}",
        ),
    ),
    "shard_entry": Code(
        checks=("shards",),
        facts=("position", "expected", "samples", "records_bytes"),
        meaning=Bilingual(
            "A shard's manifest entry is not the one the writer gives: its name, sample count or "
            "byte size.",
            "Mục của một shard trong manifest khác với mục trình ghi tạo ra: tên, số mẫu hoặc số "
            "byte.",
        ),
        text=Bilingual(
            "manifest entry {position} should be {expected} with {samples} samples "
            "({records_bytes} bytes), as the writer rolls shards",
            "mục {position} của manifest phải là {expected} với {samples} mẫu "
            "({records_bytes} byte), đúng cách trình ghi chia shard",
        ),
    ),
    "marker_text": Code(
        checks=("files",),
        facts=(),
        meaning=Bilingual(
            "An `EMPTY_UNIT.md` does not hold the text MintDim writes for an empty unit.",
            "Một file `EMPTY_UNIT.md` không chứa văn bản MintDim ghi cho một unit rỗng.",
        ),
        text=Bilingual(
            "the text differs from the one MintDim writes for an empty unit",
            "nội dung khác với văn bản MintDim ghi cho một unit rỗng",
        ),
    ),
    "unlisted": Code(
        checks=("files",),
        facts=(),
        meaning=Bilingual(
            "A file or folder lies in the build directory that the manifest does not account for.",
            "Một file hoặc thư mục nằm trong thư mục build mà manifest không tính đến.",
        ),
        text=Bilingual(
            "not part of the build: the manifest does not list it",
            "không thuộc bản build: manifest không liệt kê nó",
        ),
    ),
    "staging": Code(
        checks=("files",),
        facts=(),
        meaning=Bilingual(
            "The fragments of a run stopped after its manifest was written are still there.",
            "Các fragment của một lần chạy bị dừng sau khi đã ghi manifest vẫn còn đó.",
        ),
        text=Bilingual(
            "the build's fragments, left by a run stopped after its manifest was written: the build "
            "is complete; the same run with resume=True (runner: resume=true) removes them, or "
            "delete this directory",
            "các fragment của lần build, còn lại do lần chạy bị dừng sau khi đã ghi manifest: lần "
            "build đã hoàn tất; chạy lại đúng lần đó với resume=True (runner: resume=true) sẽ xóa "
            "chúng, hoặc hãy xóa thư mục này",
        ),
    ),
    "padding": Code(
        checks=("padding",),
        facts=("row", "sample_id", "value", "slot", "token_count", "pad_id"),
        meaning=Bilingual(
            "A slot after a record's tokens holds an id other than PAD.",
            "Một ô sau các token của một bản ghi chứa id khác PAD.",
        ),
        text=Bilingual(
            "record {row} (sample {sample_id}) holds id {value} at slot {slot}, after its "
            "{token_count} tokens, where PAD ({pad_id}) belongs",
            "bản ghi {row} (mẫu {sample_id}) chứa id {value} ở ô {slot}, sau {token_count} token "
            "của nó, nơi phải là PAD ({pad_id})",
        ),
    ),
    "vocabulary": Code(
        checks=("vocabulary",),
        facts=("row", "sample_id", "value", "slot", "token_count", "vocab"),
        meaning=Bilingual(
            "A slot holds an id outside the tokenizer's vocabulary.",
            "Một ô chứa id nằm ngoài bộ từ vựng của tokenizer.",
        ),
        text=Bilingual(
            "record {row} (sample {sample_id}) holds id {value} at slot {slot}, outside the "
            "vocabulary of {vocab}",
            "bản ghi {row} (mẫu {sample_id}) chứa id {value} ở ô {slot}, ngoài bộ từ vựng {vocab}",
        ),
    ),
    "index_line": Code(
        checks=("sample_index", "unit_index", "boundaries"),
        facts=("line", "problem"),
        meaning=Bilingual(
            "A line of the index cannot be read, or a field has the wrong form (a unit index that "
            "does not load is line 1).",
            "Một dòng của index không đọc được, hoặc một trường sai dạng (một unit index không "
            "nạp được là dòng 1).",
        ),
        text=Bilingual(
            "line {line}: {problem}",
            "dòng {line}: {problem}",
        ),
    ),
    "index_place": Code(
        checks=("sample_index", "overflow_index"),
        facts=("line", "sample_id", "key", "actual", "expected"),
        meaning=Bilingual(
            "A field of a line is not the value the writer puts there (a sample id, shard or row; "
            "an overflow row's action, unit or source).",
            "Một trường của một dòng khác với giá trị trình ghi đặt ở đó (id mẫu, shard hoặc "
            "dòng; hành động, unit hoặc nguồn của một dòng overflow).",
        ),
        text=Bilingual(
            "line {line} (sample {sample_id}): {key} is {actual!r}, expected {expected!r}",
            "dòng {line} (mẫu {sample_id}): {key} là {actual!r}, đúng ra là {expected!r}",
        ),
    ),
    "row_samples": Code(
        checks=("boundaries",),
        facts=("unit", "missing", "extra", "repeated"),
        meaning=Bilingual(
            "A packed unit's rows do not hold each of its samples (as sample_index.jsonl places "
            "them) exactly once.",
            "Các hàng của một unit packed không chứa mỗi mẫu của unit (theo sample_index.jsonl) "
            "đúng một lần.",
        ),
        text=Bilingual(
            "unit {unit}: samples in no row {missing}, in rows but not of this unit {extra}, "
            "in more than one place {repeated}",
            "unit {unit}: mẫu không ở hàng nào {missing}, ở hàng nhưng không thuộc unit này "
            "{extra}, ở hơn một chỗ {repeated}",
        ),
    ),
    "row_layout": Code(
        checks=("boundaries",),
        facts=("unit", "row", "problem"),
        meaning=Bilingual(
            "A packed row's samples are not back to back from slot 0, run past the unit's width, "
            "or have lengths other than their token counts.",
            "Các mẫu của một hàng packed không liền nhau từ ô 0, vượt quá độ rộng của unit, hoặc "
            "có độ dài khác số token của chúng.",
        ),
        text=Bilingual(
            "unit {unit}, row {row}: {problem}",
            "unit {unit}, hàng {row}: {problem}",
        ),
    ),
    "packing": Code(
        checks=("boundaries",),
        facts=("unit", "row", "algorithm"),
        meaning=Bilingual(
            "A packed unit's rows are not the ones its algorithm gives for its samples' token "
            "counts.",
            "Các hàng của một unit packed khác với các hàng mà thuật toán cho ra từ số token của "
            "các mẫu.",
        ),
        text=Bilingual(
            "unit {unit}: row {row} is the first that differs from what {algorithm} gives",
            "unit {unit}: hàng {row} là hàng đầu tiên khác với kết quả của {algorithm}",
        ),
    ),
    "index_total": Code(
        checks=("sample_index",),
        facts=("samples", "unit", "records"),
        meaning=Bilingual(
            "The samples the index places in a unit are not as many as the records its shards "
            "hold.",
            "Số mẫu index đặt vào một unit khác với số bản ghi trong các shard của unit đó.",
        ),
        text=Bilingual(
            "{samples} samples in unit {unit}, but its shards hold {records} records",
            "{samples} mẫu thuộc unit {unit}, nhưng các shard của nó chứa {records} bản ghi",
        ),
    ),
    "total": Code(
        checks=("stats", "deep"),
        facts=("key", "actual", "expected"),
        meaning=Bilingual(
            "A total in `stats.json` or `histogram.json` is not the one recounted from the index "
            "and the shards (`deep`: `blank_lines`, from the inputs).",
            "Một tổng trong `stats.json` hoặc `histogram.json` khác với tổng đếm lại từ index và "
            "các shard (`deep`: `blank_lines`, từ các file đầu vào).",
        ),
        text=Bilingual(
            "{key} is {actual!r}, the index and shards give {expected!r}",
            "{key} là {actual!r}, theo index và shard phải là {expected!r}",
        ),
    ),
    "index_file_line": Code(
        checks=("unit_index", "duplicate_index", "unk_index"),
        facts=("line", "actual", "expected"),
        meaning=Bilingual(
            "A line (a unit index: a record) is not the one the build's samples give.",
            "Một dòng (với unit index: một bản ghi) khác với dòng mà các mẫu của bản build cho ra.",
        ),
        text=Bilingual(
            "line {line} is {actual}, expected {expected}",
            "dòng {line} là {actual}, đúng ra là {expected}",
        ),
    ),
    "index_file_count": Code(
        checks=("unit_index", "duplicate_index", "unk_index"),
        facts=("actual", "expected"),
        meaning=Bilingual(
            "The file holds another number of lines (a unit index: records) than the build's "
            "samples give.",
            "File có số dòng (với unit index: số bản ghi) khác với số mà các mẫu của bản build "
            "cho ra.",
        ),
        text=Bilingual(
            "{actual} lines, expected {expected}",
            "{actual} dòng, đúng ra là {expected}",
        ),
    ),
    "spans_record": Code(
        checks=("spans",),
        facts=("row", "sample_id", "stops", "token_count"),
        meaning=Bilingual(
            "A record's segment stops do not rise from 0 to its token count.",
            "Các điểm kết thúc segment của một bản ghi không tăng dần từ 0 đến số token của nó.",
        ),
        text=Bilingual(
            "record {row} (sample {sample_id}): segment stops {stops} do not rise from 0 to its "
            "{token_count} tokens",
            "bản ghi {row} (mẫu {sample_id}): các điểm kết thúc segment {stops} không tăng dần từ 0 "
            "đến {token_count} token của nó",
        ),
    ),
    "spans_source": Code(
        checks=("spans",),
        facts=("row", "sample_id", "source", "count"),
        meaning=Bilingual(
            "A record's source file position is not one of the build's inputs.",
            "Vị trí file nguồn của một bản ghi không thuộc các file đầu vào của bản build.",
        ),
        text=Bilingual(
            "record {row} (sample {sample_id}): source file position {source} is not one of this "
            "build's {count} files",
            "bản ghi {row} (mẫu {sample_id}): vị trí file nguồn {source} không thuộc {count} file "
            "của bản build này",
        ),
    ),
    "deep_input_missing": Code(
        checks=("deep",),
        facts=(),
        meaning=Bilingual(
            "An input or the tokenizer file is not found from the current directory.",
            "Không tìm thấy một file đầu vào hoặc file tokenizer từ thư mục hiện tại.",
        ),
        text=Bilingual(
            "not found from the current directory: run --deep where the build ran",
            "không tìm thấy từ thư mục hiện tại: hãy chạy --deep ở nơi đã chạy build",
        ),
    ),
    "deep_error": Code(
        checks=("deep",),
        facts=("error",),
        meaning=Bilingual(
            "An input or the tokenizer cannot be read as the build read it; the message holds the "
            "MintDim error.",
            "Một file đầu vào hoặc tokenizer không đọc được như lúc build đã đọc; thông báo chứa "
            "lỗi MintDim.",
        ),
        text=Bilingual(
            "cannot be read as the build read it:\n{error}",
            "không đọc được như lúc build đã đọc:\n{error}",
        ),
    ),
    "deep_fingerprint": Code(
        checks=("deep",),
        facts=("bytes", "sha256", "listed_bytes", "listed_sha256"),
        meaning=Bilingual(
            "An input's size or SHA-256 is not the fingerprint the build took while reading it.",
            "Kích thước hoặc SHA-256 của một file đầu vào khác với dấu vân tay bản build đã lấy "
            "khi đọc nó.",
        ),
        text=Bilingual(
            "{bytes} bytes with SHA-256 {sha256} now; the build read {listed_bytes} bytes with "
            "SHA-256 {listed_sha256}",
            "hiện có {bytes} byte với SHA-256 {sha256}; lúc build đã đọc {listed_bytes} byte với "
            "SHA-256 {listed_sha256}",
        ),
    ),
    "deep_missing": Code(
        checks=("deep",),
        facts=("line",),
        meaning=Bilingual(
            "An input holds a sample after the last line of `sample_index.jsonl`.",
            "Một file đầu vào chứa một mẫu sau dòng cuối của `sample_index.jsonl`.",
        ),
        text=Bilingual(
            "line {line} is a sample, but sample_index.jsonl has no more lines",
            "dòng {line} là một mẫu, nhưng sample_index.jsonl không còn dòng nào",
        ),
    ),
    "deep_rows": Code(
        checks=("deep",),
        facts=("unit", "algorithm"),
        meaning=Bilingual(
            "A packed unit's rows are not the ones its algorithm gives for the token counts "
            "derived again from the inputs.",
            "Các hàng của một unit packed khác với các hàng mà thuật toán cho ra từ số token "
            "được tính lại từ input.",
        ),
        text=Bilingual(
            "unit {unit}: the rows differ from what {algorithm} gives for the inputs' samples",
            "unit {unit}: các hàng khác với kết quả {algorithm} cho các mẫu của input",
        ),
    ),
    "deep_extra": Code(
        checks=("deep",),
        facts=(),
        meaning=Bilingual(
            "`sample_index.jsonl` lists more samples than the inputs hold.",
            "`sample_index.jsonl` liệt kê nhiều mẫu hơn số mẫu trong các file đầu vào.",
        ),
        text=Bilingual(
            "lists more samples than the inputs hold",
            "liệt kê nhiều mẫu hơn số mẫu trong các file đầu vào",
        ),
    ),
    "deep_record": Code(
        checks=("deep",),
        facts=("sample_id", "file", "line", "keys"),
        meaning=Bilingual(
            "A sample's index line or record is not the reference encoding of its input line.",
            "Dòng index hoặc bản ghi của một mẫu không phải mã hóa tham chiếu của dòng đầu vào "
            "của nó.",
        ),
        text=Bilingual(
            "sample {sample_id} ({file}:{line}) is not the reference encoding of its line "
            "(differs in: {keys})",
            "mẫu {sample_id} ({file}:{line}) không phải mã hóa tham chiếu của dòng của nó "
            "(khác ở: {keys})",
        ),
    ),
}
"""Every failure code verify reports, in the order the docs list them."""


def require(check: str, code: str, facts: Mapping[str, object]) -> Code:
    """The declared ``code``, once ``check`` is one that reports it and ``facts`` has exactly its
    keys; anything else is a programming error in MintDim, raised at once."""
    declared = CODES.get(code)
    if declared is None:
        raise ValueError(
            f"verify failure code {code!r} is not declared: add it to CODES in "
            f"mintdim/check/codes.py (its checks, facts, meaning and text), then run make docs"
        )
    if check not in declared.checks:
        raise ValueError(
            f"verify failure code {code!r} is declared for the checks {declared.checks}, "
            f"not {check!r}: add the check to its entry in mintdim/check/codes.py"
        )
    if facts.keys() != set(declared.facts):
        raise TypeError(
            f"verify failure code {code!r} takes the facts {declared.facts}, got {tuple(facts)}"
        )
    return declared


_BEGIN = (
    f"<!-- Generated from mintdim/check/codes.py by `{REGENERATE}` (make docs); do not edit "
    "between this line and the end marker. -->"
)
_END = "<!-- End of the generated failure codes. -->"


def render() -> str:
    """The docs' section: the checks, then every code with its checks, facts and meaning."""
    lines = [
        _BEGIN,
        "",
        "| check | what it checks | kiểm tra gì |",
        "|---|---|---|",
    ]
    lines += [f"| `{name}` | {text.en} | {text.vi} |" for name, text in CHECKS.items()]
    lines += [
        "",
        "| code | checks | facts | meaning | ý nghĩa |",
        "|---|---|---|---|---|",
    ]
    for name, code in CODES.items():
        checks = ", ".join(f"`{check}`" for check in code.checks)
        facts = ", ".join(f"`{fact}`" for fact in code.facts) or "none"
        lines.append(f"| `{name}` | {checks} | {facts} | {code.meaning.en} | {code.meaning.vi} |")
    return "\n".join([*lines, "", _END])


def splice(document: str) -> str:
    """``document`` with its generated section (from the begin to the end marker) rendered anew."""
    start, end = document.find(_BEGIN), document.find(_END)
    if start < 0 or end < start:
        raise ValueError(f"the document lacks the markers of the generated section: {_BEGIN}")
    return document[:start] + render() + document[end + len(_END) :]


if __name__ == "__main__":
    # UTF-8 whatever the locale: the section is half Vietnamese.
    path = Path(sys.argv[1])
    path.write_text(splice(path.read_text(encoding="utf-8")), encoding="utf-8")

"""An output directory that cannot be created is a named error, raised before anything is written."""

from __future__ import annotations

import orjson
import pytest

from mintdim import OutputValidationError, pipeline
from tests.unit_build.helpers import sections


def test_output_under_a_regular_file_is_cannot_create(tmp_path, sp_model):
    data = tmp_path / "data.jsonl"
    data.write_bytes(orjson.dumps({"text": "the model data"}) + b"\n")
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file, not a directory")
    job = (
        pipeline("unit-build")
        .source.jsonl(files=[str(data)], fields=[["text"]], templates=["{text}"])
        .tokenizer.sentencepiece({"path": str(sp_model)})
        .units(sizes=[[16, 64]], build_batch=[8])
        .output.dir(str(blocker / "out"), samples_per_shard=[4])
    )
    with pytest.raises(OutputValidationError) as caught:
        job.run(workers=1, progress=False)
    err = caught.value
    assert (err.directory, err.problem) == (str(blocker / "out"), "cannot_create")
    assert (err.cause, err.other) == ("parent_is_file", str(blocker))
    assert sections(err.message("en"))["Reason"] == [f"{blocker} is a file, not a directory"]
    assert sections(err.message("vi"))["Lý do"] == [f"{blocker} là file, không phải thư mục"]
    assert "Output directory could not be created." in err.message("en")
    assert err.message("vi").splitlines()[0] == "OutputValidationError:"
    assert blocker.read_text() == "a file, not a directory"
    # Nothing was created anywhere: not beside the blocker, not in place of it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl", "not_a_dir"]

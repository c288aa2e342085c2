"""One benchmark contender, run in a fresh child process: ``python _contenders.py SPEC_JSON RESULT_JSON``.

The orchestrator (throughput.py / memory.py) starts this file with the interpreter the contender
needs (the project's for the ceiling and MintDim, ``--competitor-python`` for datasets and
datatrove), so this module imports nothing outside the standard library at top level.

Each contender times only its own work (interpreter start-up and library imports are not timed,
nor is rendering the texts for the ceiling) and writes a JSON result:
``{"status": "ok", "seconds": ..., "samples": ..., "tokens": ..., "self_maxrss_kb": ...,
"children_maxrss_kb": ..., ...}``, or ``{"status": "skipped", "reason": ...}`` when its package is
not importable, or ``{"status": "error", ...}``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time
import traceback


def _cpu() -> float:
    """CPU seconds of this process (all threads) plus its reaped child processes (workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _render_all(spec: dict) -> list[str]:
    """Every sample rendered with the template, like MintDim renders it (untimed for the ceiling)."""
    fields, template = spec["fields"], spec["template"]
    try:
        import orjson

        loads = orjson.loads
    except ImportError:
        loads = json.loads
    texts = []
    with open(spec["input"], "rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            obj = loads(line)
            texts.append(template.format_map({name: obj[name] for name in fields}))
    return texts


def load_library_tokenizer(kind: str, path: str):
    """The tokenizer library's own object for ``path``: what every contender encodes with.

    A tokenizer.json gets padding and truncation switched off, as MintDim does, so every
    contender emits the same tokens.
    """
    if kind == "sentencepiece":
        import sentencepiece as spm

        return spm.SentencePieceProcessor(model_file=path)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.no_padding()
    tok.no_truncation()
    return tok


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def ceiling(spec: dict) -> dict:
    """The tokenizer library's own batch call over rendered texts in memory, all cores.

    Every variant the library offers is timed (once per call of this function); the orchestrator
    keeps the variant with the best median. Texts go in chunks of ``ceiling_batch`` so the
    result objects of 300k samples never sit in memory at once (each chunk's result is dropped).
    """
    cores = spec["cores"]
    texts = _render_all(spec)
    size = spec["ceiling_batch"]
    out = {"samples": len(texts), "variants": {}}
    if spec["kind"] == "sentencepiece":
        sp = load_library_tokenizer(spec["kind"], spec["tokenizer"])
        btexts = [t.encode("utf-8") for t in texts]
        variants = {
            "encode(str, num_threads, ids as int lists)": (texts, {}),
            "encode(str, num_threads, return_type=numpy)": (texts, {"return_type": "numpy"}),
            "encode(utf-8 bytes, num_threads, return_type=numpy)": (
                btexts,
                {"return_type": "numpy"},
            ),
        }
        sp.encode(texts[:256], num_threads=cores)  # warm-up (thread start, page faults)
        for name, (data, kwargs) in variants.items():
            tokens = 0
            cpu, started = _cpu(), time.perf_counter()
            for chunk in _chunks(data, size):
                tokens += sum(map(len, sp.encode(chunk, num_threads=cores, **kwargs)))
            out["variants"][name] = {
                "seconds": time.perf_counter() - started,
                "cpu": _cpu() - cpu,
                "tokens": tokens,
            }
    else:
        os.environ["TOKENIZERS_PARALLELISM"] = "true"
        os.environ.setdefault("RAYON_NUM_THREADS", str(cores))
        tok = load_library_tokenizer(spec["kind"], spec["tokenizer"])
        tok.encode_batch_fast(texts[:256], add_special_tokens=False)  # warm-up (rayon pool)
        for name in ("encode_batch", "encode_batch_fast"):
            call = getattr(tok, name)
            tokens = 0
            cpu, started = _cpu(), time.perf_counter()
            for chunk in _chunks(texts, size):
                tokens += sum(map(len, call(chunk, add_special_tokens=False)))
            out["variants"][f"{name}(add_special_tokens=False)"] = {
                "seconds": time.perf_counter() - started,
                "cpu": _cpu() - cpu,
                "tokens": tokens,
            }
    best = min(out["variants"].items(), key=lambda kv: kv[1]["seconds"])
    out["seconds"] = best[1]["seconds"]
    out["cpu"] = best[1]["cpu"]
    out["tokens"] = best[1]["tokens"]
    out["variant"] = best[0]
    return out


def fast_ceiling(spec: dict) -> dict:
    """gigatoken's own batch call (the fast engine's library) over the rendered texts in memory,
    all cores: the bound of ``mintdim-fast``, as ``ceiling`` is the bound of ``mintdim``."""
    try:
        from mintdim.build.contracts import TokenizerSpec
        from mintdim.build.tokenizer import load_encoder
    except ImportError as err:
        return {"status": "skipped", "reason": f"mintdim not importable ({err})"}
    path = spec["tokenizer"]
    options = spec.get("tokenizer_options", {})
    encoder = load_encoder(TokenizerSpec(spec["kind"], path, path, engine="fast", **options))
    texts = [t.encode("utf-8") for t in _render_all(spec)]
    fast = encoder._fast  # the gigatoken object MintDim loaded (control pieces dropped)
    fast.encode_batch(texts[:256], parallel=True)  # warm-up (thread pool)
    tokens = 0
    cpu, started = _cpu(), time.perf_counter()
    for chunk in _chunks(texts, spec["ceiling_batch"]):
        tokens += len(fast.encode_batch(chunk, parallel=True).layout.content)
    return {
        "seconds": time.perf_counter() - started,
        "cpu": _cpu() - cpu,
        "samples": len(texts),
        "tokens": tokens,
    }


def _revision(package_dir: str) -> str:
    """The git commit of the checkout mintdim was imported from (+ "-dirty"), if it is one."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "-C", package_dir, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", package_dir, "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + ("-dirty" if dirty else "")) if head else "not a git checkout"


def mintdim(spec: dict) -> dict:
    """A complete MintDim build, JSONL on disk to a finished output directory.

    ``spec["engine"]``: the tokenizer engine ("reference", the default, or "fast"); a fast run
    that fell back to the reference engine is reported as an error, not timed as fast.
    """
    try:
        from mintdim import pipeline
    except ImportError as err:
        return {"status": "skipped", "reason": f"mintdim not importable ({err})"}
    out_dir = spec["out"]
    job = pipeline("unit-build").source.jsonl(
        files=[spec["input"]], fields=[spec["fields"]], templates=[spec["template"]]
    )
    step = job.tokenizer.sentencepiece if spec["kind"] == "sentencepiece" else job.tokenizer.hf_json
    job = (
        step(
            {
                "path": spec["tokenizer"],
                "engine": spec.get("engine", "reference"),
                **spec.get("tokenizer_options", {}),
            }
        )
        .units(
            sizes=[spec["sizes"]], build_batch=[spec["build_batch"]], pack=spec.get("pack", False)
        )
        .output.dir(out_dir, samples_per_shard=[spec["samples_per_shard"]])
    )
    revision = _revision(os.path.dirname(os.path.abspath(sys.modules["mintdim"].__file__)))
    cpu, started = _cpu(), time.perf_counter()
    result = job.run(workers=spec["workers"], progress=False)
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    stats = result.outputs[0].stats
    stats = stats if isinstance(stats, dict) else dict(stats)
    with open(os.path.join(out_dir, "manifest.json"), encoding="utf-8") as handle:
        engine = json.load(handle)["tokenizer"].get("engine", {"ran": "reference"})
    if engine["ran"] != spec.get("engine", "reference"):
        return {"status": "error", "reason": f"engine {engine} ran, not {spec.get('engine')}"}
    return {
        "engine": engine,
        "seconds": seconds,
        "cpu": cpu,
        "samples": stats["total_samples"],
        "tokens": stats["total_tokens"],
        "duplicate_samples": stats.get("duplicate_samples"),
        "mintdim_revision": revision,
        "samples_with_unk": stats.get("samples_with_unk"),
        "padding_ratio": stats["padding_ratio"],
        "packing": stats.get("packing"),
    }


def mintdim_fast(spec: dict) -> dict:
    """``mintdim`` with the tokenizer key ``engine="fast"`` (gigatoken, parity-guarded)."""
    return mintdim(dict(spec, engine="fast"))


def mintdim_deep_verify(spec: dict) -> dict:
    """``mintdim verify --deep`` of the finished build ``spec["build"]`` on ``spec["workers"]``
    processes (its relative input paths resolve from ``spec["cwd"]``, where it was built)."""
    from mintdim.check.verify import verify_build

    os.chdir(spec["cwd"])
    cpu, started = _cpu(), time.perf_counter()
    report = verify_build(spec["build"], deep=True, workers=spec["workers"])
    seconds = time.perf_counter() - started
    if not report.ok:
        return {"status": "error", "reason": "; ".join(report.lines()[:5])}
    return {"seconds": seconds, "cpu": _cpu() - cpu, "samples": report.samples}


def mintdim_013(spec: dict) -> dict:
    """The earlier, unrelated MintDim 0.1.3 from the package registry, in its own venv
    (``--old-mintdim-python``; it needs Python >= 3.12). One process: it has no workers option.
    Only a benchmark contender: it is not what this repository builds or documents."""
    import importlib.metadata

    try:
        version = importlib.metadata.version("mintdim")
        from mintdim import pipeline
    except (ImportError, importlib.metadata.PackageNotFoundError) as err:
        return {"status": "skipped", "reason": f"mintdim 0.1.3 not importable ({err})"}
    imported = os.path.abspath(sys.modules["mintdim"].__file__)
    if version != "0.1.3" or not imported.startswith(os.path.abspath(sys.prefix) + os.sep):
        return {
            "status": "skipped",
            "reason": f"this interpreter has mintdim {version} and imported {imported}, "
            "not the registry's 0.1.3 installed in it",
        }
    job = pipeline("unit-build").source.jsonl(
        files=[spec["input"]], fields=[spec["fields"]], templates=[spec["template"]]
    )
    step = job.tokenizer.sentencepiece if spec["kind"] == "sentencepiece" else job.tokenizer.hf_json
    job = (
        step({"path": spec["tokenizer"]})
        .units(sizes=[spec["sizes"]], build_batch=[spec["build_batch"]])
        .output.dir(spec["out"], samples_per_shard=[spec["samples_per_shard"]])
    )
    cpu, started = _cpu(), time.perf_counter()
    result = job.run()
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    output = result["outputs"][0]
    return {
        "seconds": seconds,
        "cpu": cpu,
        "samples": output["total_samples"],
        "tokens": output["total_tokens"],
        "mintdim_revision": f"registry {version}",
    }


def hf_datasets(spec: dict) -> dict:
    """Hugging Face datasets: load_dataset("json") + batched map(num_proc=cores) + save_to_disk."""
    cache = spec["out"] + ".hf-cache"
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["HF_DATASETS_CACHE"] = cache
    # One single-threaded tokenizer per map process: num_proc already puts one process per core.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        import datasets
    except ImportError as err:
        return {"status": "skipped", "reason": f"datasets not importable ({err})"}
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    fields, template, kind, path = spec["fields"], spec["template"], spec["kind"], spec["tokenizer"]
    state: dict = {}

    def tokenize(batch: dict) -> dict:
        if "tok" not in state:  # loaded once per map process
            state["tok"] = load_library_tokenizer(kind, path)
        columns = [batch[name] for name in fields]
        texts = [
            template.format_map(dict(zip(fields, row, strict=True)))
            for row in zip(*columns, strict=True)
        ]
        tok = state["tok"]
        if kind == "sentencepiece":
            ids = tok.encode(texts)
        else:
            ids = [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
        return {"input_ids": ids}

    cpu, started = _cpu(), time.perf_counter()
    ds = datasets.load_dataset("json", data_files=spec["input"], split="train", cache_dir=cache)
    ds = ds.map(
        tokenize,
        batched=True,
        batch_size=spec["hf_batch_size"],
        num_proc=spec["cores"] if spec["cores"] > 1 else None,
        remove_columns=ds.column_names,
    )
    ds.save_to_disk(spec["out"])
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    import pyarrow.compute as pc

    tokens = int(pc.sum(pc.list_value_length(ds.data.column("input_ids"))).as_py())
    samples = len(ds)
    del ds
    shutil.rmtree(cache, ignore_errors=True)
    return {"seconds": seconds, "cpu": cpu, "samples": samples, "tokens": tokens}


def datatrove(spec: dict) -> dict:
    """datatrove: JsonlReader (template rendered by an adapter) -> DocumentTokenizer."""
    if spec["kind"] == "sentencepiece":
        return {
            "status": "skipped",
            "reason": "datatrove has no SentencePiece tokenizer step "
            "(DocumentTokenizer loads Hugging Face tokenizers only)",
        }
    try:
        from datatrove.executor import LocalPipelineExecutor
        from datatrove.pipeline.readers import JsonlReader
        from datatrove.pipeline.tokens import DocumentTokenizer
    except ImportError as err:
        return {"status": "skipped", "reason": f"datatrove not importable ({err})"}
    os.environ["TOKENIZERS_PARALLELISM"] = "true"  # one task: rayon uses every core
    fields, template = spec["fields"], spec["template"]
    # The same tokenizer with padding, truncation and post-processor switched off (written next to
    # the output), so datatrove emits exactly MintDim's tokens: no [CLS]/[SEP], no pad, no cut.
    with open(spec["tokenizer"], encoding="utf-8") as handle:
        tok_json = json.load(handle)
    tok_json["padding"] = None
    tok_json["truncation"] = None
    tok_json["post_processor"] = None
    plain = spec["out"] + ".tokenizer.json"
    os.makedirs(os.path.dirname(plain), exist_ok=True)
    with open(plain, "w", encoding="utf-8") as handle:
        json.dump(tok_json, handle)

    def adapter(self, data: dict, path: str, id_in_file):
        return {
            "text": template.format_map({name: data[name] for name in fields}),
            "id": f"{path}/{id_in_file}",
            "media": [],
            "metadata": {},
        }

    folder, name = os.path.split(os.path.abspath(spec["input"]))
    executor = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(folder, glob_pattern=name, adapter=adapter, recursive=False),
            DocumentTokenizer(
                output_folder=spec["out"],
                tokenizer_name_or_path=plain,
                eos_token=None,
                shuffle_documents=False,
                batch_size=spec["datatrove_batch_size"],
            ),
        ],
        tasks=1,  # JsonlReader shards by file; one input file is one task
        workers=1,
        logging_dir=spec["out"] + ".logs",
        skip_completed=False,
    )
    cpu, started = _cpu(), time.perf_counter()
    executor.run()
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    samples = tokens = 0
    for root, _dirs, files in os.walk(spec["out"]):
        for f in files:
            if f.endswith(".ds.index"):  # uint64 end offset (in tokens) of each document
                with open(os.path.join(root, f), "rb") as handle:
                    data = handle.read()
                samples += len(data) // 8
                tokens += int.from_bytes(data[-8:], "little") if data else 0
    shutil.rmtree(spec["out"] + ".logs", ignore_errors=True)
    return {"seconds": seconds, "cpu": cpu, "samples": samples, "tokens": tokens}


CONTENDERS = {
    "ceiling": ceiling,
    "fast-ceiling": fast_ceiling,
    "mintdim": mintdim,
    "mintdim-fast": mintdim_fast,
    "mintdim-0.1.3": mintdim_013,
    "mintdim-deep-verify": mintdim_deep_verify,
    "datasets": hf_datasets,
    "datatrove": datatrove,
}


def main() -> None:
    """Run the contender named in the spec file; write its result file."""
    spec_path, result_path = sys.argv[1], sys.argv[2]
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    try:
        result = CONTENDERS[spec["contender"]](spec)
        result.setdefault("status", "ok")
    except BaseException as err:  # reported, not raised: the orchestrator carries on
        result = {
            "status": "error",
            "reason": f"{type(err).__name__}: {str(err).strip()[:2000]}",
            "traceback": traceback.format_exc()[-4000:],
        }
    result["self_maxrss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["children_maxrss_kb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result["python"] = sys.executable
    with open(result_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()

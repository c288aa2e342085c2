"""Template segments and each sample's token span per segment, in bulk for a batch.

A template ``"### Instruction:\\n{instruction}\\n\\n### Response:\\n{output}"`` has the segments
literal, instruction, literal, output (empty literals are left out), plus ``eos`` when the
tokenizer appends one. A sample's spans are kept as *stops*: one int per segment, the token
position where it ends, so segment ``k`` is ``[stops[k-1], stops[k])`` with ``stops[-1] = 0``
and the last stop equals the token count. Two ways to get them (tokenizer key ``encode``):

- ``whole``: the rendered text is encoded once, exactly as without spans; each token belongs to
  the segment holding its first character, found from the library's own offsets.
- ``segments``: each segment is encoded alone and the ids concatenated: boundaries are exact by
  construction, tokens may differ from the whole-text encoding.

Everything works on flat arrays (ids back to back, per-sample counts), never per-token Python.
"""

from __future__ import annotations

import numpy as np

from mintdim.build.contracts import FilePlan

__all__ = [
    "append_eos",
    "segment_names",
    "sequence_template",
    "stops_by_segments",
    "stops_from_starts",
]

EOS_SEGMENT = "eos"


def sequence_template(plan: FilePlan, append_eos: bool) -> list[dict[str, str]]:
    """The manifest's description of one file's segments, in order."""
    described = [
        {"kind": "literal", "text": value}
        if kind == "literal"
        else {"kind": "field", "name": value}
        for kind, value in plan.template.segments()
    ]
    return described + ([{"kind": "eos", "name": EOS_SEGMENT}] if append_eos else [])


def segment_names(sequence: list[dict[str, str]]) -> list[str]:
    """The name of each segment: its field name, ``literal``, or ``eos``."""
    return [entry.get("name", entry["kind"]) for entry in sequence]


def _segment_lengths(plan: FilePlan, values: list[tuple[str, ...]], unit: str) -> np.ndarray:
    """An ``(n, segments)`` matrix of each segment's length in ``unit`` (bytes or chars)."""
    measure = (lambda text: len(text.encode("utf-8"))) if unit == "bytes" else len
    segments = plan.template.segments()
    lengths = np.empty((len(values), len(segments)), dtype=np.int64)
    for column, (kind, value) in enumerate(segments):
        if kind == "literal":
            lengths[:, column] = measure(value)
        else:
            field = plan.fields.index(value)
            lengths[:, column] = [measure(sample[field]) for sample in values]
    return lengths


def stops_from_starts(
    plan: FilePlan,
    values: list[tuple[str, ...]],
    token_counts: np.ndarray,
    starts: np.ndarray,
    unit: str,
) -> np.ndarray:
    """Per sample, its segment stops, given each token's start offset in its own text."""
    seg_lengths = _segment_lengths(plan, values, unit)
    n, width = seg_lengths.shape
    if n == 0:
        return np.zeros((0, width), dtype=np.int64)
    text_lengths = seg_lengths.sum(axis=1)
    text_offsets = np.cumsum(text_lengths) - text_lengths
    # One global coordinate for the whole batch: sample i's text starts at text_offsets[i].
    seg_starts = (np.cumsum(seg_lengths, axis=1) - seg_lengths) + text_offsets[:, None]
    token_starts = starts + np.repeat(text_offsets, token_counts)
    # side="right": at a position where empty segments start too, the last (non-empty) one wins.
    segment = np.searchsorted(seg_starts.ravel(), token_starts, side="right") - 1
    first = np.repeat(np.arange(n) * width, token_counts)
    segment = np.clip(segment, first, first + width - 1)
    # Offsets never go backwards in practice; if a library ever did, keep spans contiguous.
    segment = np.maximum.accumulate(segment) if segment.size else segment
    counts = np.bincount(segment, minlength=n * width).reshape(n, width)
    return np.cumsum(counts, axis=1)


def stops_by_segments(
    plan: FilePlan, values: list[tuple[str, ...]], literal_ids: list[np.ndarray], encode_batch
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Encode each segment alone and concatenate: ``(flat ids, token counts, stops)``.

    ``literal_ids[k]`` are the ids of the template's k-th literal segment, encoded once by the
    same ``encode_batch(texts, utf8)`` that encodes every field value of the batch in one call
    (so both have the library's dtype).
    """
    segments = plan.template.segments()
    n, width = len(values), len(segments)
    field_count = len(plan.fields)
    texts = [value for sample in values for value in sample]
    value_ids, value_counts = encode_batch(texts, [text.encode("utf-8") for text in texts])
    literal_counts = np.array([ids.size for ids in literal_ids], dtype=np.int64)
    # A pool holding the literals' ids then every value's ids; each (sample, segment) piece is
    # a slice of it, and one gather assembles every sample.
    pool = np.concatenate([*literal_ids, value_ids])
    literal_starts = np.cumsum(literal_counts) - literal_counts
    value_starts = np.cumsum(value_counts) - value_counts + literal_counts.sum()
    piece_start = np.empty((n, width), dtype=np.int64)
    piece_count = np.empty((n, width), dtype=np.int64)
    literal = 0
    for column, (kind, value) in enumerate(segments):
        if kind == "literal":
            piece_start[:, column] = literal_starts[literal]
            piece_count[:, column] = literal_counts[literal]
            literal += 1
        else:
            index = np.arange(n) * field_count + plan.fields.index(value)
            piece_start[:, column] = value_starts[index]
            piece_count[:, column] = value_counts[index]
    counts = piece_count.ravel()
    out_starts = np.cumsum(counts) - counts
    gather = np.arange(int(counts.sum())) + np.repeat(piece_start.ravel() - out_starts, counts)
    stops = np.cumsum(piece_count, axis=1)
    return pool[gather], stops[:, -1].copy(), stops


def append_eos(
    flat: np.ndarray, token_counts: np.ndarray, eos_id: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every sample's ids followed by ``eos_id``: ``(flat ids, token counts)``."""
    ends = np.cumsum(token_counts)
    return np.insert(flat, ends, np.asarray(eos_id, dtype=flat.dtype)), token_counts + 1

"""output/line_bytes.py: integers and options read from many lines at once, against Python's own
reading of each line."""

from __future__ import annotations

import random
import re

import numpy as np

from mintdim.build.formats import line_bytes

_CANONICAL = re.compile(rf"0|[1-9][0-9]{{0,{line_bytes.MAX_DIGITS - 1}}}")


def test_integers_read_forward_and_backward_are_pythons_integers():
    """Runs of 0 to 20 digits, some with a stray byte inside, between two literals: read from the
    front and from the back, a line holds a canonical integer exactly where the regular
    expression says so, with int()'s value and its exact width."""
    rng = random.Random(5)
    numbers = []
    for _ in range(20000):
        text = "".join(rng.choice("0123456789") for _ in range(rng.choice(range(21))))
        if text and rng.random() < 0.15:
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice("x:-/ \x00\xff") + text[at + 1 :]
        numbers.append(text)
    lines = line_bytes.Block(margin=64)
    lines.load("".join(f"A:{text},Z\n" for text in numbers).encode("latin-1"))
    ahead = line_bytes.Ahead(lines, lines.starts)
    forward = ahead.integer(b"A:")
    ahead.ok &= line_bytes.is_at(lines.windows(ahead.at, 3), 0, b",Z\n")
    back = line_bytes.Back(lines, lines.ends)
    backward = back.integer(b",Z")
    back.ok &= line_bytes.is_at(lines.windows(back.at - 2, 2), 0, b"A:")
    for line, text in enumerate(numbers):
        canonical = _CANONICAL.fullmatch(text) is not None
        assert ahead.ok[line] == canonical and back.ok[line] == canonical, text
        if canonical:
            assert forward[line] == backward[line] == int(text), text
            assert ahead.at[line] == lines.starts[line] + 2 + len(text)
            assert back.at[line] == lines.ends[line] - 2 - len(text)


def test_options_are_found_one_by_one_and_by_binary_search():
    """A few options of one length are compared one by one, many by a binary search: both name
    the option a line holds, and -1 for a line that holds none (one byte off)."""
    rng = random.Random(8)
    for count in (3, 40):
        options = sorted({f'"u{rng.randrange(10**6):06d}"'.encode() for _ in range(count)})
        picks = [rng.randrange(len(options)) for _ in range(2000)]
        texts = [options[p] for p in picks]
        texts[::7] = [text[:3] + b"#" + text[4:] for text in texts[::7]]
        lines = line_bytes.Block(margin=32)
        lines.load(b"".join(b"k=" + text + b"\n" for text in texts))
        ahead = line_bytes.Ahead(lines, lines.starts)
        found = ahead.choice(b"k=", line_bytes.Options(options))
        want = [options.index(text) if text in options else -1 for text in texts]
        assert found.tolist() == want
        assert np.array_equal(ahead.ok, np.array(want) >= 0)


def test_consecutive_ranges_hold_every_line_once(tmp_path):
    """Blocks read for consecutive byte ranges of a file hold its lines, each once and whole:
    with lines longer than a range, a last line without a newline, and an empty file."""
    rng = random.Random(3)
    for trial in range(60):
        lines = [b"x" * rng.choice([0, 1, 5, 40, 300]) for _ in range(rng.randrange(0, 30))]
        data = b"\n".join(lines) + (b"\n" if lines and trial % 3 else b"")
        path = tmp_path / f"f{trial}"
        path.write_bytes(data)
        step = rng.choice([1, 7, 64, 1000])
        block = line_bytes.Block(margin=8)
        held = b""
        with open(path, "rb") as handle:
            for start in range(0, len(data), step):
                offset = block.read_lines(handle.fileno(), start, min(start + step, len(data)))
                if block.size:  # no line starts in a range inside a longer line
                    assert offset == len(held)  # each block starts where the one before stopped
                held += block.bytes_of()
                assert block.ends.size == block.bytes_of().count(b"\n")
        assert held == data

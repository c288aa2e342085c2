"""The build's progress bar: input bytes done of the total (percentage, ETA), samples/s, tokens/s.

Input sizes are known before the build starts, so the bar measures bytes of JSONL consumed: the
percentage and the ETA are true however long the samples are. While a bar is shown, console
logging handlers write through tqdm, so log lines appear above the bar instead of tearing it.
"""

from __future__ import annotations

import logging
import sys
import time
from contextlib import ExitStack

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from mintdim.shared.lang import Bilingual
from mintdim.shared.log import LOGGER_NAME

__all__ = ["Progress"]

RATES = Bilingual(
    en="{samples:,.0f} samples/s, {tokens:,.0f} tokens/s",
    vi="{samples:,.0f} mẫu/s, {tokens:,.0f} token/s",
)


# tqdm's default, with the unit after both byte counts ("1.2MB/3.4MB" rather than "1.2M/3.4M").
_FORMAT = "{l_bar}{bar}| {n_fmt}B/{total_fmt}B [{elapsed}<{remaining}, {rate_fmt}{postfix}]"


class _Bar(tqdm):
    # No monitor thread: worker processes are forked, and a fork should not copy a live thread.
    monitor_interval = 0


class Progress:
    """A stderr bar over ``total_bytes`` of input; does nothing when not ``shown``."""

    def __init__(self, total_bytes: int, shown: bool) -> None:
        self._bar = _Bar(
            total=total_bytes,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc="unit-build",
            bar_format=_FORMAT,
            file=sys.stderr,
            dynamic_ncols=True,
            disable=not shown,
        )
        self._stack = ExitStack()
        if shown:
            # Only loggers that have handlers: tqdm gives every logger it is handed one of its own.
            loggers = [
                log for log in (logging.root, logging.getLogger(LOGGER_NAME)) if log.handlers
            ]
            self._stack.enter_context(logging_redirect_tqdm(loggers=loggers))
        self._samples = 0
        self._tokens = 0
        self._started = time.perf_counter()

    def advance(self, input_bytes: int, samples: int, tokens: int) -> None:
        """Count one batch: the input bytes it consumed, its samples and their tokens."""
        if self._bar.disable:
            return
        self._samples += samples
        self._tokens += tokens
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        rates = RATES.render(samples=self._samples / elapsed, tokens=self._tokens / elapsed)
        self._bar.set_postfix_str(rates, refresh=False)
        # A batch's byte count includes its last newline, which the file's last line may lack.
        self._bar.update(min(input_bytes, self._bar.total - self._bar.n))

    def complete(self) -> None:
        """Every input byte is done (a leading BOM is not part of any batch)."""
        if not self._bar.disable:
            self._bar.update(self._bar.total - self._bar.n)

    def close(self) -> None:
        """Remove the bar and give console logging back its handlers."""
        self._bar.close()
        self._stack.close()

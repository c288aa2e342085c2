"""Errors of running a build: worker processes, interrupts and Ray."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any, ClassVar

from mintdim.errors.base import (
    _H,
    MintDimError,
    _choice,
    _say,
)
from mintdim.shared.lang import Bilingual

__all__ = [
    "BuildInterruptedError",
    "RayConnectionError",
    "RayMissingError",
    "WorkerError",
]


class WorkerError(MintDimError, RuntimeError):
    """Raised in the parent when a worker process died without a MintDim error.

    ``cause``: a local worker process ended (``exitcode`` follows multiprocessing: negative
    means killed by that signal), or a Ray actor was lost more than ``restarts`` times.
    ``detail``: the process pool's or Ray's own words.
    """

    _CAUSES: ClassVar[dict[str, Bilingual]] = {
        "process_ended": Bilingual(
            "a worker process ended abruptly", "một tiến trình worker đã kết thúc đột ngột"
        ),
        "actor_lost": Bilingual(
            "a Ray actor was lost more than {restarts} times",
            "một actor Ray đã bị mất hơn {restarts} lần",
        ),
    }

    cause: str = _choice(_CAUSES)
    detail: str
    exitcode: int | None = None
    restarts: int = 0

    summary = Bilingual(
        "A worker process stopped without reporting a MintDim error.",
        "Một tiến trình worker đã dừng mà không báo lỗi MintDim.",
    )
    examples = (
        {
            "cause": "process_ended",
            "detail": "A process in the process pool was terminated abruptly while the future "
            "was running or pending.",
            "exitcode": -9,
        },
        {
            "cause": "actor_lost",
            "detail": "The actor died unexpectedly before finishing this task.",
            "restarts": 3,
        },
    )

    def _sections(self) -> Iterator[Any]:
        yield _H.PROBLEM, self._CAUSES[self.cause]
        yield _H.LIBRARY_ERROR, self.detail
        if self.exitcode is not None and self.exitcode < 0:
            try:
                name = signal.Signals(-self.exitcode).name
            except ValueError:
                name = f"signal {-self.exitcode}"
            killed = Bilingual(
                "{exitcode} (killed by {signal})", "{exitcode} (bị dừng bởi {signal})"
            )
            yield Bilingual("Exit code", "Mã thoát"), _say(killed, signal=name)
        elif self.exitcode is not None:
            yield Bilingual("Exit code", "Mã thoát"), self.exitcode
        yield (
            _H.FIX,
            Bilingual(
                "check free memory: the operating system may have killed the worker\n"
                "run again with workers=1 to see the error in this process",
                "kiểm tra bộ nhớ còn trống: hệ điều hành có thể đã dừng worker\n"
                "chạy lại với workers=1 để thấy lỗi ngay trong tiến trình này",
            ),
        )


class BuildInterruptedError(MintDimError, KeyboardInterrupt):
    """Raised when a build is stopped by Ctrl-C (SIGINT) or SIGTERM; nothing written is finished.

    It is a ``KeyboardInterrupt`` too, so ``except KeyboardInterrupt`` keeps catching a stop.
    """

    signal_name: str = "SIGINT"

    summary = Bilingual(
        "The build was stopped before it finished.", "Build đã bị dừng trước khi hoàn tất."
    )
    examples = ({"signal_name": "SIGTERM"},)

    def _sections(self) -> Iterator[Any]:
        yield Bilingual("Signal", "Tín hiệu"), self.signal_name
        yield (
            Bilingual("Result", "Kết quả"),
            Bilingual(
                "the build did not finish; nothing written is a finished build",
                "build chưa hoàn tất; các file đã ghi không phải là một build hoàn chỉnh",
            ),
        )
        yield (
            _H.FIX,
            Bilingual(
                "run the build again into a new or empty output directory",
                "chạy lại build vào một thư mục output mới hoặc rỗng",
            ),
        )


class RayMissingError(MintDimError, ImportError):
    """Raised when ``executor="ray"`` is asked for and the ``ray`` package cannot be imported."""

    detail: str

    summary = Bilingual(
        'executor="ray" needs the Ray package, which is not installed in this Python.',
        'executor="ray" cần package Ray, nhưng Python này chưa cài.',
    )
    examples = ({"detail": "No module named 'ray'"},)

    def _sections(self) -> Iterator[Any]:
        yield _H.REASON, self.detail
        yield (
            _H.FIX,
            Bilingual(
                'install MintDim with its Ray extra, from the MintDim checkout: pip install ".[ray]"\n'
                'or install Ray alone: pip install "ray>=2.9"\n'
                '(on every machine of the cluster), or run without executor="ray"',
                'cài MintDim cùng phần mở rộng Ray, từ thư mục mã nguồn MintDim: pip install ".[ray]"\n'
                'hoặc chỉ cài Ray: pip install "ray>=2.9"\n'
                '(trên mọi máy của cluster), hoặc chạy không có executor="ray"',
            ),
        )


class RayConnectionError(MintDimError, ConnectionError):
    """Raised when ``executor="ray"`` cannot join the Ray cluster at ``ray_address``
    (``address`` None: none was given, so Ray read ``RAY_ADDRESS`` or started a local cluster)."""

    _NO_ADDRESS = Bilingual(
        "(RAY_ADDRESS, or a new local cluster)", "(RAY_ADDRESS, hoặc một cluster cục bộ mới)"
    )

    address: str | None
    detail: str

    summary = Bilingual(
        'executor="ray" could not join the Ray cluster.',
        'executor="ray" không kết nối được vào cluster Ray.',
    )
    examples = (
        {
            "address": "10.0.0.1:6379",
            "detail": "ConnectionError: Failed to connect to Ray cluster at 10.0.0.1:6379",
        },
        {"address": None, "detail": "ConnectionError: Could not find any running Ray instance."},
    )

    def _sections(self) -> Iterator[Any]:
        address = self._NO_ADDRESS if self.address is None else self.address
        yield Bilingual("Address", "Địa chỉ"), address
        yield _H.REASON, self.detail
        yield (
            _H.FIX,
            _say(
                Bilingual(
                    "check that the cluster runs there: ray status --address {address}\n"
                    "join at the address ray start --head printed (its Local node IP and --port), "
                    'or ray_address="auto" on the head\n'
                    "a cluster with token authentication (recent Ray releases): set "
                    "RAY_AUTH_MODE=token here, with the head's token in ~/.ray/auth_token or "
                    "RAY_AUTH_TOKEN (docs/cluster.md)",
                    "kiểm tra cluster đang chạy ở đó: ray status --address {address}\n"
                    "kết nối tới địa chỉ mà ray start --head đã in ra (Local node IP và --port), "
                    'hoặc ray_address="auto" trên máy head\n'
                    "cluster có xác thực bằng token (các bản Ray gần đây): đặt "
                    "RAY_AUTH_MODE=token ở máy này, với token của head trong ~/.ray/auth_token hoặc "
                    "RAY_AUTH_TOKEN (docs/cluster.md)",
                ),
                address=address,
            ),
        )

"""Progress of long work: a bar (tqdm) where the stream is a terminal, lines or nothing
otherwise — the one place that decides how progress is shown."""

from __future__ import annotations

import os
from typing import Any, TextIO


def on_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an interactive terminal that can redraw a bar in place."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class Bar:
    """A progress bar on ``stream``: ``done``/``total`` and a status after the elapsed time
    (``[00:32, 0 running, 6 left, about 00:03 to go]``)
    — the caller's estimate of the time left, not tqdm's, which would count one-off costs such
    as compiling the kernels. Messages go above the bar."""

    def __init__(self, total: int, stream: TextIO, *, description: str, done: int = 0):
        from tqdm import tqdm

        self._bar = tqdm(total=total, initial=done, file=stream, desc=description,
                         bar_format="{desc}: {bar} {n_fmt}/{total_fmt} [{elapsed}{postfix}]",
                         dynamic_ncols=True, mininterval=0.2, leave=True)

    def show(self, done: int, status: str | None = None) -> None:
        """Redraw (at most every 0.2 s) with ``done`` finished and ``status``."""
        if status is not None:
            self._bar.set_postfix_str(status, refresh=False)
        self._bar.update(done - self._bar.n)

    def write(self, message: str) -> None:
        self._bar.write(message, file=self._bar.fp)

    def close(self) -> None:
        self._bar.close()

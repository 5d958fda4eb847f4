"""Atomic file writes: a result file is complete or absent, never half-written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(target, write) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``target``, then rename it over.

    On any error the temporary file is removed and ``target`` is left as it was.
    """
    target = Path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(target, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` atomically."""
    atomic_write(target, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))

"""Atomic file writes: a result file is complete or absent, never half-written.

A write goes to a temporary file beside its target, named ``.TARGET.XXXXXXXX`` + :data:`TEMPORARY`
(a name no other program uses), then is renamed over the target.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: Suffix of this library's temporary files: what a killed write may leave behind.
TEMPORARY = ".lgb_risk.tmp"


def atomic_write(target, write) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``target``, then rename it over.

    On any error the temporary file is removed and ``target`` is left as it was.
    """
    target = Path(target)
    if not target.parent.is_dir():
        raise FileNotFoundError(f"cannot write {target}: the folder {target.parent} does not "
                                "exist")
    if target.is_dir():
        raise ValueError(f"cannot write {target}: it is a folder")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMPORARY)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; results are ordinary files
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


def read_exact_csv(path, id_column: str):
    """Read a CSV of floats written with ``%.17g`` back to the very same doubles.

    Values are parsed by Python's correctly rounded float conversion (pandas' own fast parser
    is not guaranteed to round-trip on every version); ``id_column`` stays a string.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a table this library wrote ({exc})") from None
    if id_column not in frame.columns:
        raise ValueError(f"{path}: no {id_column!r} column (columns: {list(frame.columns)})")
    for column in frame.columns:
        if column == id_column:
            continue
        for row, text in enumerate(frame[column]):
            try:
                float(text)
            except ValueError:
                raise ValueError(f"{path}:{row + 2}: column {column!r} holds {text!r}, not a "
                                 "number") from None
        frame[column] = frame[column].map(float)
    return frame

"""Atomic file writes: a result file is complete or absent, never half-written.

A write goes to a temporary file beside its target, named ``.TARGET.XXXXXXXX`` + :data:`TEMPORARY`
(a name no other program uses), then is renamed over the target.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

#: Suffix of this library's temporary files: what a killed write may leave behind.
TEMPORARY = ".lgb_risk.tmp"


def atomic_write(target: str | os.PathLike, write: Callable[[str], Any]) -> None:
    """Call ``write(tmp_path)`` on a temporary file beside ``target``, then rename it over.

    On any error the temporary file is removed and ``target`` is left as it was. A ``target``
    that is a symbolic link is written through (the file it points to is replaced, the link
    kept). An operating-system error (a full disk, a read-only folder) is raised as an OSError
    whose message names ``target``, not the temporary file, and says that nothing was written;
    a write that stopped short with no error number (numpy on a full disk) says so, with the
    disk's free space.
    """
    given = Path(target)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    if not target.parent.is_dir():
        link = f" (the symbolic link {given} points there)" if target != given else ""
        raise FileNotFoundError(f"cannot write {target}: the folder {target.parent} does not "
                                f"exist{link}")
    if target.is_dir():
        raise ValueError(f"cannot write {target}: it is a folder")
    existed = target.exists()
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                   suffix=TEMPORARY)
        os.close(fd)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; results are ordinary files
        write(tmp)
        os.replace(tmp, target)
    except OSError as error:
        _remove(tmp)
        kept = "; the file there is kept as it was" if existed else ""
        if error.errno is None:
            # A write that stopped short without an errno (numpy's "N requested and M written"):
            # the disk filled up, or a quota was reached; say so with what is left.
            free = shutil.disk_usage(target.parent).free
            raise OSError(f"cannot write {target}: the write stopped short ({error}); the disk "
                          f"holding it has {free / 2**20:.1f} MiB free: full, or over a quota? "
                          f"(nothing was written{kept})") from None
        raise OSError(error.errno, f"cannot write {target}: {os.strerror(error.errno)} (nothing "
                                   f"was written{kept})") from None
    except BaseException:
        _remove(tmp)
        raise


def check_folder_can_be_written(directory: str | os.PathLike, name: str) -> None:
    """Refuse, before any work and without making anything, a folder that could not be
    written: an existing file, a path under a file, or a folder (or the nearest existing
    parent of a new one) without write permission or on a read-only file system."""
    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{name} {directory}: exists and is a file, not a folder")
    existing = folder if folder.exists() else next(
        (parent for parent in folder.parents if parent.exists()), Path("."))
    if not existing.is_dir():
        raise ValueError(f"{name} {directory}: {existing} is a file, so no folder can be made "
                         "under it")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "the folder" if existing == folder else f"its parent {existing}"
        raise ValueError(f"{name} {directory}: cannot write into {where} (no write "
                         "permission, or a read-only file system); choose a folder you can "
                         "write to")


def writable_folder(directory: str | os.PathLike, name: str) -> Path:
    """The folder ``directory``, checked by :func:`check_folder_can_be_written` before any
    work and made where it is missing; returned as a ``Path``."""
    check_folder_can_be_written(directory, name)
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name} {directory}: cannot create the folder "
                         f"({exc.strerror})") from None
    return folder


def _remove(tmp) -> None:
    if tmp is not None and os.path.exists(tmp):
        os.unlink(tmp)


def atomic_write_text(target: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` whole or not at all (:func:`atomic_write`)."""
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

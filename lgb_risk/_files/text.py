"""Reading a text file line by line, with errors that name the file and the line."""

from __future__ import annotations

import os


def text_lines(path):
    """Yield (line_number, text) for every line of a UTF-8 file; an undecodable line is an error
    naming the file and line."""
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no such file: {p}")
    with open(p, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{p}:{number}: not UTF-8 text ({exc.reason} at byte "
                                 f"{exc.start} of the line); is this the right file?") from None


def field_lines(path):
    """Yield (line_number, fields) for the non-blank lines of a text file."""
    for number, line in text_lines(path):
        fields = line.split()
        if fields:
            yield number, fields

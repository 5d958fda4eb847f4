"""Parameters declared once: a dataclass field carries its type, default, check and documentation.

An objective declares each parameter as ``name: type = parameter(default, kind=..., check=...,
doc=...)``. Everything else reads that declaration: the initialiser and ``repr`` (the dataclass),
:func:`validate` (every check, in field order), the class docstring's numpydoc "Parameters"
table (:func:`documented`, which fills the ``{parameters}`` line of the docstring), and the
experiment configuration's ``[objective]`` table (the fields an objective has).
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["parameter", "declared", "validate", "documented"]


class Declaration(NamedTuple):
    """What a parameter's field carries besides its name and default."""

    kind: str  # the numpydoc type, e.g. "float > 0" or '{"first", "iteration"}'
    check: Callable[[Any, str], object] | None  # raises ValueError naming the parameter
    doc: str  # one paragraph (numpydoc's description)
    show_default: bool


def parameter(default: Any, *, kind: str, doc: str,
              check: Callable[[Any, str], object] | None = None, repr: bool = True,
              show_default: bool = True) -> Any:
    """A dataclass field declaring a parameter: ``check(value, name)`` raises ValueError for a
    bad value (None: any value, checked where it is used); ``doc`` documents it."""
    return dataclasses.field(default=default, repr=repr,
                             metadata={"parameter": Declaration(kind, check, doc, show_default)})


def declared(cls: type) -> list[tuple[dataclasses.Field, Declaration]]:
    """The declared parameters of a dataclass, the most specific class's own first (a
    subclass's new parameters before those it inherits)."""
    def depth(field: dataclasses.Field) -> int:
        return next(i for i, klass in enumerate(cls.__mro__)
                    if field.name in vars(klass).get("__annotations__", {}))

    fields = [f for f in dataclasses.fields(cls) if "parameter" in f.metadata]
    return [(f, f.metadata["parameter"]) for f in sorted(fields, key=depth)]


def validate(instance: Any) -> None:
    """Run every declared parameter's check on ``instance``'s value, in field order."""
    for field in dataclasses.fields(instance):
        declaration = field.metadata.get("parameter")
        if declaration is not None and declaration.check is not None:
            declaration.check(getattr(instance, field.name), field.name)


def documented(cls: type) -> type:
    """Fill the ``{parameters}`` line of ``cls``'s docstring with a numpydoc entry per declared
    parameter (name, kind, default and doc)."""
    entries = []
    for field, declaration in declared(cls):
        head = f"{field.name} : {declaration.kind}"
        if declaration.show_default:
            head += f", default {field.default!r}"
        body = textwrap.fill(declaration.doc, width=96, initial_indent="    ",
                             subsequent_indent="    ")
        entries.append(f"{head}\n{body}")
    doc = cls.__doc__ or ""
    marker = next((line for line in doc.splitlines() if line.strip() == "{parameters}"), None)
    if marker is None:
        raise ValueError(f"{cls.__name__}'s docstring has no {{parameters}} line")
    indent = marker[:len(marker) - len(marker.lstrip())]
    table = textwrap.indent("\n".join(entries), indent)
    cls.__doc__ = doc.replace(marker, table)
    return cls

"""Parameters declared once: a dataclass field carries its type, default, check and documentation.

An objective declares each parameter as ``name: type = parameter(default, kind=..., check=...,
doc=...)``. Everything else reads that declaration: the initialiser and ``repr`` (the dataclass),
:func:`validate` (every check, in field order), the class docstring's numpydoc "Parameters"
table (:func:`documented`, which fills the ``{parameters}`` line of the docstring), and the
experiment configuration's ``[objective]`` table (the fields an objective has).
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Bounds", "OneOf", "FLAG", "parameter", "declared", "validate", "documented", "entry",
           "fill"]


@dataclasses.dataclass(frozen=True)
class Bounds:
    """A check of a number that says what it accepts: a finite number (a whole number with
    ``integer``; never a bool or a string) from ``minimum`` (excluded with ``above``) to
    ``maximum`` (excluded with ``below``), or None where ``optional``. The text of the check is
    derived from the bounds: :attr:`kind` for a docstring (``"float in (0, 1)"``),
    :attr:`expected` for an error (``"a probability in (0, 1)"``, ``what`` naming the number).

    >>> Bounds(minimum=0, above=True).kind, Bounds(integer=True, minimum=1).expected
    ('float > 0', 'a whole number >= 1')
    >>> Bounds(minimum=0, maximum=1, above=True, below=True, what="a probability")(2, "p")
    Traceback (most recent call last):
    ValueError: p must be a probability in (0, 1), got 2
    """

    integer: bool = False
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    below: bool = False
    optional: bool = False
    what: str | None = None

    def _range(self) -> str:
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            return (f"in {'(' if self.above else '['}{low:g}, {high:g}"
                    f"{')' if self.below else ']'}")
        if low is not None:
            return f"{'>' if self.above else '>='} {low:g}"
        if high is not None:
            return f"{'<' if self.below else '<='} {high:g}"
        return ""

    @property
    def kind(self) -> str:
        """The numpydoc type: ``int >= 1``, ``float in (0, 0.9]``, ``..., optional``."""
        text = f"{'int' if self.integer else 'float'} {self._range()}".strip()
        return text + (", optional" if self.optional else "")

    @property
    def expected(self) -> str:
        """What an error says it expected: ``a whole number >= 1``."""
        noun = self.what or ("a whole number" if self.integer else "a number")
        return f"{noun} {self._range()}".strip()

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.optional
        types = (int, np.integer) if self.integer else (int, float, np.integer, np.floating)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, types) or \
                not math.isfinite(value):
            return False
        if self.minimum is not None and (value <= self.minimum if self.above
                                         else value < self.minimum):
            return False
        return self.maximum is None or bool(value < self.maximum if self.below
                                            else value <= self.maximum)

    def __call__(self, value: Any, name: str) -> None:
        if not self.accepts(value):
            raise ValueError(f"{name} must be {self.expected}, got {value!r}")


class Declaration(NamedTuple):
    """What a parameter's field carries besides its name and default."""

    kind: str  # the numpydoc type, e.g. "float > 0" or '{"first", "iteration"}'
    check: Callable[[Any, str], object] | None  # raises ValueError naming the parameter
    doc: str  # one paragraph (numpydoc's description)
    show_default: bool
    default_text: str | None = None  # the effective default, where None stands for it


@dataclasses.dataclass(frozen=True)
class OneOf:
    """A check of a choice among ``options`` that says what it accepts (``kind``:
    ``{"first", "iteration"}``).

    >>> OneOf(("local", "exact")).kind
    '{"local", "exact"}'
    """

    options: tuple

    @property
    def kind(self) -> str:
        return "{" + ", ".join(f'"{option}"' for option in self.options) + "}"

    def __call__(self, value: Any, name: str) -> None:
        if value not in self.options:
            raise ValueError(f"{name} must be one of {sorted(self.options)}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class _Flag:
    """The check of True or False (numpy's bools included), nothing else."""

    kind = "bool"

    def __call__(self, value: Any, name: str) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {value!r}")


#: The check of a flag: True or False.
FLAG = _Flag()


def parameter(default: Any, *, doc: str, check: Callable[[Any, str], object] | None = None,
              kind: str | None = None, repr: bool = True, show_default: bool = True,
              default_text: str | None = None) -> Any:
    """A dataclass field declaring a parameter: ``check(value, name)`` raises ValueError for a
    bad value (None: any value, checked where it is used); ``doc`` documents it; ``kind`` is its
    numpydoc type, by default the text of its check (:class:`Bounds`, :class:`OneOf`,
    :data:`FLAG`); ``default_text`` states the
    effective default where ``default`` (None) stands for one chosen at the call (k: the
    measure's cut-off, else 10)."""
    if kind is None:
        if not isinstance(check, (Bounds, OneOf, _Flag)):
            raise TypeError("parameter() needs kind= unless its check states it (Bounds, OneOf, "
                            "FLAG)")
        kind = check.kind
    return dataclasses.field(default=default, repr=repr, metadata={
        "parameter": Declaration(kind, check, doc, show_default, default_text)})


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


def entry(cls: type, name: str) -> str:
    """The numpydoc entry of ``cls``'s declared parameter ``name``: its name, kind and default,
    then its doc, indented."""
    field, declaration = next((f, d) for f, d in declared(cls) if f.name == name)
    head = f"{field.name} : {declaration.kind}"
    if declaration.default_text is not None:
        head += f", default {declaration.default_text}"
    elif declaration.show_default:
        head += f", default {field.default!r}"
    body = textwrap.fill(declaration.doc, width=96, initial_indent="    ",
                         subsequent_indent="    ")
    return f"{head}\n{body}"


def fill(doc: str, marker: str, text: str, owner: str) -> str:
    """``doc`` with the line that is ``marker`` alone replaced by ``text``, indented as the
    marker was."""
    line = next((line for line in doc.splitlines() if line.strip() == marker), None)
    if line is None:
        raise ValueError(f"{owner}'s docstring has no {marker} line")
    indent = line[:len(line) - len(line.lstrip())]
    return doc.replace(line, textwrap.indent(text, indent))


def documented(cls: type) -> type:
    """Fill the ``{parameters}`` line of ``cls``'s docstring with a numpydoc entry per declared
    parameter (name, kind, default and doc)."""
    table = "\n".join(entry(cls, field.name) for field, _ in declared(cls))
    cls.__doc__ = fill(cls.__doc__ or "", "{parameters}", table, cls.__name__)
    return cls

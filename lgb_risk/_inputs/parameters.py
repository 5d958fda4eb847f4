"""Parameters declared once, as one record type: :class:`Parameter` (name, default, check, doc).

A measure of the registry and the scikit-learn estimator list their parameters as
:class:`Parameter` records (``Parameter("p", 0.8, Bounds(...), doc=...)``); an objective and each
table of the experiment configuration declare theirs as dataclass fields, ``name: type =
parameter(default, check=..., doc=...)``, whose metadata holds the same record (:func:`declared`
reads them back, named). Everything else reads the record: the initialiser and ``repr`` (the
dataclass), :func:`validate` (every check, in field order), the numpydoc "Parameters" entries
(:meth:`Parameter.entry`, which :func:`documented` writes into a class docstring's
``{parameters}`` line), the measures' table, the configuration's sample and the manual's
references.

A check (:class:`Bounds`, :class:`OneOf`, :class:`OfType`, :data:`FLAG`) states what it accepts,
so that a record's numpydoc type is derived from it, and a command line's argument type too
(:func:`from_text`); a check of another kind is a function ``check(value, name)`` raising
ValueError, given with its ``kind`` text.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Bounds", "OneOf", "OfType", "FLAG", "Parameter", "parameter", "declared",
           "parameter_of", "validate", "documented", "fill", "from_text"]


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

    def read(self, text: Any) -> Any:
        """``text`` as the check's number type (int with ``integer``, else float), or None
        where it is not one or the check refuses it."""
        number = int if self.integer else float
        try:
            converted = number(text)
        except (TypeError, ValueError):
            return None
        if number is int and str(text).strip() != str(converted):
            return None
        return converted if self.accepts(converted) else None


def from_text(check: Bounds, *, also: dict[str, Any] | None = None) -> Callable[[str], Any]:
    """An argparse ``type`` reading a number that ``check`` accepts (``also`` maps other words
    to their values, ``{"all": None}``); the error says what was expected, from the check.

    >>> from_text(Bounds(integer=True, minimum=1))("3")
    3
    >>> from_text(Bounds(minimum=0, maximum=1, above=True, below=True, what="a fraction"))("2")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected a fraction in (0, 1), got '2'
    """
    import argparse

    words = dict(also or {})

    def parse(text: str) -> Any:
        if text in words:
            return words[text]
        value = check.read(text)
        if value is None:
            alternatives = "".join(f" or {word!r}" for word in words)
            raise argparse.ArgumentTypeError(f"expected {check.expected}{alternatives}, got "
                                             f"{text!r}")
        return value

    return parse


@dataclasses.dataclass(frozen=True)
class OfType:
    """A check of a value's type that says what it accepts: an instance of ``types`` (never a
    bool where a number is asked), or None where ``optional``; a wrong type is a TypeError.

    >>> OfType((dict,), optional=True).kind
    'dict, optional'
    >>> OfType((str,))(3, "objective")
    Traceback (most recent call last):
    TypeError: objective must be str, got 3
    """

    types: tuple[type, ...]
    optional: bool = False

    @property
    def _names(self) -> str:
        return " or ".join(kind.__name__ for kind in self.types)

    @property
    def kind(self) -> str:
        return self._names + (", optional" if self.optional else "")

    def __call__(self, value: Any, name: str) -> None:
        if value is None and self.optional:
            return
        if isinstance(value, bool) or not isinstance(value, self.types):
            raise TypeError(f"{name} must be {self._names}{' or None' if self.optional else ''}, "
                            f"got {value!r}")


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


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One parameter of a measure, an objective or the experiment configuration.

    ``check(value, name)`` raises ValueError for a bad value (None: any value, checked where it is
    used); ``doc`` is one numpydoc paragraph; ``kind`` is its numpydoc type, by default the text of
    its check (:class:`Bounds`, :class:`OneOf`, :class:`OfType`, :data:`FLAG`); ``default_text``
    states the effective default where ``default`` (None) stands for one chosen at the call (k: the
    measure's cut-off, else 10), and ``show_default=False`` leaves the default out of the entry.

    >>> p = Parameter("p", 0.8, Bounds(minimum=0, maximum=1, above=True, below=True),
    ...               doc="The persistence.")
    >>> p.kind, p.read("0.9", "measure 'rbp(p=0.9)'")
    ('float in (0, 1)', 0.9)
    >>> print(p.entry())
    p : float in (0, 1), default 0.8
        The persistence.
    """

    name: str | None
    default: Any
    check: Callable[[Any, str], object] | None
    doc: str
    kind: str | None = None
    show_default: bool = True
    default_text: str | None = None

    def __post_init__(self) -> None:
        if self.kind is None:
            if not isinstance(self.check, (Bounds, OneOf, OfType, _Flag)):
                raise TypeError(f"parameter {self.name or ''}: give kind= unless its check "
                                "states it (Bounds, OneOf, OfType, FLAG)")
            object.__setattr__(self, "kind", self.check.kind)

    def validate(self, value: Any, name: str | None = None) -> None:
        """Raise ValueError naming the parameter (or ``name``) where ``value`` fails the check."""
        if self.check is not None:
            self.check(value, name or self.name or "the parameter")

    def read(self, value: Any, where: str) -> Any:
        """A value written as text (a measure's ``NAME(name=value)``), converted to the
        :class:`Bounds` check's number type and checked; the error names ``where``."""
        check = self.check
        if not isinstance(check, Bounds):
            raise TypeError(f"parameter {self.name}: a value written as text is read by a Bounds "
                            "check")
        converted = check.read(value)
        if converted is None:
            raise ValueError(f"{where}: {self.name} must be {check.expected}, "
                             f"got {value!r}")
        return converted

    def entry(self) -> str:
        """The numpydoc entry: name, kind and default, then the doc, indented."""
        head = f"{self.name} : {self.kind}"
        if self.default_text is not None:
            head += f", default {self.default_text}"
        elif self.show_default:
            head += f", default {self.default!r}"
        body = textwrap.fill(self.doc, width=96, initial_indent="    ",
                             subsequent_indent="    ")
        return f"{head}\n{body}"


def parameter(default: Any, *, doc: str, check: Callable[[Any, str], object] | None = None,
              kind: str | None = None, repr: bool = True, show_default: bool = True,
              default_text: str | None = None) -> Any:
    """A dataclass field declaring a :class:`Parameter` (named by the field)."""
    return dataclasses.field(default=default, repr=repr, metadata={
        "parameter": Parameter(None, default, check, doc, kind, show_default, default_text)})


def declared(cls: type) -> list[Parameter]:
    """The declared parameters of a dataclass (or of its instance), named by their fields, the
    most specific class's own first (a subclass's new parameters before those it inherits)."""
    cls = cls if isinstance(cls, type) else type(cls)

    def depth(field: dataclasses.Field) -> int:
        return next(i for i, klass in enumerate(cls.__mro__)
                    if field.name in vars(klass).get("__annotations__", {}))

    fields = [f for f in dataclasses.fields(cls) if "parameter" in f.metadata]
    return [dataclasses.replace(f.metadata["parameter"], name=f.name)
            for f in sorted(fields, key=depth)]


def parameter_of(cls: type, name: str) -> Parameter:
    """``cls``'s declared parameter ``name``."""
    found = [declared_parameter for declared_parameter in declared(cls)
             if declared_parameter.name == name]
    if not found:
        raise ValueError(f"{cls.__name__} declares no parameter {name!r}")
    return found[0]


def validate(instance: Any) -> None:
    """Run every declared parameter's check on ``instance``'s value, in field order."""
    for field in dataclasses.fields(instance):
        if "parameter" in field.metadata:
            field.metadata["parameter"].validate(getattr(instance, field.name), field.name)


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
    table = "\n".join(declared_parameter.entry() for declared_parameter in declared(cls))
    cls.__doc__ = fill(cls.__doc__ or "", "{parameters}", table, cls.__name__)
    return cls

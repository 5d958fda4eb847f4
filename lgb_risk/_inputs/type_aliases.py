"""Type aliases of the public signatures (read by type checkers only: every module imports them
under ``typing.TYPE_CHECKING``, so nothing here is imported at run time)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union

from numpy.typing import ArrayLike

from lgb_risk.conventions import Convention

#: A convention: a tool's name (:data:`lgb_risk.conventions.CONVENTIONS`), a Convention, or None
#: for the library's defaults.
ConventionLike = Union[str, Convention, None]

#: Per-query values: an array in query order, or keyed by topic (a pandas Series or a mapping
#: topic -> value; a mapping name -> those, or a DataFrame, for several systems).
PerQuery = Union[ArrayLike, Mapping[Any, Any]]

__all__ = ["ArrayLike", "ConventionLike", "PerQuery"]

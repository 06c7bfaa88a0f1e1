"""Value classes without ``@dataclass``.

The function starts afresh on every render, and creating a dataclass costs 0.3 to 1 ms at import
(it generates and compiles its methods), a plain class with ``__slots__`` about 0.01 ms. These
bases give such a class what a dataclass gave: equality and ``repr`` over its ``__slots__``, and
for an immutable one (fields declared ``Final``) the hash of a frozen dataclass. A slot whose name
starts with ``_`` is internal: it is neither compared nor shown.
"""

from __future__ import annotations

from typing import Any


class Record:
    """Equality, hash and repr over the public ``__slots__``, as ``@dataclass(frozen=True)`` has them."""

    __slots__ = ()

    def _fields(self) -> list[str]:
        names: tuple[str, ...] = self.__slots__
        return [name for name in names if not name.startswith("_")]

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields())

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields())
        return f"{self.__class__.__qualname__}({fields})"


class MutableRecord(Record):
    """As ``@dataclass``: equality and repr, and no hash."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

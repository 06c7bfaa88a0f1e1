"""The output bound on derived runtimes: the runtimes one render derives, together, at most what the
function reads, each counted as it is written (aliases expanded), in the TrainJobs' order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..krm.resource_list import Item
from ..values.violations import Violation
from ..yamltext import yamlnodes as yn
from .materialize import WrittenBase

# The derived runtimes of one render, together, at most what the function reads (yamlnodes'
# MAX_INPUT_BYTES), counted as they are written (aliases expanded): each is about its base's size
# as written, so a few large runtimes (or one whose aliases repeat a large value) and many distinct
# overrides would otherwise make an output (and memory) hundreds of times the input's.
MAX_DERIVED_BYTES: Final = yn.MAX_INPUT_BYTES
BOUND_MESSAGE: Final = "the derived runtimes of this render would pass the output bound"
# What a derived runtime holds besides its base's text and its overrides, at most: its name,
# namespace, label and the function's annotations (derived-from, name scheme, sync wave, kpt's path,
# each naming the base or the derived runtime: names of at most 253 bytes, namespaces of 63).
OWN_METADATA_BYTES: Final = 1536


class OutputBound:
    """The derived runtimes a render has admitted (``admit``, in the TrainJobs' order), their
    bytes, and how many from each base. A derived runtime counts as at least what it is written
    as (``size_of``: its base's text as written, ``WrittenBase.size``, aliases expanded). Each base
    is written once, here, into a count that stops at what the bound has left: a base too large
    for it is never held."""

    __slots__ = ("admitted", "bases", "limit", "metadata_bytes", "per_base", "total")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_DERIVED_BYTES if limit is None else limit
        self.metadata_bytes = 0  # what derivedRuntimeMetadata adds to each (``count_metadata``)
        self.admitted: set[tuple[str, str, str]] = set()
        self.per_base: dict[int, int] = {}  # id(base item) -> derived runtimes admitted from it
        # id(base item) -> its written form (None: larger than the bound had left), the item kept alive
        self.bases: dict[int, tuple[WrittenBase | None, Item]] = {}
        self.total = 0

    def written_base(self, base: Item) -> WrittenBase | None:
        """``base`` as written, made once; None where its text passes what the bound has left (the
        bound only fills up, so it would not fit later either)."""
        known = self.bases.get(id(base))
        if known is None:
            try:
                written_base: WrittenBase | None = WrittenBase(base, self.limit - self.total)
            except yn.OutputLimitError:
                written_base = None
            known = self.bases[id(base)] = (written_base, base)
        return known[0]

    def count_metadata(self, metadata: Mapping[str, Mapping[str, str]]) -> None:
        """Count ``derivedRuntimeMetadata`` (``add_metadata``) on each derived runtime: its text as
        written, each line indented under ``metadata``."""
        entries = {section: dict(values) for section, values in metadata.items() if values}
        if entries:
            text = yn.serialize(yn.from_python(entries))
            self.metadata_bytes = len(text.encode()) + 2 * text.count("\n")

    def size_of(self, base: Item, overrides: int) -> int | None:
        """The bytes a runtime derived from ``base`` with ``overrides`` bytes of overrides counts
        for: its base's text as written, the overrides twice (in its containers, and recorded in
        an annotation), its own metadata and ``derivedRuntimeMetadata``; None: its base alone passes
        what the bound has left."""
        written_base = self.written_base(base)
        if written_base is None:
            return None
        return written_base.size + 2 * overrides + OWN_METADATA_BYTES + self.metadata_bytes

    def admit(self, identity: tuple[str, str, str], base: Item, display: str, overrides: int) -> Violation | None:
        """None when the derived runtime ``identity`` (of ``base``, ``overrides`` bytes of overrides)
        fits, or was admitted before; else the error for the TrainJob that would derive it."""
        if identity in self.admitted:
            return None
        size = self.size_of(base, overrides)
        count = self.per_base.get(id(base), 0) + 1
        if size is None or self.total + size > self.limit:
            if size is None:
                each = f"more than the {self.limit - self.total:,} bytes left of the bound each, as written"
            else:
                each = f"{size:,} bytes each as written"
            return Violation(
                "spec.runtimeRef",
                f"{BOUND_MESSAGE}: this TrainJob's would be runtime number {count:,} derived from {display} "
                f"({each}, aliases expanded), with the {len(self.admitted):,} derived before it "
                f"holding {self.total:,} bytes; the derived runtimes of one render hold at most {self.limit:,} "
                f"bytes ({self.limit // (1024 * 1024)} MiB, the input limit). Give fewer distinct overrides per "
                "runtime (TrainJobs with equal overrides share one derived runtime), write the runtime without "
                "aliases that repeat large values, or render the bundle in parts",
            )
        self.admitted.add(identity)
        self.per_base[id(base)] = count
        self.total += size
        return None

    def admit_all(self, requests: list[tuple[tuple[str, str, str], Item, int]]) -> bool:
        """Admits every request (identity, base, overrides' bytes), or none when one would not fit."""
        admitted, per_base, total = set(self.admitted), dict(self.per_base), self.total
        for identity, base, overrides in requests:
            if identity in admitted:
                continue
            size = self.size_of(base, overrides)
            if size is None:
                return False
            total += size
            per_base[id(base)] = per_base.get(id(base), 0) + 1
            admitted.add(identity)
            if total > self.limit:
                return False
        self.admitted, self.per_base, self.total = admitted, per_base, total
        return True

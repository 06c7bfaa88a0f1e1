"""The bound on what ``explain`` writes (issue 46): a small input can ask for a huge explanation (a
runtime of 1,000 containers and 200 TrainJobs that use it, 150 KB, explained as 118 MB of JSON in
1.35 GB of memory), and explain runs in CI on a pull request's content.

Each TrainJob's explanation counts as its JSON (``explain_report.json_entry``, the largest of the formats:
a table or markdown of the same TrainJob is smaller), counted as it is made; once the explanations of
one run (``--against``: of both sides together) would pass ``MAX_EXPLAIN_BYTES``, no further TrainJob
is explained, each is named as left out, and an error says why. So the output, and the memory, stay
proportional to the bound, whatever the number of TrainJobs.
"""

from __future__ import annotations

from typing import Final

from ..values.records import MutableRecord
from .explain import TrainJobPods
from .explain_report import json_entry

MAX_EXPLAIN_BYTES: Final = 32 * 1024 * 1024
BOUND_REASON: Final = "its explanation would pass explain's output bound"


class ExplainBound(MutableRecord):
    """The bytes of the explanations admitted so far; ``full`` once one was refused."""

    __slots__ = ("full", "limit", "total")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_EXPLAIN_BYTES if limit is None else limit
        self.total = 0
        self.full = False

    def admit(self, view: TrainJobPods) -> bool:
        """Whether ``view``'s explanation fits what is left; once one does not, none after it does
        (the output keeps the input's order, without gaps)."""
        if self.full:
            return False
        size = len(json_entry(view).encode()) + 1  # and its comma
        if self.total + size > self.limit:
            self.full = True
            return False
        self.total += size
        return True

    def message(self, first: str, count: int) -> str:
        """The error for the ``count`` TrainJobs not explained, ``first`` the first of them."""
        return (
            f"{count:,} TrainJob{'s' if count != 1 else ''} not explained, from {first} on: {BOUND_REASON} "
            f"(explanations of at most {self.limit:,} bytes together, {self.limit // (1024 * 1024)} MiB, each "
            f"counted as its JSON; {self.total:,} bytes explained before). Explain fewer TrainJobs at a time "
            "(a PATH per application), or runtimes with fewer containers"
        )

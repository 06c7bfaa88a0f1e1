"""Which results a run reports: the functionConfig's ``results`` option.

``all`` keeps every result; ``problems`` keeps warnings and errors; ``summary`` keeps those and
replaces the infos (one or two per TrainJob: 4,000 lines on 2,000 TrainJobs) with one that sums up
the run. Pure: results in, results out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..krm.resource_list import Item, Result
from ..options.options import with_option
from ..values.records import MutableRecord

RESULTS_OPTIONS: Final = ("all", "summary", "problems")
RESULTS_HELP: Final = "which results to report: all (default), problems (warnings and errors), summary (and one info)"


class Tally(MutableRecord):
    """What a run did to its TrainJobs, for the summary."""

    __slots__ = ("changed", "derived", "failed", "total", "unchecked")

    def __init__(self) -> None:
        self.total = 0
        self.changed = 0  # rewritten (materialized, restored, renamed)
        self.failed = 0  # returned as written, with errors
        self.unchecked = 0  # passed through: the runtime is not in the bundle
        self.derived = 0  # derived runtimes written

    def count(self, failed: bool, changed: bool, unchecked: bool) -> None:
        if failed:
            self.failed += 1
        elif unchecked:
            self.unchecked += 1
        elif changed:
            self.changed += 1

    def text(self) -> str:
        unchanged = self.total - self.changed - self.failed - self.unchecked
        parts = [f"{self.changed} rewritten ({self.derived} derived runtime{_s(self.derived)})"]
        parts.append(f"{unchanged} unchanged")
        if self.unchecked:
            parts.append(f"{self.unchecked} passed through unchecked (runtime not in the bundle)")
        parts.append(f"{self.failed} with errors")
        return f"{self.total} TrainJob{_s(self.total)}: {', '.join(parts)}"


def _s(count: int) -> str:
    return "" if count == 1 else "s"


KEPT: Final = ("error", "warning")
# An Argo CD plugin or a pipeline that applies an empty render prunes everything it deployed before.
EMPTY_INPUT: Final = (
    "the input has no items: nothing was rendered (check the paths, the kustomization's resources or the "
    "package; a GitOps tool that applies an empty render deletes what it deployed before)"
)


def reported(results: Sequence[Result], option: str, tally: Tally) -> list[Result]:
    """``results`` as the ``results`` option asks."""
    if option == "all":
        return list(results)
    kept = [r for r in results if r.severity in KEPT]
    if option == "summary":
        kept.append(Result(tally.text(), "info"))
    return kept


def with_results_option(config: Item | None, value: str | None) -> Item | None:
    """The functionConfig with its ``results`` option set to ``value`` (a command-line flag wins over
    the file), or a ConfigMap holding only that option when there was none."""
    return config if value is None else with_option(config, "results", value)

"""The rules' framework, after upstream Trainer's ``pkg/runtime/framework`` (``interface.go``: one
interface per extension point; ``plugins/registry.go``: each plugin registered once): a ``Rule``
declares the stages it runs in, what it runs over (``scope``), what it reads and what it reports;
``run`` applies a stage's rules in registry order; ``Memo.remember`` (``pipeline/memo.py``) keeps a
stage's result under a key built from the declared reads alone, so that adding a rule never means
editing a cache key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from ..values.records import Record
from ..values.violations import Violation

if TYPE_CHECKING:
    from ..resolve.context import TrainJobContext

# What a rule is applied to: the TrainJob once, each patched replicated job (``JobPatchSite``), each
# ContainerPatch (``ContainerSite``), or each container's effective resources (``Effective``); in
# the index stage, each runtime of the bundle (``RuntimeEntry``); in the policy stage, each container
# of the pods the policy sees (``pod-container``: a replicated job and its container, from
# ``rules/policy_pods.py``, whose rule runs first).
Scope = Literal["trainjob", "job-site", "container-site", "effective", "runtime", "pod-container"]

R = TypeVar("R")


class Stage(Record):
    """A step of the pipeline (``stages.py``), whose rules run together. ``when``: what it runs on,
    for docs/rules.md. ``shareable``: whether a result may serve every TrainJob of the same shape (what
    its rules read, less where: field paths and manager names); None: a result is reused only for an
    equal key."""

    __slots__ = ("name", "shareable", "when")

    def __init__(self, name: str, when: str, shareable: Callable[[Any], bool] | None = None) -> None:
        self.name: Final = name
        self.when: Final = when
        self.shareable: Final = shareable


class Read(Record):
    """One thing a rule reads, as a memo key: ``key`` says it exactly; ``shape`` leaves out where it
    is (paths, manager names), for results that name no place."""

    __slots__ = ("key", "name", "shape")

    def __init__(
        self,
        name: str,
        key: Callable[[TrainJobContext, Any], Hashable],
        shape: Callable[[TrainJobContext, Any], Hashable] | None = None,
    ) -> None:
        self.name: Final = name
        self.key: Final = key
        self.shape: Final = key if shape is None else shape


class Rule(Record):
    """One check. ``check(context, subject)`` returns its findings; the context is the TrainJob's
    ``TrainJobContext`` (the ``Bundle`` for a ``runtime`` rule), the subject what ``scope`` names (the
    context itself for ``trainjob``). ``reads`` must name everything ``check`` reads besides the
    subject: the memo keys on it (tests/test_memo.py renders with and without the memo)."""

    __slots__ = ("check", "name", "reads", "reports", "scope", "stages")

    def __init__(
        self,
        name: str,
        stages: tuple[Stage, ...],
        scope: Scope,
        reads: tuple[Read, ...],
        reports: str,
        check: Callable[[Any, Any], list[Violation]],
    ) -> None:
        self.name: Final = name
        self.stages: Final = stages
        self.scope: Final = scope
        self.reads: Final = reads
        self.reports: Final = reports  # what it finds, for docs/rules.md
        self.check: Final = check

    def findings(self, context: Any, subject: Any) -> list[Violation]:
        """``check``'s findings, each naming this rule (the result's ``tags: {rule: ...}``)."""
        return self.named(self.check(context, subject))

    def named(self, found: list[Violation]) -> list[Violation]:
        """``found``, each naming this rule (most checks find nothing: nothing is copied then)."""
        return [v.made_by(self.name) for v in found] if found else found


def reads_of(rules: Iterable[Rule], *more: Read) -> tuple[Read, ...]:
    """Every read the rules declare (and ``more``), once each, in order."""
    out: list[Read] = []
    for read in [*(r for rule in rules for r in rule.reads), *more]:
        if read not in out:
            out.append(read)
    return tuple(out)


def key_of(reads: Sequence[Read], context: TrainJobContext, subject: Any = None) -> tuple[Hashable, ...]:
    return tuple(read.key(context, subject) for read in reads)


def shape_of(reads: Sequence[Read], context: TrainJobContext, subject: Any = None) -> tuple[Hashable, ...]:
    return tuple(read.shape(context, subject) for read in reads)


def subjects(scope: Scope, context: TrainJobContext) -> Sequence[Any]:
    if scope == "job-site":
        return context.job_sites
    if scope == "container-site":
        return context.sites
    if scope == "pod-container":
        assert context.policy is not None, "a pod-container rule runs after rules/policy_pods.py"
        return context.policy.containers  # type: ignore[no-any-return]
    return [context]


def run(rules: Sequence[Rule], context: TrainJobContext) -> list[Violation]:
    """The rules' findings in registry order; consecutive rules of one scope go subject by subject
    (a ContainerPatch's findings together, then the next one's)."""
    out: list[Violation] = []
    start = 0
    while start < len(rules):
        scope = rules[start].scope
        stop = start
        while stop < len(rules) and rules[stop].scope == scope:
            stop += 1
        group = rules[start:stop]
        for subject in subjects(scope, context):
            for rule in group:
                found = rule.check(context, subject)
                if found:
                    out += rule.named(found)
        start = stop
    return out


def stops_at_error(rules: Sequence[Rule], context: TrainJobContext) -> list[Violation]:
    """The rules' findings in registry order, up to the first rule that reports an error."""
    out: list[Violation] = []
    for rule in rules:
        found = rule.named(rule.check(context, context))
        out += found
        if any(v.severity == "error" for v in found):
            break
    return out

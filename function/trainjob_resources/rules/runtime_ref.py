"""A TrainJob's ``spec.runtimeRef`` resolved against the bundle: the runtime it names, or why it
cannot be used (``resolve``), and the findings about it (the rule ``runtime-ref``); the ref that follows
the name kustomize gave its runtime (``follows_rename``, ``rename_ref``).

The runtimes of Trainer's own group and kinds only (``pkg/webhooks/trainjob_webhook.go``: 'unsupported
runtime'); a TrainingRuntime in the TrainJob's namespace (``pkg/runtime/core/trainingruntime.go``
looks it up there). A runtime renamed by kustomize (``namePrefix``, ``nameSuffix``) is found by the
names it had (``bundle.previous_names``): kustomize fixes name references only after every
transformer ran, this function included. A runtime found but unusable (it cannot be read, or has
container resources the API server refuses, ``bundle.runtime_resource_violations``) is an error
for a TrainJob that would derive from it.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode

from ..krm.resource_list import Item
from ..resolve.bundle import Bundle, Resolution, RuntimeEntry, path_of
from ..resolve.context import TrainJobContext
from ..trainer.api import CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND, RUNTIME_KINDS, TRAINER_GROUP
from ..trainer.trainjob_view import RuntimeRefView
from ..values.keys import LOCAL_CONFIG, NAME_PREFIXES, NAME_SUFFIXES, PREVIOUS_NAMES
from ..values.violations import Severity, Violation
from ..yamltext import yamlnodes as yn
from .framework import Rule
from .stages import RESOLVE

# How a team supplies a runtime the platform installs in the cluster (the same words everywhere).
SUPPLY_RUNTIME = (
    "add it to the kustomization or package; for a runtime installed in the cluster, add a copy annotated "
    'config.kubernetes.io/local-config: "true" (read, never emitted), or pass one to '
    "`trainjob-resources render` or `explain` with --runtimes PATH"
)


def resolve(
    bundle: Bundle,
    ref: RuntimeRefView,
    namespace: str,
    overrides: bool = True,
    file: str | None = None,
    referrer: Item | None = None,
) -> Resolution:
    """The runtime a TrainJob in ``namespace`` names, or why it cannot be used. A TrainJob without
    ``overrides`` (no resources in its patches) needs its runtime for nothing but checks: when the
    runtime is not in the bundle the violation is an info (the cluster may well have it). A runtime
    of another API group is a warning either way: the caller reports the resources its patches set
    (the rule ``foreign-runtime-resources``). ``file``: the file the TrainJob was read from, if known;
    ``referrer``: the TrainJob's item (kustomize's record of its own renames)."""
    group = ref.api_group or TRAINER_GROUP
    kind = ref.kind or CLUSTER_RUNTIME_KIND
    if group != TRAINER_GROUP:
        # Left alone for a Trainer that knows such a runtime; v2.3.0's webhook knows only its own two.
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.apiGroup",
                f"runtimeRef names apiGroup {group!r}, not {TRAINER_GROUP!r}: left unchanged (Trainer v2.3.0's "
                f"TrainJob webhook knows only the runtimes of {TRAINER_GROUP} and refuses it: 'unsupported "
                "runtime', pkg/webhooks/trainjob_webhook.go)",
                severity="warning",
                current_value=group,
            ),
            foreign=group,
        )
    if kind not in RUNTIME_KINDS:
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.kind",
                f"runtimeRef.kind must be {CLUSTER_RUNTIME_KIND} or {NAMESPACED_RUNTIME_KIND}",
                current_value=kind,
            ),
        )
    where = "" if kind == CLUSTER_RUNTIME_KIND else namespace
    entry = bundle.runtimes.get((kind, where, ref.name))
    if entry is not None and entry.renamed_copy:
        # The cluster has that runtime under its own name: a ref to the copy's new name names nothing there.
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.name",
                f"{kind} {ref.name!r} is the name kustomize gave a local-config copy (read, never emitted) of "
                f"{entry.display}, which the cluster has as {entry.cluster_name!r}: set runtimeRef.name: "
                f"{entry.cluster_name}",
                current_value=ref.name,
                proposed_value=entry.cluster_name,
            ),
        )
    if entry is not None:
        return Resolution(entry)
    renamed = bundle.renamed((kind, where, ref.name))
    if len(renamed) == 1:
        foreign = _renamed_elsewhere(renamed[0], namespace, file, referrer)
        if foreign is not None:
            return Resolution(None, Violation("spec.runtimeRef.name", foreign, current_value=ref.name))
        return Resolution(renamed[0], renamed=True)
    if renamed:
        names = ", ".join(repr(e.item.name) for e in renamed)
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.name",
                f"{kind} {ref.name!r} was renamed by kustomize to several runtimes ({names}): "
                "set runtimeRef.name to the one this TrainJob uses",
                current_value=ref.name,
            ),
        )
    if kind == NAMESPACED_RUNTIME_KIND:
        elsewhere = sorted(ns for (k, ns, n) in bundle.usable() if k == kind and n == ref.name)
        if elsewhere:
            return Resolution(
                None,
                Violation(
                    "spec.runtimeRef.name",
                    f"TrainingRuntime {ref.name!r} is in namespace {', '.join(repr(n) for n in elsewhere)}, "
                    f"but a TrainingRuntime must be in the TrainJob's namespace {namespace or '(none)'!r}",
                    "error" if overrides else "warning",
                    current_value=ref.name,
                ),
            )
    other = NAMESPACED_RUNTIME_KIND if kind == CLUSTER_RUNTIME_KIND else CLUSTER_RUNTIME_KIND
    hints = ""
    if any(k == other and n == ref.name for (k, _, n) in bundle.usable()):
        hints += f" A {other} of that name exists: set runtimeRef.kind: {other}."
    close = _close_name(bundle, kind, where, ref.name)
    if close is not None:
        hints += f" Did you mean {close!r}?"
    scope = "" if kind == CLUSTER_RUNTIME_KIND else f" in namespace {namespace or '(none)'!r}"
    missing = f"{kind} {ref.name!r}{scope} is not in the bundle"
    if not overrides:
        # A near miss is most likely a typo the cluster would reject too: say so louder than an info.
        severity: Severity = "warning" if close is not None else "info"
        message = (
            f"{missing}.{hints} The TrainJob sets no resources, so it is passed through unchanged, but its "
            f"runtimePatches could not be checked against the runtime (to check them, {SUPPLY_RUNTIME})"
        )
        violation = Violation("spec.runtimeRef.name", message, severity, ref.name, close)
        return Resolution(None, violation, absent=True)
    message = (
        f"{missing}, and the TrainJob's runtimePatches set resources, which need the runtime to be "
        f"validated and materialized.{hints} To supply it, {SUPPLY_RUNTIME}"
    )
    return Resolution(None, Violation("spec.runtimeRef.name", message, "error", ref.name, close), absent=True)


def follows_rename(context: TrainJobContext) -> bool:
    """Whether the ref takes the name kustomize gave its runtime. A local-config runtime is a reference
    copy, never emitted: the cluster has it under the name the ref already says (kustomize's
    previousNames), so the ref keeps that name."""
    resolution = context.resolution
    assert resolution is not None and resolution.entry is not None
    return resolution.renamed and resolution.entry.item.annotation(LOCAL_CONFIG) != "true"


def rename_ref(work: MappingNode, raw: Any, name: str) -> Any:
    """Point the TrainJob's runtimeRef at the name kustomize gave its runtime; ``raw`` with that
    name (what provenance records as the ref written), leaving the item's own value alone."""
    ref = yn.get_path(work, "spec", "runtimeRef")
    assert isinstance(ref, MappingNode)
    yn.set_key(ref, "name", yn.str_node(name))
    spec = raw["spec"]
    return {**raw, "spec": {**spec, "runtimeRef": {**spec["runtimeRef"], "name": name}}}


def _renamed_elsewhere(entry: RuntimeEntry, namespace: str, file: str | None, referrer: Item | None) -> str | None:
    """Why a TrainJob must not follow ``entry``'s previousNames, or None. kustomize renames the
    objects of one build, which reach a function as one stream (api/internal/plugins/fnplugin:
    the ResMap as one document stream, no file of its own per object); a previousNames that leads
    from a TrainJob of one file, or namespace, to a runtime of another was written by hand (kpt
    never renames: it passes each file's objects with their path). Where the stream says no file,
    the rename is followed only where kustomize's own record ties it to the TrainJob (``_same_rename``).
    render's own renames are believed wherever the objects came from (``Item.renamed_by_build``: set
    from its own build only)."""
    item = entry.item
    if item.renamed_by_build:
        return None
    here = path_of(item)
    runtime_namespace = item.namespace
    claim = f"{entry.display} says it was renamed from this name (annotation {PREVIOUS_NAMES[0]}"
    if file is not None and here is not None and file != here:
        why = f"is in {here!r} and the TrainJob in {file!r}"
    elif runtime_namespace and runtime_namespace != namespace:
        why = f"is in namespace {runtime_namespace!r} and the TrainJob in {namespace or '(none)'!r}"
    elif (file is None or here is None) and not _same_rename(item, referrer):
        return (
            f"{claim}), but nothing ties that rename to this TrainJob: the objects come without their files, and "
            f"the TrainJob does not carry the runtime's name prefixes and suffixes ({NAME_PREFIXES[0]}, "
            f"{NAME_SUFFIXES[0]}), as kustomize records them on both when one kustomization's namePrefix or "
            "nameSuffix renames both, so this TrainJob is not re-pointed to it. If kustomize renamed the runtime "
            "this TrainJob uses, set runtimeRef.name to the runtime's name after kustomize, or put the TrainJob in "
            "the kustomization that renames it; otherwise remove the annotation (kustomize did not write it)"
        )
    else:
        return None
    return (
        f"{claim} or its older spelling), but it {why}: kustomize renames within one build, so this TrainJob is "
        "not re-pointed to it. Set runtimeRef.name to the runtime this TrainJob uses, or remove the annotation if "
        "kustomize did not write it"
    )


def _same_rename(runtime: Item, referrer: Item | None) -> bool:
    """Whether kustomize's record ties a renamed runtime to the TrainJob, as its name reference fixer picks
    among renamed candidates (api/filters/nameref/nameref.go ``selectReferral``, ``prefixSuffixEquals``;
    api/resource/resource.go ``PrefixesSuffixesEquals`` with allowEmpty false): the name prefixes and
    suffixes recorded on both end the same way. kustomize records them (``AddNamePrefix``,
    ``AddNameSuffix``) on every object a namePrefix or nameSuffix renames; a runtime with none recorded
    was renamed otherwise (a patch, or by hand) and ties to nothing."""
    if referrer is None:
        return False
    mine = [_listed(runtime, keys) for keys in (NAME_PREFIXES, NAME_SUFFIXES)]
    if not any(mine):
        return False
    theirs = [_listed(referrer, keys) for keys in (NAME_PREFIXES, NAME_SUFFIXES)]
    return all(_same_ending(a, b) for a, b in zip(mine, theirs, strict=True))


def _listed(item: Item, keys: tuple[str, ...]) -> list[str]:
    """A comma-separated build annotation, in its newer spelling else its older one."""
    value = next((v for v in map(item.annotation, keys) if v is not None), None)
    return value.split(",") if value is not None else []


def _same_ending(a: list[str], b: list[str]) -> bool:
    """kustomize's ``SameEndingSubSlice`` (api/internal/utils/stringslice.go): one list ends as the other;
    an empty list matches only an empty one."""
    shorter, longer = sorted((a, b), key=len)
    return longer[len(longer) - len(shorter) :] == shorter if shorter else not longer


def _close_name(bundle: Bundle, kind: str, namespace: str, name: str) -> str | None:
    """The runtime name of ``kind`` (in ``namespace``) closest to a misspelled ``name``, if one is close."""
    import difflib  # only for an error (as in models): not worth its import on every render

    names = sorted({n for (k, ns, n) in bundle.usable() if k == kind and ns == namespace})
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return close[0] if close else None


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    resolution = context.resolution
    assert resolution is not None
    if resolution.violation is not None:
        return [resolution.violation]
    entry = resolution.entry
    assert entry is not None
    if entry.model is None:
        return [Violation("spec.runtimeRef", f"{entry.display} cannot be read (see its errors)")]
    if entry.invalid and context.overrides and not context.native:
        return [
            Violation(
                "spec.runtimeRef",
                f"{entry.display} has container resources the API server refuses (see its errors): "
                "no runtime is derived from it",
            )
        ]
    return []


RULE = Rule(
    "runtime-ref",
    (RESOLVE,),
    "trainjob",
    (),
    "a runtimeRef naming no usable runtime of the bundle (missing, misspelt, in another namespace or API group, "
    "renamed, unreadable)",
    _check,
)

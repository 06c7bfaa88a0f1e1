"""``trainjob-resources explain``: what every TrainJob in the inputs will really request.

Reads the same inputs as ``render`` (files, folders, kustomizations, ``-`` for stdin), runs the
function on them for its errors and warnings (stderr), and prints, for every TrainJob that
renders, its pods and their effective requests and limits (stdout). Exit status: 0, or 1 when the
function reports any error (the namespace or platform policy included) or the inputs cannot be
read; 2 on bad usage.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from ..krm.resource_list import Item, ResourceList, ResourceRef, Result
    from ..options.config import FunctionConfig
    from ..report.explain import LeftOut, TrainJobPods
    from ..report.explain_bound import ExplainBound
    from ..resolve.bundle import Bundle

DESCRIPTION = """\
Explain what each TrainJob will ask the scheduler for: per replicated job the number of pods
and, per container (initContainer, sidecar, container), the effective requests and limits and
where each value came from (runtime, patch <manager>, resourcesPerNode, defaulted from limits,
LimitRange <namespace>/<name>); each pod by Kubernetes' formula for init containers and native
sidecars; and the TrainJob's total (pods x pod). Errors and warnings of the function, including
the namespace's LimitRanges and ResourceQuotas and the functionConfig's policy, go to stderr.

PATH is read as by `trainjob-resources render` (the same options: --config, --config-from-env,
--runtimes, --root): a file, a folder (with a kustomization: built first, nothing it names is run)
or - for stdin; default: the current folder.

With --against DIR (the base branch's checkout), the same inputs are read from DIR too and the
output is a report of the change: per TrainJob added, removed, changed or unchanged, with old -> new
pods, requests and limits, and a total per namespace (markdown for a pull-request comment).
"""


@dataclass
class Explained:
    output: str
    messages: list[str]
    failed: bool


def main(args: list[str]) -> int:
    parser = _parser()
    options = parser.parse_args(args)
    if options.against is not None and "-" in options.paths:
        parser.error("--against reads the same PATHs from the base's folder: standard input (-) has none")
    if options.against is not None and not os.path.isdir(options.against):
        parser.error(f"--against {options.against}: no such folder (the base branch's checkout)")
    from .guard import guarded
    from .render import RenderError

    return guarded("trainjob-resources explain", lambda: _explain(options), ((RenderError, 1),))


def _explain(options: argparse.Namespace) -> int:
    if options.against is not None:
        return _explain_change(options)
    resource_list, platform = _load(options)
    explained = explain_resource_list(resource_list, options.format, platform)
    for line in explained.messages:
        sys.stderr.write(line + "\n")
    sys.stdout.buffer.write(explained.output.encode())
    sys.stdout.flush()
    return 1 if explained.failed else 0


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="trainjob-resources explain",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .formats import choices
    from .render import add_input_options

    add_input_options(parser)
    parser.add_argument("--format", choices=choices("explain"), default="table", help="output format (default: table)")
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help="namespace of TrainJobs, TrainingRuntimes, LimitRanges and ResourceQuotas that name none",
    )
    parser.add_argument(
        "--against",
        metavar="DIR",
        help="compare with the same inputs read from DIR (the base branch's checkout): each relative PATH, "
        "--config, --runtimes and --root is read there as here; prints per TrainJob added, removed, changed "
        "or unchanged with old -> new requests and limits, and a total per namespace",
    )
    return parser


def _explain_change(options: argparse.Namespace) -> int:
    """``--against DIR``: the change's inputs explained here and the base's in DIR, compared. Exit as
    without it (1 when the change's inputs have an error, or either side passed explain's output
    bound); the base's other errors only leave its TrainJobs out of the comparison, each named. The
    report carries the same errors (its status line, its refusals)."""
    from ..report import change_report
    from ..report.change_review import Review
    from ..report.explain_bound import ExplainBound

    base_dir = options.against
    resource_list, platform = _load(options)
    bound = ExplainBound()  # both sides together
    after = explain_views(resource_list, platform, bound, runtime_refs=True)
    before = _base_views(options, base_dir, bound)
    for line in after.messages:
        sys.stderr.write(line + "\n")
    errors = [r for r in after.results if r.severity == "error"]
    if before.bound_error is not None:  # the bound, filled on the base's side, fails the run too
        errors.append(before.bound_error)
    refs_before, refs_after = before.runtime_refs, after.runtime_refs
    runtime_refs = {key: (refs_before.get(key), refs_after.get(key)) for key in {*refs_before, *refs_after}}
    review = Review(errors, runtime_refs)
    report = change_report.compare(before.shown, after.shown, before.left_out, after.left_out, review)
    from .formats import renderer

    sys.stdout.buffer.write(renderer("explain --against", options.format)(report).encode())
    sys.stdout.flush()
    return 1 if after.failed or bound.full else 0


def _base_views(options: argparse.Namespace, base_dir: str, bound: ExplainBound) -> Views:
    """The base's TrainJobs, read from ``base_dir`` as the change's are read from here: each PATH and
    ``--root`` inside the base, ``--config`` and ``--runtimes`` from here (the platform's, the same for
    both sides; a relative one is read from the current folder, not the base's). PATHs the base
    does not have (an application the change adds) are read as empty; its messages go to stderr,
    each line marked as the base's."""
    from .render import RenderError

    here = os.getcwd()
    platform_files = {
        "config": os.path.abspath(options.config) if options.config else None,
        "runtimes": [raw if raw == "-" else os.path.abspath(raw) for raw in options.runtimes],
        # the base's own copy of a relative --runtimes path is the platform's too: not read as an input
        "left_to_platform": [raw for raw in options.runtimes if raw != "-" and not os.path.isabs(raw)],
    }
    os.chdir(base_dir)
    try:
        paths = [p for p in (options.paths or ["."]) if os.path.lexists(p)]
        missing = [p for p in (options.paths or ["."]) if p not in paths]
        for path in missing:
            sys.stderr.write(f"base {base_dir}: {path}: not there, read as no TrainJobs\n")
        if not paths:
            return Views([], [], [])
        import argparse

        base_options = argparse.Namespace(**{**vars(options), "paths": paths, **platform_files})
        try:
            resource_list, platform = _load(base_options, f"base {base_dir}: ")
        except RenderError as error:
            raise RenderError(f"base {base_dir}: {error}") from error
    finally:
        os.chdir(here)
    views = explain_views(resource_list, platform, bound, runtime_refs=True)
    for line in views.messages:
        sys.stderr.write(f"base {base_dir}: {line}\n")
    return views


def _load(options: argparse.Namespace, mark: str = "") -> tuple[ResourceList, frozenset[int]]:
    """The inputs as ``render`` reads them, as one ResourceList, and the ids of the runtimes the
    platform supplied (--runtimes); skipped entries noted on stderr (each line after ``mark``)."""
    from .render import RenderError, load_for

    resource_list, inputs = load_for(options, os.environ)
    for line in inputs.notes:
        sys.stderr.write(mark + line + "\n")
    if inputs.errors:
        raise RenderError("\n".join(inputs.errors))
    return resource_list, inputs.platform_ids


@dataclass
class Views:
    """The TrainJobs explained, those left out and why, the function's results, the runtimeRef each
    TrainJob renders with (where asked for) and the error of explain's output bound, where these
    inputs filled it."""

    shown: list[TrainJobPods]
    left_out: list[LeftOut]
    results: list[Result]
    runtime_refs: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    bound_error: Result | None = None

    @property
    def messages(self) -> list[str]:
        return [r.display() for r in self.results if r.severity != "info"]

    @property
    def failed(self) -> bool:
        return any(r.severity == "error" for r in self.results)


def explain_resource_list(
    resource_list: ResourceList, output_format: str = "table", platform: frozenset[int] = frozenset()
) -> Explained:
    """Pure: the rendered explanation, the function's error and warning lines, and whether any is an error."""
    from .formats import renderer

    views = explain_views(resource_list, platform)
    output = renderer("explain", output_format)(views.shown, views.left_out)
    return Explained(output, views.messages, views.failed)


def explain_views(
    resource_list: ResourceList,
    platform: frozenset[int] = frozenset(),
    bound: ExplainBound | None = None,
    runtime_refs: bool = False,
) -> Views:
    """Pure. A TrainJob is explained when it renders but for the policy's own findings: one with any
    other error (a bad patch, a missing runtime) is left out, and its errors say why. ``bound``: what
    the explanations may hold (``report/explain_bound.py``; shared by both sides of ``--against``);
    past it, the rest are left out, with an error. ``runtime_refs``: also read the runtimeRef each
    TrainJob renders with (``--against``).
    """
    from ..krm.resource_list import Result as KrmResult
    from ..options.config import ConfigError, parse_config
    from ..process import process
    from ..report import explain
    from ..report.explain_bound import BOUND_REASON
    from ..report.explain_bound import ExplainBound as Bound

    bound_error = None
    if bound is None:
        bound = Bound()

    config_item = resource_list.function_config
    try:
        config = parse_config(config_item.value() if config_item is not None else None)
    except ConfigError:
        config = None
    views: list[tuple[ResourceRef, TrainJobPods, set[tuple[str, str, str | None]]]] = []
    from ..resolve.bundle import index

    bundle = index(resource_list.items, platform)
    refs = [item.ref for item in bundle.trainjobs]
    over: list[ResourceRef] = []  # the TrainJobs not explained for the bound, in order
    if config is not None:
        for item in bundle.trainjobs:
            if bound.full:  # none after the first refused: not even explained, so never held
                over.append(item.ref)
                continue
            explained = explain_item(item, bundle, config)
            if explained is None:
                continue
            if not bound.admit(explained[0]):
                over.append(item.ref)
                continue
            views.append((item.ref, *explained))
    results = list(process(resource_list, platform).results)
    shown = [(ref, view) for ref, view, own in views if not any(_foreign_error(r, ref, own) for r in results)]
    left_out = explain.left_out([ref for ref, _ in shown], refs, results)
    if over:
        refused = {(ref.namespace, ref.name) for ref in over}
        left_out = [
            explain.LeftOut(t.name, t.namespace, BOUND_REASON) if (t.namespace, t.name) in refused else t
            for t in left_out
        ]
        first = f"{over[0].namespace}/{over[0].name}" if over[0].namespace else over[0].name
        bound_error = KrmResult(bound.message(first, len(over)), "error")
        results.append(bound_error)
    rendered: dict[tuple[str, str], tuple[str, str]] = {}
    if runtime_refs:
        from ..report.change_review import rendered_runtime_refs

        rendered = rendered_runtime_refs(resource_list.items, results)
    return Views([view for _, view in shown], left_out, results, rendered, bound_error)


def _foreign_error(result: Result, ref: ResourceRef, own: set[tuple[str, str, str | None]]) -> bool:
    """An error about this TrainJob that the policy did not report (the TrainJob does not render)."""
    return (
        result.severity == "error"
        and result.resource_ref == ref
        and (result.message, result.severity, result.field_path) not in own
    )


def explain_item(
    item: Item, bundle: Bundle, config: FunctionConfig
) -> tuple[TrainJobPods, set[tuple[str, str, str | None]]] | None:
    """The TrainJob's pods as the policy sees them, and the policy's findings; None if it cannot be read."""
    from yaml.nodes import MappingNode

    from ..derive.provenance import ProvenanceError, restore
    from ..kube.quantity import QuantityError
    from ..pipeline.memo import Memo
    from ..resolve.bundle import path_of
    from ..resolve.context import TrainJobContext
    from ..rules.policy_stage import assess
    from ..rules.runtime_ref import resolve
    from ..trainer.sites import container_sites
    from ..trainer.topology import topology
    from ..trainer.trainjob_view import parse_trainjob, resources_per_node
    from ..yamltext import yamlnodes as yn

    work = yn.deep_copy(item.node)
    assert isinstance(work, MappingNode)
    try:
        restored = restore(work)
    except ProvenanceError:
        return None
    raw = yn.to_python(work) if restored else item.value()
    trainjob, _ = parse_trainjob(raw)
    if trainjob is None:
        return None
    entry = resolve(bundle, trainjob.spec.runtime_ref, item.namespace, True, path_of(item), item).entry
    if entry is None or entry.model is None:
        return None
    context = TrainJobContext(item, trainjob, raw, bundle, config, Memo())
    context.sites = list(container_sites(trainjob, raw))
    context.resolved(entry, resources_per_node(trainjob), topology(entry.model, trainjob, context.sites))
    try:
        view, found = assess(context)
    except QuantityError:
        return None  # the function's warning says why
    own: set[tuple[str, str, str | None]] = {(v.message, v.severity, v.path or None) for v in found}
    return view, own

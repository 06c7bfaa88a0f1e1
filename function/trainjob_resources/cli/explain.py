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
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from ..checks.bundle import Bundle
    from ..checks.config import FunctionConfig
    from ..checks.explain import TrainJobPods
    from ..krm.resource_list import Item, ResourceList, ResourceRef, Result

FORMATS = ("table", "json", "markdown")

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
"""


@dataclass
class Explained:
    output: str
    messages: list[str]
    failed: bool


def main(args: list[str]) -> int:
    options = _parser().parse_args(args)
    from .guard import guarded
    from .render import RenderError

    return guarded("trainjob-resources explain", lambda: _explain(options), ((RenderError, 1),))


def _explain(options: argparse.Namespace) -> int:
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
    from .render import add_input_options

    add_input_options(parser)
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help="namespace of TrainJobs, TrainingRuntimes, LimitRanges and ResourceQuotas that name none",
    )
    return parser


def _load(options: argparse.Namespace) -> tuple[ResourceList, frozenset[int]]:
    """The inputs as ``render`` reads them, as one ResourceList, and the ids of the runtimes the
    platform supplied (--runtimes); skipped entries noted on stderr."""
    from .render import RenderError, load_for

    resource_list, inputs = load_for(options, os.environ)
    for line in inputs.notes:
        sys.stderr.write(line + "\n")
    if inputs.errors:
        raise RenderError("\n".join(inputs.errors))
    return resource_list, inputs.platform_ids


def explain_resource_list(
    resource_list: ResourceList, output_format: str = "table", platform: frozenset[int] = frozenset()
) -> Explained:
    """Pure: the rendered explanation, the function's error and warning lines, and whether any is an error.

    A TrainJob is explained when it renders but for the policy's own findings: one with any
    other error (a bad patch, a missing runtime) is left out, and its errors say why.
    """
    from ..checks import explain
    from ..checks.config import ConfigError, parse_config
    from ..process import process

    config_item = resource_list.function_config
    try:
        config = parse_config(config_item.value() if config_item is not None else None)
    except ConfigError:
        config = None
    views: list[tuple[ResourceRef, TrainJobPods, set[tuple[str, str, str | None]]]] = []
    from ..checks.bundle import index

    bundle = index(resource_list.items, platform)
    refs = [item.ref for item in bundle.trainjobs]
    if config is not None:
        for item in bundle.trainjobs:
            explained = explain_item(item, bundle, config)
            if explained is not None:
                views.append((item.ref, *explained))
    results = process(resource_list, platform).results
    shown = [(ref, view) for ref, view, own in views if not any(_foreign_error(r, ref, own) for r in results)]
    left_out = explain.left_out([ref for ref, _ in shown], refs, results)
    renderers = {"table": explain.render_table, "json": explain.render_json, "markdown": explain.render_markdown}
    messages = [r.display() for r in results if r.severity != "info"]
    output = renderers[output_format]([view for _, view in shown], left_out)
    return Explained(output, messages, any(r.severity == "error" for r in results))


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

    from ..checks.bundle import path_of, resolve
    from ..checks.context import TrainJobContext
    from ..checks.memo import Memo
    from ..checks.policy import assess
    from ..checks.provenance import ProvenanceError, restore
    from ..kube.quantity import QuantityError
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
    entry = resolve(bundle, trainjob.spec.runtime_ref, item.namespace, True, path_of(item)).entry
    if entry is None or entry.model is None:
        return None
    context = TrainJobContext(item, trainjob, raw, bundle, config, Memo())
    context.sites = list(container_sites(trainjob, raw))
    context.resolved(entry, resources_per_node(trainjob), topology(entry.model, trainjob, context.sites, config.mode))
    try:
        assessment = assess(context)
    except QuantityError:
        return None  # the function's warning says why
    own: set[tuple[str, str, str | None]] = {(v.message, v.severity, v.path or None) for v in assessment.violations}
    return assessment.view, own

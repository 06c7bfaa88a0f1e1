"""``trainjob-resources check``: what a sync of the render will do to the live cluster, before it runs.

Renders PATH exactly as ``render`` does (``-``: a stream on stdin, rendered or not: rendering a
rendered stream gives it back), reads the live cluster through the Kubernetes API (the
``kubernetes`` client, imported by this command only: ``live.cluster``) and prints findings. Exit
status: 0 without an error finding, 1 with one (or when the render fails), 2 when the cluster
cannot be reached or read, or on bad usage: one line on stderr.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from ..krm.resource_list import Item, ResourceList
    from ..live.cluster import Cluster
    from ..live.findings import Live
    from ..live.kueue_release import KueueRelease
    from ..live.report import Finding
    from ..live.trainer_release import Followed
    from ..options.config import FunctionConfig
    from ..repo.collected import Inputs
    from ..report.explain import TrainJobPods
    from ..resolve.bundle import Bundle

DESCRIPTION = """\
Check what syncing the render would do to the live cluster, before it runs: what the API server or
Trainer's webhook would refuse, what a pruning deployer would break, and what would not take effect.

PATH is read and rendered as by `trainjob-resources render` (the same options), or - for a stream
on stdin (a rendered one re-renders to itself). Without --runtimes, the runtimes the render names
and does not have are read from the cluster (the installed ones); with it, each copy is compared
with the installed runtime (runtime-drift).

Findings (docs/check.md): runtime-ref-immutable, runtime-patches-immutable, runtime-missing,
runtime-in-use, running-suspended (a queued TrainJob Kueue started that the sync suspends and Kueue
cannot restart), quota-exceeded, queue-exceeded (Kueue), forbidden, mode where a native render keeps
fields the TrainJob CRD lacks, runtime-drift where the installed runtime decides otherwise than the copy
the render read, trainer-version where the cluster's Trainer release gives pods other resources than the
render's (errors); runtime-drift, trainer-version, runtime-in-use on Trainer v2.2, running-suspended
where Kueue restarts it (warnings); snapshot-kept, mode where the CRD serves KEP-2782's resources and
the render materializes, kueue-release (the Kueue release whose rule sized the queued pod sets) (infos).

Reads with list calls per kind and namespace. Access (forbidden) is asked with
SelfSubjectAccessReviews, as --as USER when given (impersonation: the kubeconfig's identity must
be allowed to impersonate that user); everything else is read as the kubeconfig's identity.
"""

EPILOG = """\
Exit status: 0 without an error finding, 1 with one or when the render fails (its errors on
stderr, as render prints them), 2 when the cluster cannot be reached or read, or on bad usage.
"""


def main(args: list[str]) -> int:
    options = _parser().parse_args(args)
    from ..live.cluster import Unreachable
    from .guard import guarded
    from .render import RenderError

    return guarded("trainjob-resources check", lambda: _check(options), ((Unreachable, 2), (RenderError, 1)))


def _parser() -> argparse.ArgumentParser:
    from .formats import choices
    from .render import input_parser

    parser = input_parser("check", DESCRIPTION, EPILOG, "default: the kubeconfig context's")
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="default: the first file of $KUBECONFIG, ~/.kube/config, in-cluster"
    )
    parser.add_argument("--context", metavar="NAME", help="the kubeconfig context (default: its current one)")
    parser.add_argument(
        "--as",
        dest="as_user",
        metavar="USER",
        help="the identity that syncs, for the access reviews (e.g. system:serviceaccount:argocd:"
        "argocd-application-controller)",
    )
    parser.add_argument(
        "--trainer-namespace",
        metavar="NS",
        default="kubeflow-system",
        help="where Trainer is installed: its release is read from ConfigMap kubeflow-trainer-public there "
        "(default: kubeflow-system)",
    )
    parser.add_argument(
        "--kueue-version",
        metavar="VERSION",
        type=_kueue_version,
        help="the Kueue release the cluster runs (e.g. v0.19.2), which decides how queued pod sets are sized "
        "(default: read from the cluster)",
    )
    parser.add_argument("--format", choices=choices("check"), default="table", help="output format (default: table)")
    parser.add_argument(
        "--request-timeout", metavar="SECONDS", type=float, default=30.0, help="per API request (default: 30)"
    )
    return parser


def _check(options: argparse.Namespace) -> int:
    from ..live import findings, gather, gather_jobsets, gather_pruned, native_fields, report
    from ..live.cluster import Cluster
    from ..live.in_use import runtime_in_use
    from ..live.patches_immutable import runtime_patches_immutable
    from ..live.quota_constraints import unspecified
    from ..live.running_kept import running_kept
    from ..live.running_suspended import running_suspended
    from ..repo.collected import PATH_KEY
    from ..trainer.api import RUNTIME_KINDS, TRAINER_GROUP, TRAINJOB_KIND
    from ..values.keys import LOCAL_CONFIG
    from .check_copies import Drifted, drift_errors, hidden_errors, on_installed, views_on_installed
    from .render import load_for

    cluster = Cluster(options.kubeconfig, options.context, options.as_user, options.request_timeout)
    try:
        if options.namespace is None:  # as render: Argo CD's application namespace, else the context's
            from_env = os.environ.get("ARGOCD_APP_NAMESPACE") if options.config_from_env else None
            options.namespace = from_env or cluster.default_namespace
        resource_list, inputs = load_for(options, os.environ)
        for line in inputs.notes:
            sys.stderr.write(line + "\n")
        if inputs.errors:
            return _render_failed(inputs.errors)
        written = [_applied(item) for item in resource_list.items]
        for item in resource_list.items:
            item.kept = item.kind == TRAINJOB_KIND  # read again as rendered (objects), not composed again
        live = gather.read(cluster, written, options.trainer_namespace)
        if options.kueue_version is not None:
            live.kueue.release = options.kueue_version
        gather_pruned.read(cluster, written, live)
        trainer = _trainer_version(resource_list, live.trainer[0])
        added: set[int] = set()
        if not options.runtimes:
            have = {findings.runtime_key(v) for v in written if findings.is_trainer(v, RUNTIME_KINDS)}
            for runtime in gather.platform_runtimes(live, written, have):
                item = _item(runtime, LOCAL_CONFIG)
                resource_list.items.append(item)
                inputs.platform.append(item)
                added.add(id(item))
        drifted = Drifted(resource_list, inputs.platform_ids, live)
        views = _views(cluster, resource_list, inputs.platform_ids, written, live)
        installed_views = _views(cluster, drifted.resource_list, drifted.platform, written, live) if drifted else {}
        followed = _followed(cluster, resource_list, inputs.platform_ids, written, live, trainer)
        from ..process import process

        result = process(resource_list, inputs.platform_ids)
        from ..live.absent_runtime import on_cluster

        errors = [r.display() for r in on_cluster(result.results, result.items, live) if r.severity == "error"]
        for line in (r.display() for r in result.results if r.severity == "warning"):
            sys.stderr.write(line + "\n")
        if errors:
            return _render_failed(errors)
        drift: list[Finding] = []
        if drifted:  # the TrainJobs that run on an installed runtime the render read a copy of
            running = on_installed(result, drifted)
            views = views_on_installed(views, installed_views, running)
            installed_result = process(drifted.resource_list, drifted.platform)
            drift = drift_errors(drifted, hidden_errors(result, installed_result, running), result)
        objects = [_applied(item) for item in result.items if item.annotation(LOCAL_CONFIG) != "true"]
        copies = [
            (item.value(), item.annotation(PATH_KEY) or "--runtimes")
            for item in result.items
            if item.annotation(LOCAL_CONFIG) == "true"
            and id(item) not in added
            and item.group == TRAINER_GROUP
            and item.kind in RUNTIME_KINDS
        ]
        render = findings.Render(objects, copies, views, _kueue_views(cluster, resource_list, inputs, written, live))
        gather_jobsets.read(cluster, render, live)
        found = findings.find(render, live, followed)
        found += runtime_patches_immutable(render, live) + runtime_in_use(render, live) + running_kept(render, live)
        found += unspecified(render, live) + running_suspended(render, live)
        refused = {f.object for f in drift}
        found = [*drift, *(f for f in found if not (f.code == "runtime-drift" and f.object in refused))]
        found += native_fields.mode(_mode(resource_list), live.crds.get(findings.crd_name(TRAINJOB_KIND)), objects)
        found += findings.forbidden(
            gather.denials(cluster, objects, live, cluster.default_namespace), _identity(cluster)
        )
    finally:
        cluster.close()
    shown = report.ordered(found)
    from .formats import renderer

    sys.stdout.write(renderer("check", options.format)(shown))
    sys.stdout.flush()
    errors_found = sum(f.severity == "error" for f in shown)
    sys.stderr.write(
        f"trainjob-resources check: {len(shown)} finding{'s' if len(shown) != 1 else ''}, {errors_found} "
        f"error{'s' if errors_found != 1 else ''} ({cluster.server}, {cluster.source})\n"
    )
    return 1 if errors_found else 0


def _kueue_version(value: str) -> KueueRelease:
    import argparse

    from ..live.kueue_release import pinned

    try:
        return pinned(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _trainer_version(resource_list: ResourceList, cluster_release: str | None) -> tuple[str, bool]:
    """The ``trainerVersion`` the render follows, and whether the config set it: the config's, else
    the cluster's release where the function supports it (written into the functionConfig), else the
    newest."""
    from ..options.options import CONFIG_KIND, with_option
    from ..trainer.releases import NEWEST, trainer_version_of

    config = resource_list.function_config
    value = config.value() if config is not None else None
    section = value.get("spec" if value.get("kind") == CONFIG_KIND else "data") if isinstance(value, dict) else None
    configured = section.get("trainerVersion") if isinstance(section, dict) else None
    if isinstance(configured, str) and configured:
        return configured, True
    cluster = trainer_version_of(cluster_release)
    if cluster is None:
        return NEWEST, False
    resource_list.function_config = with_option(config, "trainerVersion", cluster)
    return cluster, False


def _mode(resource_list: ResourceList) -> str:
    """The render's mode (the config's; the default where the config does not parse: the render reports it)."""
    config = _config(resource_list)
    return config.mode if config is not None else "materialize"


def _identity(cluster: Cluster) -> str:
    return cluster.as_user if cluster.as_user else "the kubeconfig's identity"


def _render_failed(errors: list[str]) -> int:
    for line in errors:
        sys.stderr.write(line + "\n")
    plural = "s" if len(errors) != 1 else ""
    sys.stderr.write(f"trainjob-resources check: the render fails ({len(errors)} error{plural}); nothing checked\n")
    return 1


def _item(value: dict[str, Any], local_config: str) -> Item:
    from ..krm.resource_list import Item
    from ..yamltext import yamlnodes as yn

    item = Item(yn.from_python(value))
    item.set_annotation(local_config, "true")
    return item


def _applied(item: Item) -> dict[str, Any]:
    """What the findings read of an object: all of Trainer's, the identity of the rest."""
    from ..trainer.api import TRAINER_GROUP

    if item.group == TRAINER_GROUP:
        value: dict[str, Any] = item.value()
        return value
    metadata = {"name": item.name, **({"namespace": item.namespace} if item.namespace else {})}
    return {"apiVersion": item.api_version, "kind": item.kind, "metadata": metadata}


def _views(
    cluster: Cluster, resource_list: ResourceList, platform: frozenset[int], written: list[Any], live: Live
) -> dict[str, TrainJobPods]:
    """The pods of each TrainJob a quota or a Kueue queue may have to hold (in a namespace with a
    ResourceQuota, or labelled with a queue where Kueue is served; not live, or live and suspended), as
    ``explain`` counts them, with the namespace's live LimitRanges and the RuntimeClass overhead the
    cluster adds."""
    from ..live import findings
    from ..live.queues import queue_name
    from ..trainer.api import TRAINJOB_KIND

    quoted = {findings.namespace_of(q) for q in live.quotas}
    queued = bool(live.kueue.version)
    running = {f"{findings.namespace_of(t)}/{findings.name_of(t)}" for t in live.trainjobs if not findings.suspended(t)}
    wanted = {
        key
        for v in written
        if findings.is_trainer(v, (TRAINJOB_KIND,))
        and (findings.namespace_of(v) in quoted or (queued and queue_name(v) is not None))
        and (key := f"{findings.namespace_of(v)}/{findings.name_of(v)}") not in running
    }
    if not wanted:
        return {}
    config = _config(resource_list)
    if config is None:
        return {}  # the render reports it
    from ..live.gather import runtime_classes
    from ..live.overhead import class_names, with_overhead

    spaces = {key.split("/", 1)[0] for key in wanted}
    views = _explained(_bundle(cluster, resource_list, platform, written, spaces), config, wanted)
    return with_overhead(views, runtime_classes(cluster, class_names(views)))


def _kueue_views(
    cluster: Cluster, resource_list: ResourceList, inputs: Inputs, written: list[Any], live: Live
) -> dict[str, TrainJobPods] | None:
    """The queued TrainJobs' pods under Trainer v2.3.0, where Kueue merges ``resourcesPerNode`` (v0.20 on:
    Trainer v2.3.0 in its go.mod) and the render follows a Trainer that replaces it (v2.2): Kueue sizes the
    pod sets with its own Trainer (live/kueue_release.py). None where the render's views are Kueue's."""
    from ..live import findings
    from ..live.queues import queue_name
    from ..trainer.api import TRAINJOB_KIND
    from ..trainer.releases import NEWEST, release

    config = _config(resource_list)
    kueue = live.kueue
    if not kueue.version or kueue.release.per_node_replaces or config is None:
        return None
    if not release(config.trainer_version).per_node_replaces:
        return None
    wanted = {
        f"{findings.namespace_of(v)}/{findings.name_of(v)}"
        for v in written
        if findings.is_trainer(v, (TRAINJOB_KIND,)) and queue_name(v) is not None
    }
    spaces = {key.split("/", 1)[0] for key in wanted}
    bundle = _bundle(cluster, resource_list, inputs.platform_ids, written, spaces)
    return _explained(bundle, config.model_copy(update={"trainer_version": NEWEST}), wanted)


def _config(resource_list: ResourceList) -> FunctionConfig | None:
    """The config ``check`` counts pods with: the render's, but the namespace's LimitRanges always fill in
    defaults (the API server's LimitRanger applies them whatever ``namespacePolicy`` says)."""
    from ..options.config import ConfigError, parse_config

    config_item = resource_list.function_config
    try:
        config = parse_config(config_item.value() if config_item is not None else None)
    except ConfigError:
        return None
    return config.model_copy(update={"namespace_policy": "warning"}) if config.namespace_policy == "off" else config


def _bundle(
    cluster: Cluster, resource_list: ResourceList, platform: frozenset[int], written: list[Any], spaces: set[str]
) -> Bundle:
    """The render's input with the live LimitRanges of ``spaces`` (the render's own LimitRanges win)."""
    from ..live import findings, gather
    from ..resolve.bundle import index
    from ..values.keys import LOCAL_CONFIG

    own = {(v.get("kind"), findings.namespace_of(v), findings.name_of(v)) for v in written}
    ranges = [
        _item(lr, LOCAL_CONFIG)
        for lr in gather.limit_ranges(cluster, spaces)
        if ("LimitRange", findings.namespace_of(lr), findings.name_of(lr)) not in own
    ]
    return index([*resource_list.items, *ranges], platform)


def _explained(bundle: Bundle, config: FunctionConfig, wanted: set[str] | None = None) -> dict[str, TrainJobPods]:
    """The pods of the bundle's TrainJobs (those of ``wanted``, by ``namespace/name``) as ``explain`` counts them."""
    from .explain import explain_item

    views: dict[str, TrainJobPods] = {}
    for item in bundle.trainjobs:
        key = f"{item.namespace}/{item.name}"
        explained = explain_item(item, bundle, config) if wanted is None or key in wanted else None
        if explained is not None:
            views[key] = explained[0]
    return views


def _followed(
    cluster: Cluster,
    resource_list: ResourceList,
    platform: frozenset[int],
    written: list[Any],
    live: Live,
    trainer: tuple[str, bool],
) -> Followed:
    """The release check followed, whether a config set it, and where the sync's render (which follows the
    config's release, else the default) gives a TrainJob's containers other resources than the cluster's
    release does: each TrainJob of the render explained under both."""
    from ..live import findings
    from ..live.trainer_release import Followed, differences, sync_release
    from ..trainer.api import TRAINJOB_KIND

    followed = Followed(*trainer)
    releases = sync_release(followed, live.trainer[0])
    config = _config(resource_list)
    if releases is None or config is None:
        return followed
    spaces = {findings.namespace_of(v) for v in written if findings.is_trainer(v, (TRAINJOB_KIND,))}
    bundle = _bundle(cluster, resource_list, platform, written, spaces)
    rendered, cluster_release = (
        _explained(bundle, config.model_copy(update={"trainer_version": version})) for version in releases
    )
    return Followed(*trainer, differences(rendered, cluster_release))

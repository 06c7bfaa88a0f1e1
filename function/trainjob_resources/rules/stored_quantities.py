"""The quantities of ``spec.trainer.resourcesPerNode`` written as the API server stores them, on a
TrainJob that keeps runtimePatches: upstream's TrainJob defaulting webhook (``pkg/webhooks/trainjob_webhook.go``)
stores each in Kubernetes' canonical form, and ``spec.trainer`` is immutable (``self == oldSelf``,
``pkg/apis/trainer/v1alpha1/trainjob_types.go``), so any other spelling fails every re-sync. In
materialize mode the pipeline writes them so (``respell``); this rule says what it wrote. Where
the function passes the TrainJob through, the ``crd`` rule warns instead."""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..kube.merge import MAPPINGS
from ..kube.quantity import QuantityError, parse_quantity
from ..resolve.context import Respelled, TrainJobContext
from ..trainer.effective import RESOURCES_PER_NODE_PATH
from ..values import fieldpath
from ..values.violations import Violation
from ..yamltext import yamlnodes as yn
from .framework import Rule
from .stages import REWRITE


def stored_spellings(per_node: Any) -> list[tuple[str, str, Any, str]]:
    """The quantities of ``spec.trainer.resourcesPerNode`` that a TrainJob with runtimePatches does
    not keep as written: (section, name, value as written, the string the API server stores).

    Upstream's TrainJob defaulting webhook (``pkg/webhooks/trainjob_webhook.go``), which sets each
    patch's ``time`` on create, answers with the object as Go encodes it: every Quantity as
    ``Quantity.String()``, Kubernetes' canonical form, a string (1 is "1", 1.5 and "1.5" are
    "1500m", "2048Mi" is "2Gi"; "1e3" stays). The next apply sends the spelling written again, and
    the CRD's rule on ``spec.trainer``, ``self == oldSelf``
    (``pkg/apis/trainer/v1alpha1/trainjob_types.go``), refuses the change: every re-sync fails.
    Without runtimePatches the webhook changes nothing and what was written is kept. All seen on the
    control plane (tests/test_cluster_admission.py, tests/cluster/test_stored_quantities.py). A value
    that is no quantity is left to the rules that refuse it."""
    out: list[tuple[str, str, Any, str]] = []
    if not isinstance(per_node, MAPPINGS):
        return out
    for section in ("limits", "requests"):
        values = per_node.get(section)
        for name, value in values.items() if isinstance(values, MAPPINGS) else ():
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                continue
            try:
                stored = parse_quantity(value).canonical()
            except QuantityError:
                continue
            if stored != value:
                out.append((section, str(name), value, stored))
    return out


def respell(node: MappingNode) -> list[Respelled]:
    """Write ``node``'s resourcesPerNode quantities as stored, when it keeps runtimePatches."""
    patches = yn.get_path(node, "spec", "runtimePatches")
    per_node = yn.get_path(node, "spec", "trainer", "resourcesPerNode")
    if not isinstance(patches, SequenceNode) or not patches.value or not isinstance(per_node, MappingNode):
        return []
    out: list[Respelled] = []
    for section, name, value, stored in stored_spellings(yn.to_python(per_node)):
        values = yn.get(per_node, section)
        assert isinstance(values, MappingNode)
        written = yn.get(values, name)
        shown = written.value if isinstance(written, ScalarNode) else value
        yn.set_key(values, name, yn.text_node(stored))
        out.append(Respelled(section, name, value, shown, stored))
    return out


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    return [
        Violation(
            fieldpath.child(f"{RESOURCES_PER_NODE_PATH}.{r.section}", r.name),
            f'{r.name}: {r.shown} written as "{r.stored}", the string the API server stores: upstream\'s TrainJob '
            "webhook, which timestamps runtimePatches, stores every quantity here in Kubernetes' canonical "
            "form, and spec.trainer is immutable (self == oldSelf, trainjob_types.go), so the spelling as "
            "written would fail every re-sync",
            "info",
            r.value,
            r.stored,
        )
        for r in context.respelled
    ]


RULE = Rule(
    "stored-quantities",
    (REWRITE,),
    "trainjob",
    (),
    "resourcesPerNode quantities the function wrote as the API server stores them",
    _check,
)

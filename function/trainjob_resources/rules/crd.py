"""What the function refuses of a TrainJob on its own, beside its CRD's schema and CEL rules (the
``trainjob-schema`` rule, ``trainer/crd_validate.py``, which checks those against the CRD itself).

Strategic-merge directives (``$patch``, ``$retainKeys``, ``$setElementOrder/...``,
``$deleteFromPrimitiveList/...``) anywhere the TrainJob keeps them. In a typed field the API server
validates the TrainJob against its schema, where a directive is an unknown field (or, in a map of
quantities such as ``resourcesPerNode.limits``, a value that fails the quantity pattern): it never
reaches upstream's merge. In a map of strings (``nodeSelector``, labels) it would reach
``mergeRuntimePatches`` and act there, which the function does not model. The one exception is the
function's own extension, ``$patch: replace`` inside ``limits`` or ``requests`` of a ContainerPatch's
``resources`` in ``materialize`` mode, which never reaches the cluster (see ``merge``). Also the
quantities of ``resourcesPerNode`` written in a spelling the API server does not store, and
``numNodes``/``numProcPerNode`` below 0 and 1.

Checked with or without the runtime.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..kube.merge import DIRECTIVE, MAPPINGS, REPLACE
from ..resolve.context import TrainJobContext
from ..values import fieldpath
from ..values.violations import Violation
from .framework import Rule
from .stages import RUNTIME_FREE, TRAINJOB
from .stored_quantities import stored_spellings


def crd_violations(
    trainjob: Mapping[str, Any],
    mode: str = "materialize",
    directives: bool = True,
    rewritten: bool = False,
) -> list[Violation]:
    """``trainjob``: plain data that ``models.parse_trainjob`` accepted. ``directives``: whether a key
    may start with ``$`` (False when the text it was read from has no ``$`` that could spell one).
    ``rewritten``: whether the function writes resourcesPerNode's quantities as the API server
    stores them (then it does not warn of them)."""
    spec = trainjob.get("spec") or {}
    out = _trainer(spec.get("trainer"))
    patches = spec.get("runtimePatches") or []
    if directives:
        for p, patch in enumerate(patches):
            out += _directives(patch, fieldpath.index("spec.runtimePatches", p), mode)
    if patches and not rewritten:
        out += _numeric_quantities(_get(spec, "trainer", "resourcesPerNode"))
    if not directives:
        return out
    per_node = _get(spec, "trainer", "resourcesPerNode")
    for at, key, _ in _directive_keys(per_node, "spec.trainer.resourcesPerNode"):
        out.append(_directive(at, key, "spec.trainer.resourcesPerNode is merged by upstream, not patched"))
    return out


def _trainer(trainer: Any) -> list[Violation]:
    """``numNodes`` at least 0 and ``numProcPerNode`` at least 1 (issue 32): the function's own check.
    Neither release's CRD declares a minimum for either, and the API server with Trainer's webhooks
    admits ``numNodes: -3`` and ``numProcPerNode: 0`` (a server-side dry-run create on v2.3.0's control
    plane), so the finding is about a TrainJob that cannot run, not one the cluster refuses."""
    if not isinstance(trainer, MAPPINGS):
        return []
    path = "spec.trainer"
    out: list[Violation] = []
    num_nodes = trainer.get("numNodes")
    if isinstance(num_nodes, int) and num_nodes < 0:
        out.append(
            Violation(f"{path}.numNodes", f"{num_nodes} should be greater than or equal to 0", current_value=num_nodes)
        )
    per_node = trainer.get("numProcPerNode")
    if isinstance(per_node, int) and per_node < 1:
        out.append(
            Violation(
                f"{path}.numProcPerNode",
                f"numProcPerNode {per_node} must be greater than or equal to 1",
                current_value=per_node,
            )
        )
    return out


def _numeric_quantities(per_node: Any) -> list[Violation]:
    """``stored_spellings``, said: where the function passes the TrainJob through (native mode, or
    its runtime is not in the bundle), it never changes what the user wrote; materializing, it
    writes them as stored (``process.py``)."""
    return [
        Violation(
            fieldpath.child(f"spec.trainer.resourcesPerNode.{section}", name),
            f'write this quantity as the string "{stored}" ({name}: "{stored}"): upstream\'s TrainJob webhook, '
            "which timestamps runtimePatches, stores every quantity here in Kubernetes' canonical form, a string, "
            "when the TrainJob is created, and spec.trainer is immutable "
            "(self == oldSelf, trainjob_types.go), so the API server refuses every later apply of any other "
            "spelling: the first sync works, every re-sync fails",
            severity="warning",
            current_value=value,
            proposed_value=stored,
        )
        for section, name, value, stored in stored_spellings(per_node)
    ]


def _directives(patch: Mapping[str, Any], path: str, mode: str) -> list[Violation]:
    out: list[Violation] = []
    for at, key, value in _directive_keys(patch, path):
        if mode == "materialize" and key == DIRECTIVE and value == REPLACE and _OWN_EXTENSION.fullmatch(at):
            continue
        out.append(_directive(at, key, "runtimePatches are applied from the TrainJob's typed fields"))
    return out


_OWN_EXTENSION = re.compile(r".*\.(initContainers|containers)\[\d+\]\.resources\.(limits|requests)")


def _has_directive(value: Any) -> bool:
    """Whether any map key below ``value`` starts with ``$`` (cheap: the common answer is no)."""
    if isinstance(value, dict):
        for key, child in value.items():
            if type(key) is str and key[:1] == "$":
                return True
            if isinstance(child, (dict, list)) and _has_directive(child):
                return True
        return False
    if isinstance(value, list):
        for child in value:
            if isinstance(child, (dict, list)) and _has_directive(child):
                return True
    return False


def _directive_keys(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path of the map, key, value) of every map key that starts with ``$``."""
    if not _has_directive(value):
        return
    if isinstance(value, MAPPINGS):
        for key, child in value.items():
            if isinstance(key, str) and key.startswith("$"):
                yield path, key, child
            else:
                yield from _directive_keys(child, fieldpath.child(path, str(key)))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _directive_keys(child, fieldpath.index(path, i))


def _directive(at: str, key: str, why: str) -> Violation:
    return Violation(
        fieldpath.child(at, key),
        f"strategic-merge directive {key!r} is not supported here: {why}, so the API server refuses or "
        "prunes it (or, in a map of strings, upstream's merge acts on it); write the values you want instead",
    )


def _get(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, MAPPINGS) else None
    return value


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    # A resolved TrainJob is written out by materialize mode, its quantities as the API server stores them.
    rewritten = context.entry is not None and not context.native
    return crd_violations(context.raw, context.config.mode, context.directives, rewritten)


RULE = Rule(
    "crd",
    (RUNTIME_FREE, TRAINJOB),
    "trainjob",
    (),  # reads the TrainJob as written: never remembered
    "strategic-merge directives, resourcesPerNode quantities not written as stored, numNodes below 0 and "
    "numProcPerNode below 1",
    _check,
)

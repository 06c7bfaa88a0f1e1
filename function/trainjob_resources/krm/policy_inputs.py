"""The objects the function reads to decide (``POLICY_INPUTS``: TrainJobs, runtimes, the namespace
policy, its config): each must read the same in PyYAML and in go-yaml (no merge key, ``merge_problem``),
and none may hide in another object's items (``list_items``); ``item_problem`` says what is wrong with
one item of the list."""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..yamltext import textedit
from ..yamltext import yamlnodes as yn
from . import trust

MAX_ITEMS = 100_000


# The objects the function reads to decide (TrainJobs, runtimes, the namespace policy, its config):
# each must read the same in PyYAML and in go-yaml, and none may hide in another object's items.
POLICY_INPUTS = frozenset(
    {
        ("trainer.kubeflow.org", "TrainJob"),
        ("trainer.kubeflow.org", "TrainingRuntime"),
        ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
        ("", "LimitRange"),
        ("", "ResourceQuota"),
        ("fn.trainjob-resources.io", "TrainJobResources"),
    }
)


def is_policy_input(node: Node, api_version: str | None = None, kind: str | None = None) -> bool:
    api_version = yn.scalar(yn.get(node, "apiVersion")) if api_version is None else api_version
    kind = yn.scalar(yn.get(node, "kind")) if kind is None else kind
    group = (api_version or "").rpartition("/")[0] if "/" in (api_version or "") else ""
    return (group, kind or "") in POLICY_INPUTS


def merge_problem(node: Node) -> tuple[str, str] | None:
    """A YAML merge key in an object the function decides on: refused (PyYAML and go-yaml disagree)."""
    path = yn.merge_key_path(node)
    if path is None:
        return None
    return (
        f"has a YAML merge key (<<) at {path}: kubectl and Argo CD (go-yaml) let a later merge override "
        "an explicit key, PyYAML does not, so the policy would be checked on another object than the "
        "cluster gets; write the fields out",
        path,
    )


def list_items(node: Node) -> tuple[list[Node], str | None]:
    """The objects kubectl applies for one document: an object with an ``items`` field (any kind) is
    a list to kubectl's and Argo CD's decoders (apimachinery's unstructured JSON scheme checks for
    ``items``, not the kind), and only its items are applied. An item with neither apiVersion nor
    kind gets the list's from kubectl (kind minus ``List``) and none from Argo CD: refused."""
    items = yn.get(node, "items")
    if items is None:
        return [node], None
    if yn.is_null(items):
        return [], None
    if not isinstance(items, SequenceNode):
        return [], "has an items field that is not a list (kubectl reads any object with items as a list)"
    kind = yn.scalar(yn.get(node, "kind")) or ""
    for entry in items.value:
        if isinstance(entry, MappingNode) and yn.get(entry, "kind") is None and yn.get(entry, "apiVersion") is None:
            return [], (
                f"has an item with neither apiVersion nor kind: kubectl would apply it as a "
                f"{kind.removesuffix('List') or '(no kind)'} (the list's kind without List), Argo CD as nothing; "
                "give it its apiVersion and kind"
            )
    return list(items.value), None


def _has_merge_key(collections: list[Node]) -> bool:
    """Whether a tree's collections (every one, as read) hold a merge key: one pass, no paths built."""
    merge = yn.MERGE_TAG
    return any(key.tag == merge for node in collections if node.__class__ is MappingNode for key, _ in node.value)


def _may_merge(text: str | None) -> bool:
    """Whether a node composed from ``text`` may hold a merge key: one is written ``<<``, or tagged
    ``merge`` (``!!merge``, ``!<tag:yaml.org,2002:merge>``), or through ``%`` (an escape in a tag,
    a directive's handle)."""
    return text is None or "<<" in text or "merge" in text or "%" in text


def item_problem(node: Node, line: int = 0, text: str | None = None) -> tuple[str, str | None] | None:
    """What makes an item unusable (it is still passed through), with the field at fault.
    ``line`` is where the item's text starts in the whole input; ``text``, when known, is the
    text ``node`` was composed from."""
    if not isinstance(node, MappingNode):
        return f"is not a mapping (line {node.start_mark.line + line + 1}); it is passed through unchanged", None
    collections = textedit.collections_of(node)
    if textedit.may_repeat_a_key(node):
        try:
            yn.check_duplicate_keys(node, collections)
        except yn.DuplicateKeyError as err:
            return f"duplicate mapping key {err.key!r} (line {err.line + line})", err.path
    if is_policy_input(node) and (collections is None or (_may_merge(text) and _has_merge_key(collections))):
        found = merge_problem(node)
        if found is not None:
            return found
    if yn.get(node, "items") is not None:
        entries, problem = list_items(node)
        if problem is None:
            hidden = [e for e in entries if isinstance(e, MappingNode) and is_policy_input(e)]
            if hidden:
                what = yn.scalar(yn.get(hidden[0], "kind"))
                problem = (
                    f"has an items list holding a {what}: kubectl and Argo CD apply the items of any object with "
                    "an items field, and the function checks only objects of their own; list it as an item"
                )
        if problem is not None:
            return problem, "items"
    if not yn.scalar(yn.get(node, "kind")) or not yn.scalar(yn.get(node, "apiVersion")):
        return "has no apiVersion or kind; it is passed through unchanged", None
    annotations = yn.get_path(node, "metadata", "annotations")
    if isinstance(annotations, MappingNode):
        return trust.forged_mark(k.value for k, _ in annotations.value if isinstance(k, ScalarNode))
    return None

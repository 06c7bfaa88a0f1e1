"""Objects ``render`` reads from a file, held as the text of their document.

A folder of 20,000 objects composed into node trees and held to the end costs several times the
KRM function's memory on the same objects, which keeps untouched items as text (``krm.Item.settle``).
A ``DocumentItem`` does the same for a document of a file: its tree is composed from the document's
text when it is needed, with the path and index annotations reading adds, and dropped when the item
is settled unchanged; what ``render`` prints for it (the tree serialized without those annotations)
is written once, when it is settled, so printing does not compose it again. An item that is edited
keeps its tree, as a plain ``Item`` does.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node

from ..krm.resource_list import Item
from ..values.keys import INDEX_ANNOTATIONS, PATH_ANNOTATIONS
from ..yamltext import yamlnodes as yn
from .kustomize import PREVIOUS_KINDS, PREVIOUS_NAMES

PATH_KEY, INDEX_KEY = PATH_ANNOTATIONS[0], INDEX_ANNOTATIONS[0]
# The annotations render adds (the path and index) or kustomize leaves (see kustomize.restore),
# taken out before printing.
RENDER_KEYS = (PATH_KEY, INDEX_KEY, PREVIOUS_NAMES, PREVIOUS_KINDS)

# Kinds whose trees stay after reading: what the bundle index reads again (as krm.read keeps them).
_KEPT_GROUPS = {"trainer.kubeflow.org"}
_KEPT_CORE_KINDS = {"LimitRange", "ResourceQuota"}
_TRAINJOB = ("trainer.kubeflow.org", "TrainJob")


class DocumentItem(Item):
    """An object that is a whole document of a file (not a list's item, not JSON), composed from
    ``document`` on demand. ``created_metadata``/``created_annotations``: it had no such map before
    reading added the annotations (what ``Inputs.created_*`` say of other items, by node id)."""

    __slots__ = ("created_annotations", "created_metadata", "document", "marks", "replaced", "shown")

    def __init__(self, document: str, node: MappingNode, first_line: int, marks: tuple[tuple[str, str], ...]) -> None:
        super().__init__(node)
        self.dirty = False
        self.origin = first_line
        self.document = document
        self.marks = marks
        metadata = yn.get(node, "metadata")
        self.created_metadata = not isinstance(metadata, MappingNode)
        self.created_annotations = not isinstance(yn.get(metadata, "annotations"), MappingNode)
        self.replaced = False  # its node was set anew (the function's rewrite), not composed from the document
        self.shown: str | None = None  # what render prints for it, once settled unchanged
        _annotate(node, marks)

    @property
    def node(self) -> Node:
        if self._node is None:
            node = yn.compose(self.document)
            assert isinstance(node, MappingNode), "it composed to a mapping when it was read"
            _annotate(node, self.marks)
            self._node = node
        return self._node

    @node.setter
    def node(self, node: Node) -> None:
        self._node = node
        self.replaced = True
        self.touched()

    def touched(self) -> None:
        super().touched()
        self.shown = None

    def settle(self) -> None:
        """Done with it (the function settles each TrainJob once it has read or rewritten it): its
        tree goes once what render prints for it is written. Unchanged, it is composed again from
        the document if needed. Changed, and left with annotations of its own, it is composed
        again from what is printed, with render's annotations added back (lines of its file are
        then no longer known); else it keeps its tree, as a plain Item does (and as ``kept`` asks)."""
        if self._node is None or self.kept:
            return
        self._fields()
        node = self._node
        assert isinstance(node, MappingNode)
        if self.dirty:
            annotations = yn.get(yn.get(node, "metadata"), "annotations")
            if not isinstance(annotations, MappingNode) or all(
                yn.scalar(key) in RENDER_KEYS for key, _ in annotations.value
            ):
                return  # taking render's annotations out may take the map out too: that waits for printing
            strip(node, created_annotations=False, created_metadata=False, built=False)
            self.shown = self.document = yn.serialize(node)
            self.origin = None
            self.created_annotations = self.created_metadata = self.replaced = self.dirty = False
        elif self.shown is None and strip(node, self.created_annotations, self.created_metadata, built=None):
            self.shown = yn.serialize(node)
        self.drop()

    def drop(self) -> None:
        """Its tree dropped if it is the document's as read (it may have lost render's annotations)."""
        if not self.dirty:
            self._node = None
            self._value = None

    def printed(self) -> str | None:
        """What render prints for it, if written already and still true."""
        return None if self.dirty else self.shown


def read_document(document: str, node: MappingNode, first_line: int, path: str, index: int) -> DocumentItem:
    """The object ``node``, composed from ``document`` (a whole document of the file at ``path``),
    annotated with its path and index; settled at once unless the bundle index reads it again."""
    item = DocumentItem(document, node, first_line, ((PATH_KEY, path), (INDEX_KEY, str(index))))
    kind = (item.group, item.kind)
    if kind == _TRAINJOB:
        item.drop()  # composed again when the function reads it, one at a time, and settled then
    elif not (kind[0] in _KEPT_GROUPS or (kind[0] == "" and kind[1] in _KEPT_CORE_KINDS)):
        item.settle()
    return item


def strip(node: MappingNode, created_annotations: bool, created_metadata: bool, built: bool | None) -> bool:
    """``node`` without render's annotations, and without the annotations (metadata) map reading
    created for them. An annotations map left empty also goes when the object is ``built`` by
    kustomize (which never prints one); when that is not known (None) and matters, False and
    ``node`` as it was."""
    metadata = yn.get(node, "metadata")
    annotations = yn.get(metadata, "annotations")
    if isinstance(annotations, MappingNode):
        emptied = all(yn.scalar(key) in RENDER_KEYS for key, _ in annotations.value)
        if emptied and not created_annotations and built is None:
            return False
        for key in RENDER_KEYS:
            yn.delete_key(annotations, key)
        if not annotations.value and (created_annotations or built):
            assert isinstance(metadata, MappingNode)
            yn.delete_key(metadata, "annotations")
    if isinstance(metadata, MappingNode) and not metadata.value and created_metadata:
        yn.delete_key(node, "metadata")
    return True


def _annotate(node: MappingNode, marks: tuple[tuple[str, str], ...]) -> None:
    """As ``Item.set_annotation`` writes each, without counting as an edit."""
    for key, value in marks:
        metadata = yn.ensure_map(node, "metadata")
        yn.set_key(yn.ensure_map(metadata, "annotations"), key, yn.str_node(value))

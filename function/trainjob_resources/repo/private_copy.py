"""The private copy kustomize builds: the folders of a build plan's kustomizations (``kustomize``)
copied outside the repository, holding only what the screening let through (regular files inside
the root, read once within the load's budget, and links between them), this function's entries
taken out of the kustomizations and the build's marks put on (``relabel``)."""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from .kustomize import BuildPlan, Kustomization
from .relabel import marked, relabel_kustomization, relabeled
from .sources import MAX_FOLDER_DEPTH, Reader, RenderError, shown, unreadable

if TYPE_CHECKING:
    pass

ORIGIN_OPTION = "originAnnotations"


def mirror(found: BuildPlan, reader: Reader, into: str) -> str:
    """Copies the folders of the plan's kustomizations into ``into`` (at their paths relative to the
    root), this function's entries taken out; returns the folder to build."""
    copier = _Copier(found, reader, into)
    for real_dir in found.kustomizations:
        copier.copy(real_dir, found.kustomizations[real_dir].label_dir, 0)
    return copier.target(found.top)


class _Copier:
    def __init__(self, found: BuildPlan, reader: Reader, into: str) -> None:
        self.plan = found
        self.reader = reader
        self.into = into
        self.done: set[str] = set()

    def target(self, real: str) -> str:
        relative = os.path.relpath(real, self.plan.root.real)
        return os.path.normpath(os.path.join(self.into, relative))

    def copy(self, real_dir: str, label: str, depth: int) -> None:
        if real_dir in self.done:
            return
        self.done.add(real_dir)
        if depth > MAX_FOLDER_DEPTH:
            raise RenderError(f"{shown(label)}: folders nested more than {MAX_FOLDER_DEPTH} deep")
        os.makedirs(self.target(real_dir), exist_ok=True)
        entries = self.reader.entries(real_dir, label)
        kustomization = self.plan.kustomizations.get(real_dir)
        for entry in entries:
            if entry.name == ".git":
                continue
            path, entry_label = os.path.join(real_dir, entry.name), os.path.join(label, entry.name)
            if kustomization is not None and entry.name == kustomization.file_name:
                with open(self.target(path), "w", encoding="utf-8") as out:
                    out.write(self.rewritten(kustomization))
            elif entry.is_symlink():
                real = self.reader.resolve(path, entry_label, self.plan.root)
                try:
                    os.stat(real)
                except OSError as err:
                    if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                        raise unreadable(entry_label, err) from None
                    self.reader.notes.append(f"note: {shown(entry_label)}: skipped: a broken symbolic link")
                    continue
                os.symlink(self.target(real), self.target(path))
            elif entry.is_dir(follow_symlinks=False):
                self.copy(path, entry_label, depth + 1)
            elif entry.is_file(follow_symlinks=False):
                data = self.reader.kept.pop(path, None) or self.reader.read_bytes(path, entry_label)
                marks = self.plan.marks
                if data is not None and path in self.plan.resource_files:
                    data = marked(data, marks)
                elif data is not None and path in self.plan.patch_files and (b"local-config" in data or b"\\" in data):
                    text = data.decode("utf-8", "surrogateescape")
                    data = relabeled(text, marks.local).encode("utf-8", "surrogateescape")
                if data is not None:
                    with open(self.target(path), "wb") as out:
                        out.write(data)
            else:
                self.reader.notes.append(f"note: {shown(entry_label)}: skipped: not a regular file")

    def rewritten(self, kustomization: Kustomization) -> str:
        """The kustomization without this function's entries; the one built also asks kustomize
        to annotate each object with the file it came from, so that messages can name it."""
        from yaml.nodes import MappingNode, SequenceNode

        from ..yamltext import yamlnodes as yn

        node = yn.deep_copy(kustomization.node)
        assert isinstance(node, MappingNode)
        relabel_kustomization(node, self.plan.marks.local)
        for key, indexes in kustomization.drop.items():
            value = yn.get(node, key)
            assert isinstance(value, SequenceNode)
            value.value = [entry for index, entry in enumerate(value.value) if index not in indexes]
            if not value.value:
                yn.delete_key(node, key)
        if kustomization.real_dir == self.plan.top:
            metadata = yn.get(node, "buildMetadata")
            asked = [yn.scalar(n) for n in metadata.value] if isinstance(metadata, SequenceNode) else []
            self.plan.user_origins = ORIGIN_OPTION in asked
            if not self.plan.user_origins:
                kept = [n for n in metadata.value] if isinstance(metadata, SequenceNode) else []
                yn.set_key(node, "buildMetadata", SequenceNode(yn.SEQ_TAG, [*kept, yn.str_node(ORIGIN_OPTION)]))
        return yn.serialize(node)

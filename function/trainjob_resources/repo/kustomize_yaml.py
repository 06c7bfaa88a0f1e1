"""kustomize's error for a file that is not YAML, placed in the user's file. kustomize (kyaml, on
go-yaml v3) says ``MalformedYAMLError: yaml: line N: PROBLEM in File: NAME``, with N counted within the
file's document, not the file, and for some errors the line before the problem's
(sigs.k8s.io/kustomize/kyaml/kio/byteio_reader.go reads a stream document by document; go-yaml's
``yaml: line`` is its context mark's where it has one): in a second document N is wrong by the
lines before it. The file, found from kustomize's chain of ``accumulating resources from '...'``,
is read again here as ``render`` reads a file, and the message names its path and its own line.
"""

from __future__ import annotations

import os
import re

from ..yamltext import yamlnodes as yn
from ..yamltext.documents import split_documents

_MALFORMED = re.compile(r"MalformedYAMLError: yaml: line \d+: .*? in File: (?P<file>[^\s\"]+)")
_FROM = re.compile(r"accumulating resources from '([^']+)'")
MAX_READ = 8 * 1024 * 1024  # bytes of the file read again (kustomize read it whole, within the render's budget)


def placed(reason: str, directory: str, tree: str, label: str) -> str:
    """``reason`` with kustomize's malformed-YAML error replaced by this package's, on the file's own
    lines (``directory``: the kustomization built, in the private copy ``tree`` of the repository
    root whose label is ``label``); as it was where the file cannot be found there."""
    match = _MALFORMED.search(reason)
    if match is None:
        return reason
    here = directory
    for step in _FROM.findall(reason[: match.start()]):
        candidate = os.path.normpath(os.path.join(here, step))
        if os.path.isdir(candidate):
            here = candidate
    path = os.path.normpath(os.path.join(here, match["file"]))
    if not path.startswith(tree + os.sep) or not os.path.isfile(path) or os.path.islink(path):
        return reason
    with open(path, "rb") as handle:
        data = handle.read(MAX_READ + 1)
    if len(data) > MAX_READ:
        return reason
    error = _first_error(data.decode(errors="replace"))
    if error is None:
        return reason
    shown = os.path.normpath(os.path.join(label, os.path.relpath(path, tree)))
    return f"{reason[: match.start()]}{shown}: {error}{reason[match.end() :]}"


def _first_error(text: str) -> str | None:
    """The first document's error, on the file's lines (``render``'s message for a file it reads)."""
    for start, chunk in split_documents(text):
        try:
            yn.compose(chunk)
        except yn.YamlInputError as err:
            return str(err.moved(start))
    return None

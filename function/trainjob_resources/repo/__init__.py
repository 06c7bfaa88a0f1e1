"""A tenant's repository, for ``render`` and ``explain`` only: reads bounded and kept inside the
root (``sources``), kustomizations screened (``kustomize``), copied privately (``private_copy``) with
the build's marks (``relabel``) and built by plain kustomize as a sandboxed child (``sandbox``), and the
manifests and configs read into one ResourceList (``inputs``), objects held as the text of their
document (``textitems``).

May import: every layer below the CLI (``process`` included).
"""

"""A tenant's repository, for ``render`` and ``explain`` only: reads bounded and kept inside the
root (``sources``), kustomizations screened and built by plain kustomize (``kustomize``), and the
manifests and configs read into one ResourceList (``inputs``).

May import: every layer below the CLI (``process`` included).
"""

"""A tenant's repository, for ``render`` and ``explain`` only: reads bounded and kept inside the
root (``sources``), kustomizations screened (``kustomize``), copied privately (``private_copy``) with
the build's marks (``relabel``) and built by plain kustomize as a sandboxed child (``sandbox``; a
file it finds malformed named on its own lines, ``kustomize_yaml``), and the manifests read into one
ResourceList (``inputs``; what reading collects, ``collected``), this function's configs combined
with the platform's (``configs``), objects held as the text of their document (``textitems``) and
the objects printed once the function has run (``printing``).

May import: every layer below the CLI (``process`` included).
"""

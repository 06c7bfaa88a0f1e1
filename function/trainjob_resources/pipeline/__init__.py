"""The stages run: what one render computes once and reuses, each stage's findings kept under the key
of what its rules read (``memo``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``,
``resolve``, ``report``, ``rules``.
"""

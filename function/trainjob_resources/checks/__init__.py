"""What one render computes once (``memo``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``,
``resolve``, ``report``, ``rules``.
"""

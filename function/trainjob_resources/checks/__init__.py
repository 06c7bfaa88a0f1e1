"""The function's checks: the rules every TrainJob is checked by (``rules/``: the namespace and
platform policy among them) and what one render computes once (``memo``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``,
``resolve``, ``report``.
"""

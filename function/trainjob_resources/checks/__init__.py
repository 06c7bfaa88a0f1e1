"""The function's checks and products: the rules every TrainJob is checked by (``rules/``: the
namespace and platform policy among them), what one render computes once (``memo``), what a
TrainJob really requests (``explain``, reported by ``explain_report``, bounded by
``explain_bound``) and what a change does to it (``change_report``), and the run's summary
(``reporting``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``,
``resolve``.
"""

"""The function's checks and products: its options (``config``), the bundle indexed and each
runtimeRef resolved (``bundle``), the rules every TrainJob is checked by (``rules/``), the namespace and
platform policy (``policy``) and what a TrainJob really requests (``explain``), the derived runtimes
(``materialize``) and the records they carry (``provenance``), and the run's summary (``reporting``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``.
"""

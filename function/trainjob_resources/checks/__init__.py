"""The function's checks and products: its options (``config``, read by the pipeline as ``options``;
the platform's and the tenant's layers combined by ``config_layers``),
the bundle indexed and each runtimeRef resolved (``bundle``), one TrainJob as its rules see it
(``context``), the rules every TrainJob is checked by (``rules/``: the namespace and platform policy
among them), what one render computes once (``memo``), what a TrainJob really requests (``explain``,
reported by ``explain_report``, bounded by ``explain_bound``) and what a change does to it (``change_report``; what a
reviewer must act on: ``change_review``),
the derived runtimes (``plan``, ``materialize``, bounded by ``derived_bound``), a move of the trainer's patches to
resourcesPerNode (``moving``), the records they carry (``provenance``), and the run's summary (``reporting``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``.
"""

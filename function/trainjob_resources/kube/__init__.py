"""Kubernetes' own rules, as the API server and the scheduler apply them: quantities
(``quantity``), what a container's resources may say (``resource_rules``), a pod's effective
resources (``podmath``) and the strategic merge of resource requirements (``merge``).

May import: ``values``.
"""

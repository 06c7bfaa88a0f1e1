"""Namespace policy (LimitRange, ResourceQuota) and the functionConfig's platform policy.

Called once per valid TrainJob, after patch validation, in every mode.
"""

from __future__ import annotations

from .bundle import Bundle, RuntimeEntry
from .config import FunctionConfig
from .models import TrainJob
from .sites import ContainerSite
from .violations import Violation


def evaluate(
    trainjob: TrainJob,
    namespace: str,
    entry: RuntimeEntry,
    sites: list[ContainerSite],
    bundle: Bundle,
    config: FunctionConfig,
) -> list[Violation]:
    """Violations (errors, warnings) and the per-TrainJob resource summary (info)."""
    return []

"""A ResourceList's functionConfig read: its options (the defaults, without importing pydantic, when
there is none), or, when it is invalid, None and each of its errors a result."""

from __future__ import annotations

from ..krm.resource_list import Field, ResourceList, Result
from .options import DEFAULTS, Options


def options_of(resource_list: ResourceList) -> Options | None:
    config_item = resource_list.function_config
    if config_item is None:
        return DEFAULTS
    from .config import ConfigError, parse_config

    try:
        return parse_config(config_item.value())
    except ConfigError as err:
        for v in err.violations:
            resource_list.results.append(
                Result(
                    f"functionConfig: {v.message}",
                    "error",
                    config_item.ref,
                    Field(v.path, v.current_value) if v.path is not None else None,
                    config_item.file,
                )
            )
        return None

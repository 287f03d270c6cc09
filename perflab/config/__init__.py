"""Typed, validated parameters for everything perflab runs (see :mod:`perflab.config.params`)."""

from .params import (BACKENDS, GC_FLAGS, LOAD_TOOLS, MODES, PROFILE_EVENTS, QUEUE_KINDS, WAL_POLICIES,  # noqa: F401
                     BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ProfileParams, ServerConfig)

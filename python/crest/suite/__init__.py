"""Suites: the ladders of mixes, their timing and workload, as published by the seed reports; data only, never runs load.

Load one with `load_suite("veritest-static")` or `load_suite("my-suite.toml")`;
`suite.mixes("quick")` gives the load points with a profile's timing.
"""

from crest.suite.errors import SuiteError
from crest.suite.loader import (
    GROUPS,
    builtin_names,
    builtin_suites,
    load_file,
    load_group,
    load_suite,
    parse_suite,
    parse_toml,
)
from crest.suite.models import TARGET_ROLES, Ladder, Mix, MixOverride, RequestClass, Suite, Workload, fileset_names
from crest.suite.timing import PROFILES, Timing, scale_timing

__all__ = [
    "GROUPS",
    "PROFILES",
    "TARGET_ROLES",
    "Ladder",
    "Mix",
    "MixOverride",
    "RequestClass",
    "Suite",
    "SuiteError",
    "Timing",
    "Workload",
    "builtin_names",
    "builtin_suites",
    "fileset_names",
    "load_file",
    "load_group",
    "load_suite",
    "parse_suite",
    "parse_toml",
    "scale_timing",
]

"""The results store: one SQLite file per lab holding runs and their mixes; this module only re-exports.

Only the runner writes (a run, then one transaction per finished mix); the CLI,
reports and analysis read. Nothing here prints, measures or analyses.
"""

from crest.store.errors import StoreError, StoreFileError
from crest.store.from_engine import mix_from_report
from crest.store.records import STATUSES, MixRecord, RunDetail, RunMeta, RunSummary
from crest.store.schema import SCHEMA_VERSION
from crest.store.sqlite import DEFAULT_PATH, Store, no_run_error

__all__ = [
    "DEFAULT_PATH",
    "SCHEMA_VERSION",
    "STATUSES",
    "MixRecord",
    "RunDetail",
    "RunMeta",
    "RunSummary",
    "Store",
    "StoreError",
    "StoreFileError",
    "mix_from_report",
    "no_run_error",
]

"""Analysis: pure functions over stored runs and published tables; this module only re-exports.

The peak (one definition, peak.py), curve shape, trials, fairness, comparisons, scaling, weighted throughput and
2^k designs, one module each. Nothing here prints, measures, or opens a
socket; bad input raises crest.errors.ConfigError with one line naming the
problem and the fix. It depends on crest.store for the records and never on
the runner, the CLI or the servers. docs/analysis.md gives the formulas and
thresholds.
"""

from crest.analysis.compare import (
    PairedResult,
    PeakRow,
    PeakTable,
    metric_value,
    paired_difference,
    peak_table,
    percent_improvement,
)
from crest.analysis.csvdata import CsvTable, read_csv
from crest.analysis.doe import DoeResult, alias_structure, analyze, defining_relation, design
from crest.analysis.fairness import ClientScore, Fairness, fairness
from crest.analysis.group import Configuration, configurations
from crest.analysis.peak import Peak, TrialPeak, highest, peak_of, peak_rps_of, run_peak
from crest.analysis.points import (
    LOAD_AXES,
    LoadPoint,
    default_load_axis,
    point_from_mix,
    points_from_run,
    preferred_load_axis,
)
from crest.analysis.published import (
    PUBLISHED_DATA_DIR,
    load_published,
    load_published_runs,
    parse_factors,
    store_published,
)
from crest.analysis.repeats import PointStats, aggregate_trials, mean_curve
from crest.analysis.scaling import ScalingRow, scaling
from crest.analysis.stats import (
    MIN_TRIALS_FOR_INTERVAL,
    Summary,
    clipped_at_zero,
    describe,
    interval_from_summary,
    nonnegative_interval,
    t_quantile,
    too_few_for_interval,
)
from crest.analysis.summary import GRACEFUL_RATIO, PLATEAU_RATIO, CurveSummary, summarize
from crest.analysis.weighted import (
    SIZE_CLASS_BOUNDS,
    SPECWEB99_WEIGHTS,
    SizeMean,
    SweepConfiguration,
    WeightedResult,
    is_sweep,
    parse_weights,
    size_class,
    size_means,
    sweep_configurations,
    sweep_points,
    sweep_weighted_throughput,
    weighted_throughput,
)

__all__ = [
    "GRACEFUL_RATIO",
    "LOAD_AXES",
    "MIN_TRIALS_FOR_INTERVAL",
    "PLATEAU_RATIO",
    "PUBLISHED_DATA_DIR",
    "SIZE_CLASS_BOUNDS",
    "SPECWEB99_WEIGHTS",
    "ClientScore",
    "Configuration",
    "CsvTable",
    "CurveSummary",
    "DoeResult",
    "Fairness",
    "LoadPoint",
    "PairedResult",
    "Peak",
    "PeakRow",
    "PeakTable",
    "PointStats",
    "ScalingRow",
    "SizeMean",
    "Summary",
    "SweepConfiguration",
    "TrialPeak",
    "WeightedResult",
    "aggregate_trials",
    "alias_structure",
    "analyze",
    "clipped_at_zero",
    "configurations",
    "default_load_axis",
    "defining_relation",
    "describe",
    "design",
    "fairness",
    "highest",
    "interval_from_summary",
    "is_sweep",
    "load_published",
    "load_published_runs",
    "mean_curve",
    "metric_value",
    "nonnegative_interval",
    "paired_difference",
    "parse_factors",
    "parse_weights",
    "peak_of",
    "peak_rps_of",
    "peak_table",
    "percent_improvement",
    "point_from_mix",
    "points_from_run",
    "preferred_load_axis",
    "read_csv",
    "run_peak",
    "scaling",
    "size_class",
    "size_means",
    "store_published",
    "summarize",
    "sweep_configurations",
    "sweep_points",
    "sweep_weighted_throughput",
    "t_quantile",
    "too_few_for_interval",
    "weighted_throughput",
]

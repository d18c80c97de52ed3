"""Access logs as workloads, Python's side: a log's summary as the engine's reader (crates/replay) gives it,
and the site `crest fileset from-log` writes from one. Reads and writes files; never prints, never sends.
"""

from crest.replay.summary import CLASSES, LogEntry, LogSummary, scan

__all__ = ["CLASSES", "LogEntry", "LogSummary", "scan"]

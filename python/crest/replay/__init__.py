"""Access logs as workloads, Python's side: a log's summary as the engine's reader (crates/replay) gives it,
and the site `crest fileset from-log` writes from one. Reads and writes files; never prints, never sends.
"""

from crest.replay.summary import A_BARE_LOG, CLASSES, IN_A_SUITE, ON_THE_COMMAND_LINE, LogEntry, LogSummary, scan

__all__ = ["A_BARE_LOG", "CLASSES", "IN_A_SUITE", "ON_THE_COMMAND_LINE", "LogEntry", "LogSummary", "scan"]

"""The crest command line; the only layer that prints or sets exit codes."""

EXIT_OK = 0
EXIT_FAILURE = 1  # a runtime failure of crest itself (EngineError)
EXIT_USAGE = 2  # bad input or an unreachable target: nothing was sent
EXIT_UNDECIDED = 3  # crest check: a noisy host left a rule nothing to judge on; repeat the run
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it

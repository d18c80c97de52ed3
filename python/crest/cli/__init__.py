"""The crest command line; the only layer that prints or sets exit codes."""

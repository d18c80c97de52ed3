"""This machine and the target's: facts, page cache, counters, the disclosure and per-mix resource sampling."""

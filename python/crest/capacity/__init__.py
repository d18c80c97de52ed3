"""The capacity search run through the suite runner: each probe one stored mix (the search itself is analysis's)."""

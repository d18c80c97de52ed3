"""SPECweb99's harness around the suite runner: operational validation, Reset and the POST-log check.

`checks` judges raw bytes, `wire` sends the few requests outside the load, `harness` is the runner's
MixHooks that ties them to each iteration. The load itself is the engine's (RunConfig.specweb99) and
the result crest.analysis.specweb99's.
"""

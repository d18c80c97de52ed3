"""The suite runner: a request checked, a target bound, each mix made an engine run, measured and stored in order."""

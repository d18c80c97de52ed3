"""One engine run and the fan-out over several: settings (runspec), checks before any traffic (preflight), starts and merges."""

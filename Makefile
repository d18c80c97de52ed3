# crest: make demo | make test (make lint first) | make bench | make soak | make fuzz | make clean
# Works from a clean clone with python3 (>= 3.10) and cargo; stamps under .stamps/
# make a second run with nothing changed skip the venv and the Rust build.

SHELL := /bin/bash
.DEFAULT_GOAL := build

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps

# Everything the extension build reads. maturin's own output (python/crest/_engine*.so)
# does not match these patterns, so building never makes the build stale.
BUILD_INPUTS := $(shell find crates python -type f \( -name '*.rs' -o -name '*.toml' -o -name '*.py' \
                  -o -name '*.pyi' -o -name '*.json' \) -not -path '*/target/*' 2>/dev/null) \
                Cargo.toml $(wildcard Cargo.lock) pyproject.toml

.PHONY: build demo lint test bench soak fuzz clean

build: $(STAMPS)/build

# The virtualenv with maturin; remade when pyproject.toml changes (the package's own
# dependencies are installed by `maturin develop` below, from the same pyproject.toml).
$(STAMPS)/venv: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "crest needs python3 >= 3.10")'
	@mkdir -p $(STAMPS)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check 'maturin>=1.9,<2'
	@touch $@

# Every cargo command selects the whole workspace with the extension's feature, so cargo resolves
# one feature set everywhere and the extension and the CGI programs share their compiled
# dependencies (the tests build theirs once more, without LTO: see NO_LTO below).
CARGO_ALL := --release --workspace --features pyo3/extension-module

# Release build, with the release profile's LTO (what `make bench` measures).
# The CGI programs are order-only: remade when theirs change, without re-running maturin.
$(STAMPS)/build: $(STAMPS)/venv $(BUILD_INPUTS) | $(STAMPS)/dynamic
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --extras dev
	@rm -f $(STAMPS)/build-test
	@touch $@

# The extension the tests run: the same release build without LTO, so it shares every compiled dependency
# with the Rust tests' binaries (built without LTO too, see NO_LTO). A clean clone's `make test` built the
# dependencies once for each before: 1 min 44 s of test build after the LTO extension, 32 s after this one.
# Only one of the two is installed at a time (each stamp removes the other's), so `make bench` or
# `make demo` after `make test` builds the LTO extension again (about 1.5 min here).
$(STAMPS)/build-test: $(STAMPS)/venv $(BUILD_INPUTS) | $(STAMPS)/dynamic
	$(NO_LTO) VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --extras dev
	@rm -f $(STAMPS)/build
	@touch $@

# The CGI programs crest installs on targets (crates/dynamic), its FastCGI responder
# (crates/fcgi) and its delay line (crates/delayline), copied into the Python package that finds
# them (python/crest/dynamic/bin/, git-ignored).
DYNAMIC_BIN := python/crest/dynamic/bin
DYNAMIC_PROGRAMS := crest-env crest-bytes crest-specweb99 crest-fcgi crest-delayline
DYNAMIC_INPUTS := $(shell find crates/dynamic crates/fcgi crates/delayline -type f \( -name '*.rs' -o -name '*.toml' \) 2>/dev/null) \
                  Cargo.toml $(wildcard Cargo.lock)

DYNAMIC_COPIES := $(addprefix $(DYNAMIC_BIN)/,$(DYNAMIC_PROGRAMS))

$(STAMPS)/dynamic: $(DYNAMIC_INPUTS) $(DYNAMIC_COPIES)
	cargo build $(CARGO_ALL) --bins
	@mkdir -p $(DYNAMIC_BIN) $(STAMPS)
	install -m 0755 $(addprefix $${CARGO_TARGET_DIR:-target}/release/,$(DYNAMIC_PROGRAMS)) $(DYNAMIC_BIN)/
	@touch $@

# No recipe on purpose: a copy deleted by hand only makes the stamp above stale, so
# `make build` (what crest's error says to run) puts it back.
$(DYNAMIC_COPIES):

# DEMO: more options for its `crest run`, e.g. make demo DEMO=--ui (a live page in the browser).
demo: build
	$(PY) scripts/demo.py $(DEMO)

# The lint gate: no module cycle in the engine or between crest's packages, formatting, clippy with warnings as
# errors, ruff and mypy --strict (on the test build: `make test` runs it first).
lint: $(STAMPS)/build-test
	$(PY) scripts/check_cycles.py --rust crates/engine/src --rust crates/replay/src --python python/crest
	cargo fmt --all --check
	cargo clippy $(CARGO_ALL) --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests scripts
	$(VENV)/bin/ruff format --check python tests scripts
	$(VENV)/bin/mypy --strict python/crest

# The tests' binaries are built without LTO: linking each with thin LTO took 3 min 19 s of a clean
# clone's run, built without it 2 min 16 s (dependencies included); so is the extension they test
# ($(STAMPS)/build-test). LTO is for what `make build` installs and `make bench` measures: HTTP/2's engine CPU
# per request was 4.45 µs with it and 4.67 µs without (medians of 4 rounds; HTTP/1.1 and HTTP/3 within 2 %).
NO_LTO := CARGO_PROFILE_RELEASE_LTO=false

# pytest in two passes: the unit tests on two workers (they start no server and no process, which
# tests/conftest.py enforces), then the integration tests on two workers, one module per worker (a module's
# servers and the Ray cluster start once); a test marked `alone` (it counts every process or network
# namespace on the machine, or reads the clock) waits until it has the machine to itself (tests/alone.py).
# Most integration tests wait on servers, sleeps and fixed-length runs: 800 s one at a time, 505 s on two (clean clones here).
# Exit code 5 means a pass collected no tests: a failure here.
# compileall first: crest's modules are compiled once, not by each of the hundreds of crest processes
# the integration tests start (where PYTHONDONTWRITEBYTECODE is set, none of them writes its bytecode).
PYTEST_PASS = rc=0; $(PY) -m pytest $(2) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no $(1) tests ran"; rc=1; fi

# --test-threads=8 on 2 cores: most engine tests wait (1 s runs against local servers, paced lines), so
# the engine's tests/all.rs took 21.5 s on 2 threads and 6.7 s on 8, its nap tests left out; they time
# the worker's own CPU (one failed in 2 of 6 runs beside 3 or 7 other tests), so they run alone after (4.7 s),
# with the timed replay's test, which reads each arrival to within 5 ms of its logged time (2.2 s; one try: an
# arrival may be later by what a sleeping thread of the test overslept meanwhile, the host's stall, no more).
test: lint
	$(NO_LTO) cargo test $(CARGO_ALL) -- --test-threads=8 --skip nap:: --skip replay::a_timed
	$(NO_LTO) cargo test $(CARGO_ALL) --test all -- --test-threads=1 nap:: replay::a_timed
	$(PY) -m compileall -q python/crest
	@$(call PYTEST_PASS,unit,-m "not integration" -n 2); unit=$$rc; \
	$(call PYTEST_PASS,integration,-m integration -n 2 --dist loadfile --durations=15); \
	if [ $$unit -ne 0 ]; then echo "the unit tests failed (above)"; exit $$unit; fi; exit $$rc

bench: build
	$(PY) scripts/bench.py
	$(PY) scripts/bench_fileservers.py

# Not in `make test`: crest's RSS and descriptors over a 30-minute bench and a run of many mixes, and two runs
# writing one results file (SOAK_S, SOAK_MIXES shorten it).
soak: build
	$(PY) scripts/soak.py

# Not in `make test` (which runs each fuzz target's 256 cases): the engine's parser fuzz targets
# (crates/engine/tests/fuzz_*.rs, proptest) and the suite-file fuzzing with FUZZ_CASES cases each;
# a failure's seed lands in crates/engine/tests/proptest-regressions/ (commit it with the fix).
FUZZ_CASES ?= 200000
fuzz: $(STAMPS)/build-test
	PROPTEST_CASES=$(FUZZ_CASES) $(NO_LTO) cargo test $(CARGO_ALL) --test all fuzz_
	CREST_FUZZ_CASES=$(FUZZ_CASES) $(PY) -m pytest -q tests/test_suite_fuzz.py

clean:
	rm -rf $(VENV) $(STAMPS) target .pytest_cache
	rm -f python/crest/_engine*.so
	rm -rf python/crest/dynamic/bin
	find python tests scripts -name __pycache__ -type d -prune -exec rm -rf {} +

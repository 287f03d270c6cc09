# perflab: two commands do everything on a fresh Debian 12 machine.
#   make report   install what is missing, run the default experiment plan, write report/<timestamp>/
#   make test     install what is missing, run every test suite (Gradle, cargo, pytest)
# Installs are idempotent: stamp files under .stamps/ and the build tools' own up-to-date checks.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON  ?= python3
PLAN    ?= quick
VENV    := .venv
PY      := $(VENV)/bin/python
STAMPS  := .stamps
SERVER  := java-server/build/install/perflab-server
LOADGEN := loadgen/target/release/perflab-load
GRADLE  := gradle --console=plain --no-daemon -q

JAVA_SOURCES := $(shell find java-server/src java-server/build.gradle java-server/settings.gradle -type f 2>/dev/null)
RUST_SOURCES := $(shell find loadgen/src loadgen/Cargo.toml loadgen/Cargo.lock -type f 2>/dev/null)
RUST_TESTS   := $(shell find loadgen/tests -type f 2>/dev/null)
# The builds do not depend on each other: a fresh clone runs them side by side (pip mostly waits on the
# network, Gradle and cargo on the CPUs), each one's output kept together (-O)
BUILD   := $(MAKE) --no-print-directory -j3 -O

.PHONY: help report test test-all jupyter clean setup test-arch test-lint test-java test-rust test-python

help:
	@echo "make report   run an experiment plan and write an HTML report under report/: PLAN=quick (a tour, the default),"
	@echo "              standard (numbers worth quoting) or full (course-length)"
	@echo "              PROJECT=path/to/perflab.toml tests your server, declared once (docs/your-server.md); a course"
	@echo "              server runs what its stage asks, ALL=1 every notebook that applies"
	@echo "              SERVER_CMD='cmd ... {port} ...' tests your server instead (READY_PATH=/health, SCRIPT_ARGS='path=/kv param=key')"
	@echo "make test     run every test suite: Gradle (java-server), cargo (loadgen), pytest (perflab, notebooks, report)"
	@echo "              but the slow known-truth runs (CI, under 10 minutes); make test-all runs those too"
	@echo "make jupyter  JupyterLab on the project's environment"
	@echo "make clean    remove build outputs and the venv (keeps data/ and report/)"

setup:
	$(BUILD) $(STAMPS)/venv $(SERVER)/.built $(LOADGEN)

# $(value ...): a command or a path is passed as written, a `$` in it (a Java inner class: Service$$Factory) too.
# MAKE_T0 is read when make starts, so the last line's time includes the builds.
MAKE_T0 := $(shell date +%s)
report: setup
	status=0; $(PY) -m perflab report --plan $(PLAN) $(if $(ALL),--all) $(if $(PROJECT),--project '$(value PROJECT)') $(if $(SERVER_CMD),--server-cmd '$(value SERVER_CMD)' --ready-path '$(or $(READY_PATH),/)' --script-args '$(value SCRIPT_ARGS)') || status=$$?; \
	echo "make report: $$(( $$(date +%s) - $(MAKE_T0) )) s in all, builds included"; exit $$status

# Everything is built side by side (pip mostly waits on the network, Gradle and cargo on the CPUs); then
# Gradle's and cargo's suites side by side (cargo's mostly waits on its timed loads: on a CPU that a build
# still needed it would only slow the build); pytest alone after them, its output live and last.
test:
	$(BUILD) $(STAMPS)/venv $(STAMPS)/browser $(STAMPS)/loadgen-tests $(STAMPS)/java-tests test-arch test-lint
	$(MAKE) --no-print-directory -j2 -O test-java test-rust
	$(MAKE) --no-print-directory test-python

# The package's layers (pyproject.toml [tool.importlinter]): an upward import or a cycle fails the build.
test-arch: $(STAMPS)/venv
	$(VENV)/bin/lint-imports

# The Python code's format and lint (pyproject.toml [tool.ruff]): `ruff format` and `ruff check --fix` put it right.
test-lint: $(STAMPS)/venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test-java: $(STAMPS)/java-tests
	cd java-server && $(GRADLE) test

test-rust: $(STAMPS)/loadgen-tests
	cd loadgen && cargo test --release --locked

# pytest last: its summary line ends the output of `make test`. Four workers, a test file each at a time:
# the report batches' files (minutes of notebooks) start first and run beside the rest (tests/conftest.py orders the
# files; --no-loadscope-reorder keeps that order). Four on two CPUs because much of a test's time is waiting
# (timed loads, servers starting): with four the CPUs are 87% busy (docs/benchmarks.md); every test
# keeps its own ports, data root and namespaces, and none asserts a speed. PYTEST_WORKERS=0: one process.
# PYTEST_MARK: `make test` (CI) leaves out the tests marked slow (pyproject.toml), `make test-all` runs them too.
PYTEST_WORKERS ?= 4
PYTEST_MARK ?= not slow
test-python: $(STAMPS)/venv $(SERVER)/.built $(LOADGEN) $(STAMPS)/browser
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 $(if $(PYTEST_MARK),-m '$(PYTEST_MARK)')

test-all:
	$(MAKE) --no-print-directory test PYTEST_MARK=''


# Jupyter refuses to run as root without --allow-root (CI machines and containers run as root).
jupyter: setup $(STAMPS)/lab
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root)

clean:
	rm -rf $(VENV) $(STAMPS) java-server/build java-server/.gradle loadgen/target

$(STAMPS):
	mkdir -p $@

$(STAMPS)/gradle: | $(STAMPS)
	scripts/apt-ensure gradle
	touch $@

# Debian's chromium drives the browser tests of the HTML report.
$(STAMPS)/browser: | $(STAMPS)
	scripts/apt-ensure chromium
	touch $@

$(STAMPS)/venv: pyproject.toml | $(STAMPS)
	$(PYTHON) -m venv $(VENV) || { scripts/apt-ensure python3-venv && $(PYTHON) -m venv $(VENV); }
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

$(STAMPS)/lab: $(STAMPS)/venv
	$(VENV)/bin/pip install -q -e '.[test,lab]'
	touch $@

# The server's own option list is the one source of ServerConfig's fields: the build writes it next to
# the Python that reads it (a test checks the committed copy against the built server).
OPTIONS_JSON := perflab/config/server_options.json
JAVA ?= $(if $(JAVA_HOME),$(JAVA_HOME)/bin/java,java)

define server_built
	$(JAVA) -cp '$(SERVER)/lib/*' perflab.server.Main --options-json > $(OPTIONS_JSON).tmp
	python3 -m json.tool --indent 1 $(OPTIONS_JSON).tmp > $(OPTIONS_JSON)
	rm $(OPTIONS_JSON).tmp
	touch $(SERVER)/.built
endef

$(SERVER)/.built: $(STAMPS)/gradle $(JAVA_SOURCES)
	cd java-server && $(GRADLE) installDist
	$(server_built)

$(LOADGEN): $(RUST_SOURCES)
	cd loadgen && cargo build --release --locked
	touch $@

# The binary and the test binaries in one cargo run (the integration tests need the binary, built the same way)
$(STAMPS)/loadgen-tests: $(RUST_SOURCES) $(RUST_TESTS) | $(STAMPS)
	cd loadgen && cargo test --release --locked --no-run
	touch -c $(LOADGEN)
	touch $@

# `make test` builds the server and its test classes in one Gradle run, the server's stamp included: a Gradle start
# costs some 9 CPU-s even with nothing to do (8.6 on 2026-12-08), and `make test` does not name $(SERVER)/.built, so
# two Gradle runs never share java-server/ (JAVA_SOURCES holds src/test too)
$(STAMPS)/java-tests: $(STAMPS)/gradle $(JAVA_SOURCES) | $(STAMPS)
	cd java-server && $(GRADLE) installDist testClasses
	$(server_built)
	touch $@

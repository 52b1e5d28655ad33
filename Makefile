# The two commands a new user needs:  make lab  (JupyterLab, warm Spark)  and  make test.
# Both create .venv on first use and re-install only when pyproject.toml or constraints.txt
# change, so running them again is fast.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.flinkstate-installed
LAB_PORT ?= 8888
# the local Spark Connect server make lab starts (flinkstate spark-server), on 127.0.0.1
SPARK_CONNECT_PORT ?= 15002
# Jupyter refuses to run as root unless told; containers and CI machines often are root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

export PYSPARK_PYTHON ?= $(abspath $(BIN)/python)

.PHONY: lab test test-fast lint typecheck pytest bench bench-smoke fuzz site real-checkpoints reference-values lock clean help

help:
	@echo "make lab    start JupyterLab on 127.0.0.1:$(LAB_PORT) in notebooks/, and a Spark Connect"
	@echo "           server on 127.0.0.1:$(SPARK_CONNECT_PORT) that keeps Spark warm until it ends"
	@echo "make test   ruff, mypy and the whole pytest suite (notebooks included), on every core"
	@echo "make test-fast  the inner loop: the tests not marked slow, on every core (under 2 minutes"
	@echo "                on 2 cores); no Spark, notebooks, browser or long explorations"
	@echo "make bench  run the benchmarks and print ratios against their in-run baselines"
	@echo "make fuzz   read thousands of broken checkpoints, run bad command lines (a full disk,"
	@echo "           Ctrl-C, SIGTERM) and bad widget actions (MUTATIONS=5000 SEED=0)"
	@echo "make site  the lessons as a static site in build/site (SITE=...): open build/site/index.html,"
	@echo "           no install, no network"
	@echo "make real-checkpoints  run small Flink jobs and keep their unaligned checkpoints"
	@echo "                       (VARIANTS=a,b RUN_SECONDS=12 OUT=data/generated-checkpoints)"

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "flinkstate needs Python 3.11 or newer; found " + sys.version.split()[0])'
	@command -v java >/dev/null 2>&1 || echo "warning: no 'java' on PATH; Spark (PySpark) needs Java 17 or newer"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name flinkstate --display-name "Python (flinkstate)" >/dev/null
	touch $(STAMP)

# The repository root is served, so that the notebooks' links to docs/ open in JupyterLab;
# the browser starts in notebooks/. A local Spark Connect server runs beside it, so that the
# notebooks' and the command line's Spark answer warm; it is stopped when JupyterLab ends (if
# this recipe started it: one that ran before is left running). Without it (it did not start,
# or one already runs elsewhere) each notebook's Spark runs embedded, as before.
lab: $(STAMP)
	@started=; \
	if $(BIN)/flinkstate spark-server start --port $(SPARK_CONNECT_PORT); then started=1; \
	else echo "make lab: no new Spark Connect server; notebooks use a running one or embedded Spark"; fi; \
	trap 'if [ -n "$$started" ]; then $(BIN)/flinkstate spark-server stop; fi' EXIT; \
	trap 'exit 130' INT TERM; \
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
		--ServerApp.root_dir=. --LabApp.default_url=/lab/tree/notebooks --no-browser $(ALLOW_ROOT)

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check flinkstate tests benchmarks tools

typecheck: $(STAMP)
	$(BIN)/mypy

# pytest-xdist shares the tests out between one worker per core (XDIST=-n 0: one process);
# loadgroup keeps each xdist_group on one worker (the modules that use the embedded Spark
# session: one JVM). The slowest tests are listed at the end, to keep the slow marker honest.
XDIST ?= -n auto --dist loadgroup
pytest: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) --durations=25

# The inner loop: what is not marked slow (see pyproject.toml), in under 2 minutes on 2 cores.
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(XDIST) -m "not slow" --durations=10

bench: $(STAMP)
	$(BIN)/python -m benchmarks

bench-smoke: $(STAMP)
	$(BIN)/python -m benchmarks --smoke

# Three harnesses, each printing tried / clean / failure counts and listing the failures: the
# checkpoint reader against thousands of broken copies of the committed checkpoints, each read
# three ways (inspect --json, inspect --export, forecast): MUTATIONS of every family, REPOINTS
# re-pointed chunk offsets, FUZZ_JOBS at a time (SEED=0); bad command lines for every command,
# standard output on a full disk, Ctrl-C and SIGTERM while a command works (SEED; about ten
# minutes on 2 cores); every widget's controls set out of range, to None or the wrong type, its
# buttons clicked in odd orders (a few minutes, Spark's included). Each goes on only if the one
# before found nothing.
MUTATIONS ?= 5000
REPOINTS ?= 500
SEED ?= 0
FUZZ_JOBS ?= 2
fuzz: $(STAMP)
	$(BIN)/python -m tests.flinkcheckpoint.fuzz --mutations $(MUTATIONS) --repoints $(REPOINTS) \
		--seed $(SEED) --jobs $(FUZZ_JOBS)
	$(BIN)/python -m tests.cli.fuzz --seed $(SEED)
	$(BIN)/python -m tests.widgets.fuzz

# The lessons as a static site: every guided tour and every scenario as a page that needs no
# install and no network (flinkstate lessons), made one page per core, written whole.
SITE ?= build/site
site: $(STAMP)
	$(BIN)/flinkstate lessons --out $(SITE)

# The flink extra (apache-flink: Flink's jars and its Java gateway) in an environment of its own,
# since its pins differ from constraints.txt; then small back-pressured jobs on a local Flink,
# whose retained unaligned checkpoints land in $(OUT) (see tools/real-checkpoints).
FLINK_VENV := .venv-flink
FLINK_STAMP := $(FLINK_VENV)/.flink-installed
OUT ?= data/generated-checkpoints
RUN_SECONDS ?= 12
VARIANTS ?=
# the flink extra's requirements, as pyproject.toml declares them
FLINK_REQUIREMENTS = $(shell $(PYTHON) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["flink"])')

$(FLINK_STAMP): pyproject.toml
	test -x $(FLINK_VENV)/bin/python || $(PYTHON) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(FLINK_VENV)/bin/python -m pip install --quiet $(FLINK_REQUIREMENTS)
	touch $(FLINK_STAMP)

real-checkpoints: $(FLINK_STAMP)
	$(PYTHON) tools/real-checkpoints/generate.py --flink-python $(FLINK_VENV)/bin/python \
		--out $(OUT) --seconds $(RUN_SECONDS) $(if $(VARIANTS),--variants $(VARIANTS),)

# Recompute tests/reference/flink-2.3.0-arithmetic.json with Flink's own jar (needs javac and
# FLINK_DIST_JAR pointing at flink-dist-2.3.0.jar, e.g. from the apache-flink-libraries wheel).
reference-values:
	@test -n "$(FLINK_DIST_JAR)" || (echo "set FLINK_DIST_JAR=/path/to/flink-dist-2.3.0.jar" && exit 2)
	mkdir -p build/reference
	javac -d build/reference -cp $(FLINK_DIST_JAR) tests/reference/FlinkArithmeticReference.java
	java -cp $(FLINK_DIST_JAR):build/reference FlinkArithmeticReference > tests/reference/flink-2.3.0-arithmetic.json

# Re-pin constraints.txt from what is installed in .venv now.
lock: $(STAMP)
	{ echo "# Versions tested together (Python 3.11, OpenJDK 17). Regenerate with 'make lock'."; \
	  $(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^flinkstate'; } > constraints.txt

clean:
	rm -rf $(VENV) $(FLINK_VENV) build .pytest_cache .mypy_cache .ruff_cache

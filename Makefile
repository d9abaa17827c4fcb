# The commands that matter on a fresh machine; each builds its own virtual environment.
#   make demo     the product (the three distributions), then a demo tournament
#   make test     the product in editable mode plus the dev tools, the system tools, the checks
#                 and the whole suite
PY ?= python3
VENV := .venv
PRODUCT := $(VENV)/.product
DEV := $(VENV)/.dev
PIP := $(VENV)/bin/pip --quiet --disable-pip-version-check

.PHONY: install demo test check provision bench clean

$(VENV)/bin/python:
	$(PY) -m venv $(VENV)
	$(PIP) install --upgrade pip

# Editable, so that a change under any src/ is live without a reinstall.
$(PRODUCT): $(VENV)/bin/python pyproject.toml sdk/pyproject.toml referee/pyproject.toml arena/pyproject.toml
	$(PIP) install -e ./sdk -e ./referee -e ./arena
	touch $@

# --group (PEP 735 dependency groups) needs pip 25.1 or newer, also in a .venv made earlier.
$(DEV): $(PRODUCT) pyproject.toml
	$(PIP) install 'pip>=25.1'
	$(PIP) install --group dev
	touch $@

install: $(PRODUCT)

demo: $(PRODUCT)
	$(VENV)/bin/sueca-arena demo

provision:
	bash .ci/provision

# Layers, lint and types first (seconds), then the whole suite on three pytest processes: most
# tests wait on other processes (servers starting, clocks running out), so three keep two cores
# busy. --dist loadfile keeps each test file on one process, in order, as its module-scoped
# servers expect (a refusal logged by one test is in the log the next one reads). The 25
# slowest tests are listed at the end.
check: $(DEV)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: check provision
	$(VENV)/bin/python -m pytest -q -n 3 --dist loadfile --durations=25

bench: $(PRODUCT)
	$(VENV)/bin/sueca-arena bench engine --deals 100000

clean:
	rm -rf $(VENV) build sdk/src/*.egg-info referee/src/*.egg-info arena/src/*.egg-info

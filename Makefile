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
	@echo "making the virtual environment $(VENV) with $(PY)"
	@$(PY) -m venv $(VENV)

# Editable, so that a change under any src/ is live without a reinstall (a new module too).
# setuptools' editable mode for src layouts tells every install that a folder named like the
# package in the working directory could shadow it ("Editable installation."): an information
# notice, not a problem here (the packages live under */src, and no sueca/ folder is at the
# root), so it is filtered by its message; its other modes are worse (strict needs a reinstall
# for every new module, compat is deprecated and says so).
$(PRODUCT): $(VENV)/bin/python pyproject.toml sdk/pyproject.toml referee/pyproject.toml arena/pyproject.toml
	@echo "installing sueca-sdk, sueca-referee and sueca-arena into $(VENV) (editable)..."
	@PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -e ./sdk -e ./referee -e ./arena
	@touch $@
	@echo "installed: $(VENV)/bin/sueca-arena and $(VENV)/bin/sueca-bot ($$(du -sm $(VENV) | cut -f1) MB)"

# --group (PEP 735 dependency groups) needs pip 25.1 or newer, also in a .venv made earlier.
$(DEV): $(PRODUCT) pyproject.toml
	@echo "installing the dev tools (pytest, ruff, mypy, import-linter...) into $(VENV)..."
	@$(PIP) install 'pip>=25.1'
	@$(PIP) install --group dev
	@touch $@

install: $(PRODUCT)

demo: $(PRODUCT)
	$(VENV)/bin/sueca-arena demo

provision:
	bash .ci/provision

# Layers, lint and types first (seconds), then the whole suite on four pytest processes: most
# tests wait on other processes (servers starting, clocks running out), so four keep two cores
# busy. --dist loadfile keeps each test file on one process, in order, as its module-scoped
# servers expect (a refusal logged by one test is in the log the next one reads). The 25
# slowest tests are listed at the end.
check: $(DEV)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: check provision
	$(VENV)/bin/python -m pytest -q -n 4 --dist loadfile --durations=25

bench: $(PRODUCT)
	$(VENV)/bin/sueca-arena bench engine --deals 100000

clean:
	rm -rf $(VENV) build sdk/src/*.egg-info referee/src/*.egg-info arena/src/*.egg-info

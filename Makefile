# The two commands that matter on a fresh machine; each builds its own virtual environment.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test check bench clean

# sdk/ is the sueca-sdk distribution (engine, wire code, SDK); the root is sueca-arena on top.
# The SDK goes in as a plain path (compat mode) so that a new module under sdk/src needs no
# reinstall; the root maps referee/ and arena/ to sueca.referee and sueca.arena.
$(STAMP): pyproject.toml sdk/pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet --config-settings editable_mode=compat -e ./sdk
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/sueca-arena demo

# Layers, lint and types first (seconds), then the whole suite.
check: $(STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: check
	$(VENV)/bin/python -m pytest -q --durations=25

bench: $(STAMP)
	$(VENV)/bin/sueca-arena bench engine --deals 100000

clean:
	rm -rf $(VENV) *.egg-info sdk/src/*.egg-info

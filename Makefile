# Two entry points for a fresh machine: `make run` and `make test` (see README).
# Pick the interpreter with PYTHON (`make PYTHON=python3.12 run`); gpufit needs 3.11 or newer.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NEED_PYTHON := (3, 11)
# What an interpreter is: its base prefix and version (a venv reports its base interpreter's).
WHO := import sys; print(sys.base_prefix, *sys.version_info[:3])

# The venv is kept only if its interpreter is new enough and, when PYTHON was given, is that interpreter:
# a .venv made by Python 3.10, or by another interpreter than the one asked for, is rebuilt.
VENV_PYTHON_OK := $(shell $(BIN)/python -c 'import sys; sys.exit(sys.version_info < $(NEED_PYTHON))' \
	2>/dev/null && echo yes)
ifeq ($(origin PYTHON),command line)
ifneq ($(shell $(BIN)/python -c '$(WHO)' 2>/dev/null),$(shell $(PYTHON) -c '$(WHO)' 2>/dev/null))
VENV_PYTHON_OK :=
endif
endif
ifneq ($(VENV_PYTHON_OK),yes)
.PHONY: $(STAMP)
endif

.PHONY: run test lint bench charts measure measure-vision clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < $(NEED_PYTHON))' 2>/dev/null || { \
	  echo "gpufit needs Python 3.11 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>/dev/null || echo 'not runnable here')." >&2; \
	  echo "Pick one, e.g.: make PYTHON=python3.12 $(or $(MAKECMDGOALS),run)" >&2; exit 1; }
	@if [ "$(VENV_PYTHON_OK)" != yes ] && [ -d $(VENV) ]; then \
	  echo "Rebuilding $(VENV) with $(PYTHON) (it was made by another or too old an interpreter)"; \
	  rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(MAKE) --no-print-directory bytecode
	touch $(STAMP)

# Compiled once here, so the first `gpufit ask` does not compile every module (and stays fast when
# PYTHONDONTWRITEBYTECODE is set, which stops Python writing bytecode on import); pip compiled the packages.
# The templates too, per language (templates/__pycache__, git-ignored; bot/render.py only reads them and
# compiles any template whose entry is missing or stale, so a checkout without them works the same).
.PHONY: bytecode
bytecode:
	@$(BIN)/python -m compileall -q -j 0 core bot
	@$(BIN)/python -m bot.render --precompile >/dev/null

# The templates' catalogs compiled (templates/locale/<lang>/LC_MESSAGES/gpufit.mo beside each .po, git-ignored):
# the stdlib loads a .mo in a millisecond; bot/render.py reads a .po with Babel when its .mo is missing or stale.
CATALOGS := $(patsubst %.po,%.mo,$(wildcard templates/locale/*/LC_MESSAGES/gpufit.po))
.PHONY: catalogs
catalogs: $(CATALOGS)
templates/locale/%/LC_MESSAGES/gpufit.mo: templates/locale/%/LC_MESSAGES/gpufit.po | $(STAMP)
	@$(BIN)/pybabel compile --statistics -l $* -i $< -o $@

# The bot when TELEGRAM_BOT_TOKEN is set (or in .env), the offline console chat otherwise.
run: $(STAMP) bytecode catalogs
	$(BIN)/gpufit start

lint: $(STAMP) catalogs
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(STAMP) catalogs
	$(BIN)/python -m benchmarks

# The README's chart (docs/chart.png, docs/chart-zh.png), drawn from a real answer.
charts: $(STAMP) catalogs
	$(BIN)/python -m bot.charts.demo

# Re-measure PyTorch's real peaks (optional; needs torch, transformers, peft in their own venv).
measure:
	$(PYTHON) -m venv .venv-measure
	.venv-measure/bin/pip install --quiet -e '.[measure]'
	.venv-measure/bin/python tools/measure_memory.py --out data/measured/memory.csv

# Re-measure the vision jobs (data/measured/vision.csv) in their own venv, CPU torch first.
measure-vision:
	$(PYTHON) -m venv .venv-vision
	.venv-vision/bin/pip install --quiet torch==2.13.0
	.venv-vision/bin/pip install --quiet -e '.[measure-vision]'
	.venv-vision/bin/python tools/measure_vision.py --out data/measured/vision.csv

# Removes every virtual environment and tool cache (not the bot's database, not .env); the next
# `make run` / `make test` builds .venv again.
clean:
	rm -rf $(VENV) .venv-measure .venv-vision .mypy_cache .ruff_cache .pytest_cache .hypothesis
	find core bot tests benchmarks tools templates -name __pycache__ -type d -prune -exec rm -rf {} +

# Two entry points for a fresh machine: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench charts measure measure-vision clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The bot when TELEGRAM_BOT_TOKEN is set (or in .env), the offline console chat otherwise.
run: $(STAMP)
	$(BIN)/gpufit start

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# The README's chart (docs/chart.png, docs/chart-zh.png), drawn from a real answer.
charts: $(STAMP)
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

clean:
	rm -rf $(VENV) .venv-measure .venv-vision .mypy_cache .ruff_cache .pytest_cache

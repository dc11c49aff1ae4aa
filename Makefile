# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench install

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

## run: install, migrate, create the demo logins, start daphne + Celery workers + beat.
## LOCAL_RUN makes DEBUG default to on; a DEBUG in the environment or in .env wins.
## Demo logins and demo credits only on a loopback host (DEMO_MODE, settings.py).
run: $(STAMP)
	LOCAL_RUN=on PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bin/with-redis $(BIN)/python manage.py runstack

## test: the whole suite (PostgreSQL-only tests run when DATABASE_URL points at PostgreSQL).
test: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bin/with-redis $(BIN)/python -m pytest

## lint: ruff, then mypy (with django-stubs) on ledger/, speculation/ and mangagen/jobs/ (pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/ledger.py

# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench install messages

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

## run: install, migrate, create the demo logins, start daphne + Celery workers + beat.
## LOCAL_RUN makes DEBUG default to on; a DEBUG in the environment or in .env wins.
## Demo logins and demo credits only on a loopback host (DEMO_MODE, mangagen/settings/environment.py).
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

## messages: the interface's catalogs (locale/): new strings into every language's .po files,
## then the .mo files the app reads (committed; needs GNU gettext: apt-get install gettext).
MESSAGE_SOURCES := --ignore=.venv --ignore=staticfiles --ignore=var --ignore=media \
	--ignore=artifacts --ignore=tests --ignore='*/tests/*' --ignore=bench --ignore=docs
messages: $(STAMP)
	DEBUG=on $(BIN)/python manage.py makemessages --all --no-location --no-obsolete -d django $(MESSAGE_SOURCES)
	DEBUG=on $(BIN)/python manage.py makemessages --all --no-location --no-obsolete -d djangojs $(MESSAGE_SOURCES)
	DEBUG=on $(BIN)/python manage.py compilemessages --ignore=.venv

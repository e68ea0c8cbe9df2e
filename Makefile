# Two commands a newcomer needs: `make demo` and `make test`. Both install what they need into .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench fuzz screenshots clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/fabricctl demo

# compileall: where PYTHONDONTWRITEBYTECODE is set (as where the suite was timed, docs/benchmarks.md "CI time"), no
# import writes bytecode and every process the tests start (daemons, engines, fabricctl) compiles the project's
# sources again; compileall writes it regardless, once, in about 2 s.
test: $(STAMP) lint
	$(BIN)/python -m compileall -q topology tickets fabric tests
	$(BIN)/pytest -q -n 2

lint: $(STAMP)
	$(BIN)/ruff check topology tickets fabric tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache --no-logo

fuzz: $(STAMP)  # the schemathesis suites with 500 fuzzing examples per operation instead of 30
	FABRIC_FUZZ_EXAMPLES=500 $(BIN)/pytest -q tests/fuzz

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run

screenshots: $(STAMP)  # docs/images again (the console, verify --html), in headless Chromium (Debian: chromium, chromium-driver)
	$(BIN)/python tests/browser/screenshots.py

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache

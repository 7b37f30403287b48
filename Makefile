# The two commands a learner needs: `make lab` and `make test`.
# Each creates .venv on first use and installs the exact pins from requirements-lock.txt.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: venv venv-colab lab test test-main test-colab notebooks bench clean distclean

venv: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the pins or the package metadata change.
# --no-compile: byte-compiling every installed module takes half the install time; Python compiles
# what it imports on first use instead.
$(STAMP): requirements-lock.txt pyproject.toml | $(PY)
	$(PY) -m pip install --no-compile -r requirements-lock.txt
	$(PY) -m pip install --no-deps --no-build-isolation -e .
	touch $@

# A second, Colab-like environment (ipywidgets 7.7.1, matplotlib 3.10, transformers 4.x):
# the widgets, the notebooks and the transformers parity must hold there too.
COLAB_VENV  := .venv-colab
COLAB_PY    := $(COLAB_VENV)/bin/python
COLAB_STAMP := $(COLAB_VENV)/.installed

venv-colab: $(COLAB_STAMP)

$(COLAB_PY):
	$(PYTHON) -m venv $(COLAB_VENV)

# It holds the dependencies but not the course package: like Colab before the setup cell runs.
# The wheel test (tests/test_wheel.py) builds the wheel, installs it into a folder of its own and
# runs the notebooks from an empty folder; the other tests import the checkout (pytest's cwd).
$(COLAB_STAMP): requirements-colab.txt pyproject.toml | $(COLAB_PY)
	$(COLAB_PY) -m pip install --no-compile -r requirements-colab.txt
	$(COLAB_PY) -m pip uninstall -y -q kv-cache-course 2>/dev/null || true
	touch $@

lab: venv
	$(VENV)/bin/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

# Everything: unit, widget and notebook tests (English and Chinese notebooks) in .venv, then widgets, notebooks and the
# transformers parity again in the Colab-like environment. All parts run; make fails if any fails.
test: venv venv-colab
	@status=0; \
	$(MAKE) --no-print-directory test-main || status=1; \
	$(MAKE) --no-print-directory test-colab || status=1; \
	exit $$status

# One torch thread for tests: results are identical, and on a busy 2-core machine two threads
# spin-wait on each other and run many times slower. (utils.bench sets its own thread count.)
test-main test-colab: export OMP_NUM_THREADS = 1

# Tests run on TEST_WORKERS processes (pytest-xdist), one torch thread each: a notebook under nbval
# keeps all its cells on one worker (--dist loadscope), other tests go to whichever worker is free.
TEST_WORKERS ?= 2

test-main: venv
	@status=0; \
	$(PY) -m pytest tests/ -q -rs -m "not wheel" -n $(TEST_WORKERS) --dist worksteal || status=1; \
	if ls notebooks/*.ipynb >/dev/null 2>&1; then \
		$(PY) -m pytest --nbval-lax notebooks/ -q -n $(TEST_WORKERS) --dist loadscope || status=1; \
	else \
		echo "make test: no notebooks/*.ipynb yet, skipping the nbval pass"; \
	fi; \
	exit $$status

test-colab: venv-colab
	@echo "== Colab-like environment: $$($(COLAB_PY) -c 'import ipywidgets, matplotlib, transformers; print("ipywidgets", ipywidgets.__version__, "matplotlib", matplotlib.__version__, "transformers", transformers.__version__)')"
	COURSE_REQUIRE_WHEEL_TEST=1 $(COLAB_PY) -m pytest -q -rs -p no:cacheprovider -m colab tests/ -n $(TEST_WORKERS) --dist worksteal

# Re-execute every notebook in place from a clean kernel (outputs are committed): first the shared
# cells and links (nbsync), then the Chinese twins brought in step with the English code (nbzh).
notebooks: venv
	$(PY) tools/nbsync.py
	$(PY) tools/nbzh.py
	$(PY) tools/run_notebooks.py
	$(PY) tools/export_figures.py
	$(PY) tools/lesson_facts.py --update

bench: venv
	$(PY) -m utils.bench

clean:
	rm -rf build/ *.egg-info .pytest_cache bench-results.json
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -print \
		| xargs rm -rf

distclean: clean
	rm -rf $(VENV) $(COLAB_VENV)

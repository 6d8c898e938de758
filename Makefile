# The two entry points of the README, and the developer's targets.
#   make demo   install what is missing, build, run the offline demo
#   make test   install what is missing, build, lint (make lint), run every test (C++ and Python)
SHELL := /bin/bash
VENV ?= .venv
BUILD ?= build/dev
PY := $(VENV)/bin/python
export MKB_BUILD_DIR := $(BUILD)

.PHONY: all setup build test test-cpp test-python demo gpu-check format lint tidy clean

all: build

setup build:
	scripts/setup.sh

test: build
	$(MAKE) --no-print-directory lint
	ctest --test-dir $(BUILD) --output-on-failure -j 2
	$(PY) -m pytest -q -ra

test-cpp: build
	ctest --test-dir $(BUILD) --output-on-failure -j 2

test-python: build
	$(PY) -m pytest -q -ra

demo: build
	$(VENV)/bin/mkb demo --device cpu

# On the GPU machine (see docs/gpu-device.md): builds there, runs the GPU tests and benchmarks.
gpu-check:
	scripts/gpu-check.sh

PY_SOURCES := python tests benchmarks scripts examples
CXX_SOURCES = $$(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')

# Rewrites the sources as the checks want them.
format:
	$(VENV)/bin/clang-format -i $(CXX_SOURCES)
	$(VENV)/bin/ruff format $(PY_SOURCES)
	$(VENV)/bin/ruff check --fix $(PY_SOURCES)

# What CI checks before the tests (make test runs it first): lint findings, unformatted Python,
# unformatted C++ (the pinned clang-format of pyproject's lint extra), and mypy errors beyond
# the baseline that only shrinks (scripts/typecheck.py).
lint:
	$(VENV)/bin/ruff check $(PY_SOURCES)
	$(VENV)/bin/ruff format --check $(PY_SOURCES)
	$(VENV)/bin/clang-format --dry-run -Werror $(CXX_SOURCES)
	$(PY) scripts/typecheck.py

# The checks of .clang-tidy over every C++ source of libmkb and the bindings (needs clang-tidy and
# run-clang-tidy; the build's compile_commands.json). Not part of make lint: its results follow the
# installed clang-tidy's version.
tidy: build
	run-clang-tidy -p $(BUILD) -j 2 -quiet '$(CURDIR)/(libmkb|bindings)/.*\.cc$$'

clean:
	rm -rf build

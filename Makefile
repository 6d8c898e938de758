# The two entry points of the README, and the developer's targets.
#   make demo   install what is missing, build, run the offline demo
#   make test   install what is missing, build, run every test (C++ and Python)
SHELL := /bin/bash
VENV ?= .venv
BUILD ?= build/dev
PY := $(VENV)/bin/python
export MKB_BUILD_DIR := $(BUILD)

.PHONY: all setup build test test-cpp test-python demo gpu-check format lint clean

all: build

setup build:
	scripts/setup.sh

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j 2
	$(PY) -m pytest -q -ra

test-cpp: build
	ctest --test-dir $(BUILD) --output-on-failure -j 2

test-python: build
	$(PY) -m pytest -q -ra

demo: build
	$(VENV)/bin/mkb demo

# On the GPU machine (see docs/gpu-device.md): builds there, runs the GPU tests and benchmarks.
gpu-check:
	scripts/gpu-check.sh

format:
	clang-format -i $$(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
	$(VENV)/bin/ruff format python tests || true

lint:
	$(VENV)/bin/ruff check python tests

clean:
	rm -rf build

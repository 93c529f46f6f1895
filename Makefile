# Top-level entry points. `make check` and `make demo` install what they need
# (Debian packages, via scripts/install-deps.sh), build and run.
BUILD      ?= build
BUILD_SAN  ?= build-san
JOBS       ?= 2
CMAKE_ARGS ?=
# The interpreter of the Python package: Debian's, with its numpy, never
# whichever python3 comes first on PATH.
PYTHON     ?= /usr/bin/python3

.PHONY: all deps configure build build-san python check check-release check-san check-browser demo bench install clean

all: build

deps:
	@sh scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

build-san: deps
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DMBS_SANITIZE=ON -DMBS_BUILD_BENCH=OFF \
	  -DPython3_EXECUTABLE=$(PYTHON) $(CMAKE_ARGS)
	cmake --build $(BUILD_SAN) -j $(JOBS)

# The Python package in place: the extension built in $(BUILD) and copied
# next to the sources, so that PYTHONPATH=python imports mbsens.
python: configure
	cmake --build $(BUILD) -j $(JOBS) --target mbsens_python
	rm -f python/mbsens/_mbsens*.so
	cp $(BUILD)/python/mbsens/_mbsens*.so python/mbsens/
	@echo "mbsens: PYTHONPATH=python $(PYTHON) imports the package (docs/python.md)"

check-release: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

check-san: build-san
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir $(BUILD_SAN) --output-on-failure -j $(JOBS)

# The viewer pages in headless Chromium (tests/browser/run.sh; npm ci of
# viewer/package-lock.json for playwright-core).
check-browser: build
	sh tests/browser/run.sh $(BUILD)

# All tests, optimized and under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the browser tests of the viewer.
check: check-release check-san check-browser

demo: build
	@PYTHON=$(PYTHON) sh scripts/demo.sh $(BUILD)

bench: build
	@sh scripts/bench.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) python/mbsens/_mbsens*.so

# Top-level entry points. `make check` and `make demo` install what they need
# (Debian packages, via scripts/install-deps.sh), build and run.
BUILD      ?= build
BUILD_SAN  ?= build-san
BUILD_FUZZ ?= build-fuzz
SECONDS    ?= 60
JOBS       ?= 2
CMAKE_ARGS ?=
# The interpreter of the Python package: Debian's, with its numpy, never
# whichever python3 comes first on PATH.
PYTHON     ?= /usr/bin/python3

.PHONY: all deps configure build build-san python check check-release check-coretype check-san check-browser demo bench fuzz install clean

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

# The tests that compute with LAPACK/BLAS (CTest label `lapack`) once more,
# under another OpenBLAS kernel than the environment's: their bounds must
# not depend on the kernel's rounding (docs/testing.md).
check-coretype: build
	@ct=$$(sh scripts/other-coretype.sh) || exit 1; \
	echo "check-coretype: the LAPACK-using tests again with OPENBLAS_CORETYPE=$$ct" \
	     "(environment: $${OPENBLAS_CORETYPE:-unset})"; \
	OPENBLAS_CORETYPE=$$ct ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L lapack

check-san: build-san
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ctest --test-dir $(BUILD_SAN) --output-on-failure -j $(JOBS)

# The viewer pages in headless Chromium (tests/browser/run.sh; npm ci of
# viewer/package-lock.json for playwright-core).
check-browser: build
	sh tests/browser/run.sh $(BUILD)

# All tests, optimized (then the LAPACK-using ones under a second OpenBLAS
# kernel) and under AddressSanitizer + UndefinedBehaviorSanitizer, then the
# browser tests of the viewer.
check: check-release check-coretype check-san check-browser

demo: build
	@PYTHON=$(PYTHON) sh scripts/demo.sh $(BUILD)

bench: build
	@sh scripts/bench.sh $(BUILD)

# The libFuzzer target over the model loaders, run for SECONDS seconds
# (clang from Debian; docs/testing.md "Fuzzing").
fuzz:
	@sh scripts/install-deps.sh fuzz
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMBS_FUZZ=ON \
	  -DMBS_BUILD_TESTS=OFF -DMBS_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_load
	sh scripts/fuzz.sh $(BUILD_FUZZ) $(SECONDS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ) python/mbsens/_mbsens*.so

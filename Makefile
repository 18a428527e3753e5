# The front door: `make run` and `make test` work on a fresh Debian 12 machine.
# Every target first installs the missing Debian packages (scripts/install-deps.sh),
# then configures and builds with CMake + Ninja. Build trees: build/ (Release, gcc),
# build-asan/ (ASan + UBSan, gcc), build-clang/ (clang -Werror, fuzz targets),
# build-tsan/ (ThreadSanitizer, clang, the threaded tests only).
.PHONY: all deps build run install uninstall deb test test-release test-asan test-clang test-tsan bench fuzz mutate mutate-map clean format

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_GEN := -G Ninja
CTEST := ctest --output-on-failure -j $(JOBS)

all: build

deps:
	@bash scripts/install-deps.sh

build/build.ninja: | deps
	cmake -S . -B build $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release

build: deps build/build.ninja
	cmake --build build -j $(JOBS)

run: build
	./build/bin/runlab demo

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the command, both libraries, headers,
# runlab.pc, the CMake package, man pages, bash completion and the data, under the
# GNUInstallDirs paths of PREFIX. `make uninstall` removes exactly what the last install
# from build/ wrote (build/install_manifest.txt, under the DESTDIR that install used).
PREFIX ?= /usr/local
# cmake --install lists paths without DESTDIR: the DESTDIR used is kept beside the manifest.
install: build
	DESTDIR="$(DESTDIR)" cmake --install build --prefix "$(PREFIX)"
	@printf '%s\n' "$(DESTDIR)" >build/install_destdir.txt

uninstall:
	@bash scripts/uninstall.sh build/install_manifest.txt "$(if $(DESTDIR),$(DESTDIR),$$(cat build/install_destdir.txt 2>/dev/null))"

# `make deb`: the Debian packages runlab, librunlab0 and librunlab-dev (CPack, cmake/deb.cmake)
# in build-deb/packages/, built for prefix /usr (multiarch library paths), without the tests.
build-deb/build.ninja: | deps
	cmake -S . -B build-deb $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DRUNLAB_TESTS=OFF

deb: build-deb/build.ninja
	cmake --build build-deb -j $(JOBS)
	cd build-deb && cpack -B packages
	@ls -1 build-deb/packages/*.deb

build-asan/build.ninja: | deps
	cmake -S . -B build-asan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=asan

build-clang/build.ninja: | deps
	CC=clang cmake -S . -B build-clang $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DRUNLAB_FUZZ=ON

build-tsan/build.ninja: | deps
	CC=clang cmake -S . -B build-tsan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=tsan

# clang first (warnings as errors + fuzz smoke runs), then the threaded tests under
# ThreadSanitizer, the whole suite under ASan/UBSan, then the whole suite in the Release
# build, whose summary closes the output.
test: deps
	$(MAKE) --no-print-directory test-clang
	$(MAKE) --no-print-directory test-tsan
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory test-release

test-clang: build-clang/build.ninja
	cmake --build build-clang -j $(JOBS)
	cd build-clang && $(CTEST) -L fuzz

# Only the threaded tests (tests/CMakeLists.txt, RL_THREADED_TESTS) are built and run:
# TSan slows everything 5-15 times.
test-tsan: build-tsan/build.ninja
	cmake --build build-tsan -j $(JOBS) --target threaded_tests
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(CTEST) -L threads

test-asan: build-asan/build.ninja
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 $(CTEST) -LE valgrind

test-release: build
	cd build && $(CTEST)

bench: deps build/build.ninja
	cmake --build build -j $(JOBS) --target run_benchmarks

# Every libFuzzer target for FUZZ_SECONDS each (default 60), FUZZ_JOBS at a time (default
# 2); prints executions, coverage and findings per target (scripts/fuzz.sh, docs/testing.md).
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
fuzz: build-clang/build.ninja
	cmake --build build-clang -j $(JOBS) --target $$(cd fuzz && ls fuzz_*.c | sed 's/[.]c$$//')
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) bash scripts/fuzz.sh

# Mutation testing: plants each bug of tests/mutants.txt in turn (build-mutate/, Release),
# runs the tests covering it first and the rest of the suite only for its survivors, prints
# the score and the survivors (docs/testing.md). `make mutate-map` builds the cached
# coverage map (build-coverage/, gcov) that picks the covering tests by line.
mutate: deps
	python3 tests/mutate.py

mutate-map: deps
	python3 tests/mutate.py --build-map

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-clang build-tsan

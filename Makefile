# The two commands of the README: `make demo` and `make test`. Both install what is missing first.
BUILD      ?= build
BUILD_SAN  ?= build-sanitize
CXX        := clang++-19
CC         := clang-19
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc)

.PHONY: setup configure build demo test test-sanitize bench bench-quick clean

setup:
	@bash scripts/setup.sh
	@bash scripts/setup-python.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=$(CXX) -DCMAKE_C_COMPILER=$(CC) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/examples/pi/pi_example
	@$(BUILD)/examples/nqueens/nqueens_example --n 14 --depth 3 --mode all
	@$(BUILD)/examples/fib/fib_example --n 24 --cutoff 14
	@$(BUILD)/examples/floorplan/floorplan_example --input examples/floorplan/inputs/input.15 --depth 4
	@bash examples/lease/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300

# ASan + UBSan build of the library and its tests (CI runs it after `make test`).
test-sanitize: setup
	@cmake -S . -B $(BUILD_SAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCPPLESS_SANITIZE=ON \
	  -DCMAKE_CXX_COMPILER=$(CXX) -DCMAKE_C_COMPILER=$(CC) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD_SAN) -j $(JOBS)
	@cd $(BUILD_SAN) && ctest --output-on-failure -j $(JOBS) --timeout 600 -LE no-sanitize

bench: build
	@bash bench/run.sh $(BUILD)

# The same suite with fewer rounds and smaller problems (minutes instead of tens of minutes).
bench-quick: build
	@bash bench/run.sh $(BUILD) --quick

clean:
	rm -rf $(BUILD) $(BUILD_SAN)

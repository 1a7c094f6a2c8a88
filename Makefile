# WeaselDB and its performance harness. Every binary lands in build/.
GO        ?= go
BUILD_DIR ?= build
CMDS      := $(notdir $(wildcard cmd/*))
TEST_TIMEOUT ?= 20m

.PHONY: all build test race unit arm64 bench fuzz fuzz-ci lint report gate clean manycore peers

all: build

build:
	@mkdir -p $(BUILD_DIR)
	$(GO) build -trimpath -o $(BUILD_DIR)/ $(addprefix ./cmd/,$(CMDS))

# The README's test command: lint, then every test under the race detector,
# then the arm64 checks.
test: lint race arm64

# The event loop's suites run once more on the io_uring backend (they fall
# back to epoll, and say so, where io_uring is unavailable).
URING_PKGS := ./server/eventloop ./server/app ./cmd/weaseldb
# The load tester's suites run on its default engine (io_uring, or epoll
# where the kernel refuses it) and once more on epoll.
LT_URING_PKGS := ./loadtester/ ./cmd/load_tester/
race: build
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	WEASELDB_TEST_IO_BACKEND=io_uring $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(URING_PKGS)
	LOADTESTER_TEST_IO_BACKEND=epoll $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(LT_URING_PKGS)

# Without the race detector: faster, for quick iteration.
unit: build
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# arm64: vet the whole tree for arm64, then run the tests of the packages
# with arm64 assembly (the spin loop, the pause), the event loop, the app
# and the load tester under qemu-user (WEASELDB_QEMU_USER tells a test that
# re-runs its own binary to run it through the emulator, and one of a
# kernel feature qemu-user does not pass on to skip, saying which). Without
# qemu-aarch64-static (Debian's qemu-user-static) only the vet runs, and it
# says so; ARM64_REQUIRED=1 (CI) makes its absence an error.
ARM64_PKGS := ./server/cpuwork ./server/pipeline ./server/eventloop ./server/app ./loadtester
arm64:
	GOARCH=arm64 $(GO) vet ./...
	@if command -v qemu-aarch64-static >/dev/null; then \
	  echo "GOARCH=arm64 go test -exec qemu-aarch64-static $(ARM64_PKGS)"; \
	  GOARCH=arm64 WEASELDB_QEMU_USER=qemu-aarch64-static $(GO) test -count=1 -timeout 10m -exec qemu-aarch64-static $(ARM64_PKGS); \
	elif [ -n "$(ARM64_REQUIRED)" ]; then \
	  echo "arm64: qemu-aarch64-static is not installed (apt-get install qemu-user-static) and ARM64_REQUIRED is set"; exit 1; \
	else \
	  echo "arm64: vetted only; the arm64 tests of $(ARM64_PKGS) need qemu-aarch64-static (apt-get install qemu-user-static)"; \
	fi

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./...

# A short pass of every fuzz target (FUZZTIME per target). A failure does not
# stop the pass: every failing target is listed at the end (exit 1 if any).
FUZZTIME ?= 10s
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# CI's brief pass (.ci/run): each target's seed corpus plus 2 s of new inputs.
fuzz-ci:
	@GO=$(GO) FUZZTIME=2s scripts/fuzz.sh

# gofmt, go vet, staticcheck, and the CI workflow through actionlint
# (staticcheck and actionlint pinned, built from the Go module proxy on
# first use; actionlint also runs shellcheck on the workflow's scripts
# where shellcheck is installed).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files -o --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 -no-color -oneline .github/workflows/ci.yml

# The main job: the threading report with short defaults: the seed's setup
# and the fitted one, 5 interleaved rounds of 4 s each (20 s of load per
# setup), then the rate curve (RATE_CURVE=0 skips it): about 3 minutes in all.
report: build
	DURATION=$${DURATION:-20} ROUNDS=$${ROUNDS:-5} SKIP_BUILD=1 BUILT_BY="make build BUILD_DIR=$(BUILD_DIR) (make report's prerequisite)" scripts/reproduce_threading_report.sh

gate: build
	$(BUILD_DIR)/gate $(GATE_ARGS)

# The whole anchors table in one run (docs/anchors.md, "The whole table in
# one run"): every server and client peer, interleaved rounds, instructions
# and system calls per request; build/anchors/peers.{json,md}, about 10
# minutes. SPLICE=1 writes it into README.md and docs/anchors.md too: on a
# quiet machine only.
peers:
	SPLICE=$(SPLICE) scripts/compare_peers.sh

# The dedicated-core path (pinned I/O loops and stages, the seed's 8 loops,
# the wait-strategy comparison's dedicated half) in a QEMU guest with CPUS
# (16) CPUs, checked and rendered as a functional check, never as speed:
# build/manycore/ (docs/manycore.md). Skips, saying so, without QEMU, a
# kernel image or a static busybox.
manycore:
	BUILD_DIR=$(BUILD_DIR) scripts/manycore.sh

clean:
	rm -rf $(BUILD_DIR)

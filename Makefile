# WeaselDB and its performance harness. Every binary lands in build/.
GO        ?= go
BUILD_DIR ?= build
CMDS      := $(notdir $(wildcard cmd/*))
TEST_TIMEOUT ?= 20m

.PHONY: all build test race unit bench fuzz lint report gate clean

all: build

build:
	@mkdir -p $(BUILD_DIR)
	$(GO) build -trimpath -o $(BUILD_DIR)/ $(addprefix ./cmd/,$(CMDS))

# The README's test command: lint, then every test under the race detector.
test: lint race

race: build
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

# Without the race detector: faster, for quick iteration.
unit: build
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./...

# A short pass of every fuzz target (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# gofmt, go vet, and the CI workflow through actionlint (pinned, built from
# the Go module proxy on first use; it also runs shellcheck on the
# workflow's scripts where shellcheck is installed).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files -o --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 -no-color -oneline .github/workflows/ci.yml

# The main job: the threading report with short defaults: the seed's setup
# and the fitted one, 5 interleaved rounds of 4 s each (20 s of load per
# setup), well under 3 minutes in all.
report: build
	DURATION=$${DURATION:-20} ROUNDS=$${ROUNDS:-5} SKIP_BUILD=1 scripts/reproduce_threading_report.sh

gate: build
	$(BUILD_DIR)/gate $(GATE_ARGS)

clean:
	rm -rf $(BUILD_DIR)

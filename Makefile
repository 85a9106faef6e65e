# nanobot on Temporal. Two commands do all the set-up: `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
DEV_SRC := $(shell find cmd/temporal-dev -name '*.go' -o -name go.mod -o -name go.sum)
DENDRITE_SRC := cmd/dendrite-dev/go.mod cmd/dendrite-dev/go.sum
NANOBOT_SRC := $(shell find . -path ./cmd/temporal-dev -prune -o -path ./cmd/dendrite-dev -prune -o -path ./bin -prune -o -path ./e2e -prune -o -path ./.git -prune -o \( -name '*.go' -o -name '*.md' -o -name go.mod -o -name go.sum -o -path '*/static/*' \) -print)
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
# goolm: the Matrix channel's end-to-end encryption in pure Go (mautrix's Olm/Megolm without cgo
# and libolm); a build without it skips encrypted Matrix rooms. Every go command here gets it.
export GOFLAGS := $(strip $(GOFLAGS) -tags=goolm)

.PHONY: all build run test unit integration bench bench-go e2e temporal-dev dendrite clean fmt vet memory-200 chaos soak chromium dovecot bwrap postgres fuzz

all: build

## build: bin/nanobot and bin/temporal-dev
build: $(BIN)/nanobot $(BIN)/temporal-dev

$(BIN)/nanobot: $(NANOBOT_SRC)
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $@ ./cmd/nanobot

## temporal-dev: the embedded Temporal server (a nested module; built once, ~4 min cold)
temporal-dev: $(BIN)/temporal-dev

$(BIN)/temporal-dev: $(DEV_SRC)
	@mkdir -p $(BIN)
	cd cmd/temporal-dev && $(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/temporal-dev .

## dendrite: the Matrix homeserver the Matrix channel's tests talk to (a nested
## module pinning dendrite; built once, ~1 min cold on 2 cores; CGO off: pure-Go
## SQLite, no C compiler needed and faster to build than cgo's sqlite3)
dendrite: $(BIN)/dendrite

$(BIN)/dendrite: $(DENDRITE_SRC)
	@mkdir -p $(BIN)
	cd cmd/dendrite-dev && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/dendrite github.com/matrix-org/dendrite/cmd/dendrite

## run: start the gateway on the embedded Temporal (chat on http://127.0.0.1:18790, UI on http://127.0.0.1:8233)
run: build
	@test -f "$${NANOBOT_CONFIG:-$$HOME/.nanobot/config.json}" || $(BIN)/nanobot onboard
	$(BIN)/nanobot gateway

## test: unit, workflow and integration tests against a real temporal-dev and the real peers
## (PostgreSQL, Dovecot, dendrite, Chromium, bwrap, and the npm peers when npm is present);
## ends with one line per peer: used, skipped (why), MISSING or not asked. A missing peer
## skips its tests with a WARNING, or fails them under CI=true or NANOBOT_REQUIRE_PEERS=1.
PEER_REPORT := $(BIN)/peers.report
test: build $(BIN)/dendrite chromium dovecot bwrap postgres
	@. e2e/apt-install.sh; npm="the npm peers (MCP servers, telegram-test-api, aimock) are missing: $$(peer_outcome 'their tests are')"; \
	if ! command -v npm >/dev/null 2>&1; then echo "WARNING: npm not found: $$npm (install Node.js, then run make e2e)"; \
	elif ! bash e2e/install.sh; then echo "WARNING: e2e/install.sh failed: $$npm"; fi
	@rm -f $(PEER_REPORT)
	@export NANOBOT_PEER_REPORT=$(PEER_REPORT) NANOBOT_TEST_DATABASE_URL=$$(cat $(BIN)/postgres.url 2>/dev/null); status=0; \
	(set -x; cd cmd/temporal-dev && $(GO) test -trimpath ./...) && \
	(set -x; NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev DENDRITE_BIN=$(BIN)/dendrite $(GO) test -trimpath -count=1 -timeout 15m ./...) || status=$$?; \
	$(GO) run -trimpath ./internal/peer/summarize $(PEER_REPORT); exit $$status

## chromium: headless Chromium for the browser tests (apt; warns and goes on where it cannot install)
chromium:
	@bash e2e/chromium.sh

## dovecot: Dovecot's IMAP server for the Email channel's tests (apt; warns and goes on where it cannot install)
dovecot:
	@bash e2e/dovecot.sh

## bwrap: bubblewrap for the exec sandbox's tests (apt; warns and goes on where it cannot install)
bwrap:
	@bash e2e/bwrap.sh

## postgres: a throwaway PostgreSQL cluster for the tests, its URL in bin/postgres.url
## (reused while it runs; apt-installs postgresql where it can; warns and goes on where it cannot)
postgres:
	@bash e2e/postgres.sh $(BIN)/postgres.url

## e2e: install the real MCP servers (npm, into e2e/node_modules) and run the tests that use them
## (peers required: a missing one fails)
e2e: build chromium dovecot
	bash e2e/install.sh
	NANOBOT_REQUIRE_PEERS=1 NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev $(GO) test -trimpath -count=1 -run 'E2E|EndToEnd' ./mcp/ ./integration/

## memory-200: the 200-turn conversation in a 4000-token window; prints prompt tokens per turn
memory-200: build
	NANOBOT_MEMORY_TURNS=200 NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev $(GO) test -trimpath -count=1 -v -run 'TestMemoryLastsTwoHundredTurns' ./integration/

## chaos: N worker SIGKILLs at random moments of multi-tool turns (make test runs 3);
## prints kills survived, duplicate side effects, lost messages and resume times
N ?= 50
chaos: build
	set -o pipefail; NANOBOT_CHAOS_KILLS=$(N) NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev $(GO) test -trimpath -count=1 -timeout 0 -v -run 'TestChaos' ./integration/ | grep -v '^=== '

## soak: SOAK_MINUTES (default 30) of Slack, Discord and web chat traffic (tools, approvals, subagents, cron)
## while a chaos loop kills and restarts the gateway, a worker, the workspace host, temporal-dev and a
## private PostgreSQL, each at least 5 times in 30 minutes; prints the table
SOAK_MINUTES ?= 30
soak: build
	set -o pipefail; NANOBOT_SOAK_MINUTES=$(SOAK_MINUTES) NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev $(GO) test -trimpath -count=1 -timeout 0 -v -run '^TestSoak$$' ./integration/ | grep -v '^=== '

## fuzz: every fuzz target for FUZZTIME each (seed corpora in each package's testdata/fuzz)
FUZZTIME ?= 30s
FUZZ_TARGETS := config:FuzzLoad session:FuzzSessionLoad tools:FuzzCoerceArgs tools:FuzzResolvePath \
	tools:FuzzCommandGuard tools:FuzzSSRFClassify governance:FuzzPrepareKeepsToolPairsValid \
	channels/markdown:FuzzTelegramHTML channels/markdown:FuzzSlackMrkdwn \
	channels/markdown:FuzzMatrixHTML channels/markdown:FuzzSplit
fuzz:
	@set -eo pipefail; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name (./$$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$pkg/ 2>&1 | tail -3; done

## bench: B1..B6 of issue 11, durable beside an in-process baseline, printed as one Markdown table
bench: build postgres
	@NANOBOT_TEST_DATABASE_URL=$$(cat $(BIN)/postgres.url 2>/dev/null) NANOBOT_BENCH_TABLE=1 NANOBOT_BENCH_COMMIT=$(VERSION) NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev $(GO) test -trimpath -count=1 -v -timeout 30m -run '^TestBenchTable$$' ./integration/ | grep -v '^ok\|^PASS\|^=== RUN\|^--- PASS'

## bench-go: the Go benchmarks (go test -bench)
bench-go: build
	NANOBOT_BIN=$(BIN)/nanobot TEMPORAL_DEV_BIN=$(BIN)/temporal-dev $(GO) test -trimpath -run '^$$' -bench . -benchmem ./...

vet:
	$(GO) vet ./...
	cd cmd/temporal-dev && $(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)

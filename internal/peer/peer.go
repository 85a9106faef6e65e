// Package peer is how a test says which real third-party peer it ran
// against (PostgreSQL, Dovecot, dendrite, Chromium, bwrap, aimock,
// telegram-test-api, the npm MCP servers, npm itself) or that the peer is missing. A
// developer without a peer gets a skip with a WARNING; under CI (CI=true) or
// NANOBOT_REQUIRE_PEERS=1 a missing peer fails the test, naming what is
// missing, so a green run cannot hide a peer that was never set up.
// `make test` collects every verdict in NANOBOT_PEER_REPORT and prints one
// line per peer at its end.
package peer

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Names of the peers, as the report prints them.
const (
	PostgreSQL  = "postgresql"
	Dovecot     = "dovecot"
	Dendrite    = "dendrite"
	Chromium    = "chromium"
	Bwrap       = "bwrap"
	Aimock      = "aimock"
	TelegramAPI = "telegram-test-api"
	MCPServers  = "mcp-servers"
	NPM         = "npm"
)

// ReportEnv names the file each verdict is appended to (one line each).
const ReportEnv = "NANOBOT_PEER_REPORT"

// Required reports whether a missing peer fails the test instead of skipping it.
func Required() bool {
	return truthy(os.Getenv("NANOBOT_REQUIRE_PEERS")) || truthy(os.Getenv("CI"))
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Used records that the test runs against the peer.
func Used(t testing.TB, name string) {
	t.Helper()
	record(t, name, "used", "")
}

// Missing stops the test because its peer cannot be had here: a failure
// when peers are required, else a skip with a WARNING. why says what is
// missing and how to get it ("bwrap is not installed: run make bwrap").
func Missing(t testing.TB, name, why string) {
	t.Helper()
	if Required() {
		record(t, name, "missing", why)
		t.Fatalf("peer %s is missing (peers are required under CI or NANOBOT_REQUIRE_PEERS=1): %s", name, why)
	}
	record(t, name, "skipped", why)
	t.Skipf("WARNING: peer %s is missing, test SKIPPED: %s", name, why)
}

// Broken fails the test, whatever the mode: the peer was promised (its
// variable set, its binary built) but does not work. It is reported
// missing, so the summary does not call it "not asked".
func Broken(t testing.TB, name, why string) {
	t.Helper()
	record(t, name, "missing", why)
	t.Fatalf("peer %s does not work: %s", name, why)
}

// record appends "name<TAB>verdict<TAB>test<TAB>why" to the report file.
// O_APPEND writes of one short line are atomic, so the parallel test
// processes of one `go test ./...` share the file safely.
func record(t testing.TB, name, verdict, why string) {
	path := os.Getenv(ReportEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("peer report %s: %v", path, err)
		return
	}
	defer f.Close()
	line := fmt.Sprintf("%s\t%s\t%s\t%s\n", name, verdict, t.Name(), strings.ReplaceAll(why, "\n", " "))
	if _, err := f.WriteString(line); err != nil {
		t.Logf("peer report %s: %v", path, err)
	}
}

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The root module's internal/peer rule, copied: a nested module cannot import another module's internal packages.

// peerRequired: under CI=true or NANOBOT_REQUIRE_PEERS=1 a missing peer fails its test.
func peerRequired() bool {
	for _, v := range []string{os.Getenv("NANOBOT_REQUIRE_PEERS"), os.Getenv("CI")} {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "1", "true", "yes", "on":
			return true
		}
	}
	return false
}

// peerUsed records that the test runs against the peer.
func peerUsed(t testing.TB, name string) { recordPeer(t, name, "used", "") }

// peerMissing fails the test where peers are required, else skips it with a WARNING.
func peerMissing(t testing.TB, name, why string) {
	t.Helper()
	if peerRequired() {
		recordPeer(t, name, "missing", why)
		t.Fatalf("peer %s is missing (peers are required under CI or NANOBOT_REQUIRE_PEERS=1): %s", name, why)
	}
	recordPeer(t, name, "skipped", why)
	t.Skipf("WARNING: peer %s is missing, test SKIPPED: %s", name, why)
}

// recordPeer appends one line to NANOBOT_PEER_REPORT, as internal/peer does.
func recordPeer(t testing.TB, name, verdict, why string) {
	path := os.Getenv("NANOBOT_PEER_REPORT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("peer report %s: %v", path, err)
		return
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s\t%s\t%s\t%s\n", name, verdict, t.Name(), strings.ReplaceAll(why, "\n", " ")); err != nil {
		t.Logf("peer report %s: %v", path, err)
	}
}

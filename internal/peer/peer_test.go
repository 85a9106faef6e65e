package peer

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// helperEnv makes this test binary, run again by runHelper, play a test
// whose peer is used or missing instead of running the suite.
const helperEnv = "NANOBOT_PEER_HELPER"

// TestPeerHelper is the test runHelper runs in a child process: it does
// nothing unless helperEnv says which verdict to give.
func TestPeerHelper(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "missing":
		Missing(t, Dovecot, "dovecot is not installed: run make dovecot")
		t.Log("after Missing: the test went on") // never reached: Missing stops the test
	case "used":
		Used(t, PostgreSQL)
	case "broken":
		Broken(t, PostgreSQL, "the cluster does not answer")
	}
}

// runHelper runs TestPeerHelper in a child process with env added to a
// clean peer environment; it returns the child's output, whether it
// passed, and the report file's lines.
func runHelper(t *testing.T, verdict string, env ...string) (string, bool, []string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "peers.report")
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeerHelper$", "-test.v", "-test.count=1")
	cmd.Env = append(withoutPeerEnv(os.Environ()), helperEnv+"="+verdict, ReportEnv+"="+report)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the helper test: %v\n%s", err, out)
	}
	data, readErr := os.ReadFile(report)
	if readErr != nil && !os.IsNotExist(readErr) {
		t.Fatalf("read the report: %v", readErr)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	return string(out), err == nil, lines
}

// withoutPeerEnv drops what would make the child require its peers, so
// each case sets exactly the variables it is about.
func withoutPeerEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "CI=") || strings.HasPrefix(kv, "NANOBOT_REQUIRE_PEERS=") || strings.HasPrefix(kv, ReportEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Where peers are required (CI, or NANOBOT_REQUIRE_PEERS), a missing one
// fails the test, naming the peer and what to do, and is reported missing.
func TestMissingPeerFailsWhereRequired(t *testing.T) {
	for _, env := range []string{"CI=true", "NANOBOT_REQUIRE_PEERS=1"} {
		t.Run(env, func(t *testing.T) {
			out, passed, report := runHelper(t, "missing", env)
			require.False(t, passed, "a missing peer must fail the test under %s:\n%s", env, out)
			require.Contains(t, out, "--- FAIL: TestPeerHelper")
			require.Contains(t, out, "peer dovecot is missing")
			require.Contains(t, out, "run make dovecot", "the failure says how to get the peer")
			require.NotContains(t, out, "after Missing", "Missing stops the test")
			require.Equal(t, []string{"dovecot\tmissing\tTestPeerHelper\tdovecot is not installed: run make dovecot"}, report)
		})
	}
}

// Elsewhere (a developer's machine) it skips with a WARNING and is reported skipped.
func TestMissingPeerSkipsLocally(t *testing.T) {
	for _, env := range []string{"CI=", "CI=false", "NANOBOT_REQUIRE_PEERS=0"} {
		t.Run(env, func(t *testing.T) {
			out, passed, report := runHelper(t, "missing", env)
			require.True(t, passed, "a missing peer only skips without CI:\n%s", out)
			require.Contains(t, out, "--- SKIP: TestPeerHelper")
			require.Contains(t, out, "WARNING: peer dovecot is missing, test SKIPPED: dovecot is not installed: run make dovecot")
			require.Equal(t, []string{"dovecot\tskipped\tTestPeerHelper\tdovecot is not installed: run make dovecot"}, report)
		})
	}
}

// A peer found is reported used, and the test goes on.
func TestUsedPeerIsReported(t *testing.T) {
	out, passed, report := runHelper(t, "used", "CI=true")
	require.True(t, passed, out)
	require.Contains(t, out, "--- PASS: TestPeerHelper")
	require.Equal(t, []string{"postgresql\tused\tTestPeerHelper\t"}, report)
}

// A peer promised but not working fails the test even locally.
func TestBrokenPeerFailsEverywhere(t *testing.T) {
	out, passed, report := runHelper(t, "broken", "CI=")
	require.False(t, passed, out)
	require.Contains(t, out, "peer postgresql does not work: the cluster does not answer")
	require.Equal(t, []string{"postgresql\tmissing\tTestPeerHelper\tthe cluster does not answer"}, report)
}

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		ci, require string
		want        bool
	}{
		{"", "", false}, {"true", "", true}, {"1", "", true}, {"false", "", false},
		{"", "1", true}, {"", "yes", true}, {"false", "1", true}, {"", "0", false},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("NANOBOT_REQUIRE_PEERS", c.require)
		require.Equal(t, c.want, Required(), "CI=%q NANOBOT_REQUIRE_PEERS=%q", c.ci, c.require)
	}
}

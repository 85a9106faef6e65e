package peer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// One line per peer, every peer listed: what the tests said about it, the
// worst verdict first, and "not asked" for a peer no test needed.
func TestSummary(t *testing.T) {
	report := "postgresql\tused\tTestA\t\n" +
		"postgresql\tused\tTestB\t\n" +
		"postgresql\tused\tTestB\t\n" +
		"dovecot\tskipped\tTestC\tdovecot is not installed: run make dovecot\n" +
		"dovecot\tskipped\tTestD\tdovecot is not installed: run make dovecot\n" +
		"bwrap\tused\tTestE\t\n" +
		"bwrap\tmissing\tTestF\tbwrap cannot run here\n" +
		"half a line\n" +
		"newpeer\tused\tTestG\t\n"
	require.Equal(t, []string{
		"peer postgresql         used by 2 tests",
		"peer dovecot            skipped by 2 tests: dovecot is not installed: run make dovecot",
		"peer dendrite           not asked",
		"peer chromium           not asked",
		"peer bwrap              MISSING: failed 1 test (used by 1 test): bwrap cannot run here",
		"peer aimock             not asked",
		"peer telegram-test-api  not asked",
		"peer mcp-servers        not asked", "peer npm                not asked",
		"peer newpeer            used by 1 test",
	}, Summary(report))
}

func TestSummaryOfNoReport(t *testing.T) {
	lines := Summary("")
	require.Len(t, lines, len(Names))
	for _, l := range lines {
		require.Contains(t, l, "not asked")
	}
}

package residency

import (
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
)

// fileRSS is this process's resident pages of mapped files, in kB.
func fileRSS(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc here")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "RssFile:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

func TestDroppedPagesLeaveRSSAndTheProcessRuns(t *testing.T) {
	before := fileRSS(t)
	n := DropExecutablePages(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if n == 0 {
		t.Fatal("no read-only mapping of the executable was advised")
	}
	after := fileRSS(t)
	if after >= before {
		t.Fatalf("file-backed RSS %d kB after dropping, %d kB before", after, before)
	}
	// The code faults back in: the process goes on working, a map and a sort included.
	m := map[string]int{}
	for i := range 1000 {
		m[strconv.Itoa(i)] = i
	}
	if len(m) != 1000 {
		t.Fatal("the map lost entries")
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLastLogLineSaysWhyInOneLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "temporal-dev.log")
	require.NoError(t, os.WriteFile(p, []byte("starting\nopen temporal.db: unable to open database file: permission denied\n\n"), 0o600))
	require.Equal(t, "open temporal.db: unable to open database file: permission denied", lastLogLine(p))
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", 1000)), 0o600))
	require.Len(t, []rune(lastLogLine(p)), 301)
	require.Equal(t, "no log", lastLogLine(filepath.Join(t.TempDir(), "missing")))
}

package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"synced": Write, "unsynced": WriteUnsynced} {
		t.Run(name, func(t *testing.T) { testReplaces(t, write) })
	}
}

func testReplaces(t *testing.T, write func(string, []byte, os.FileMode) error) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	require.NoError(t, write(p, []byte("one"), 0o600))
	require.NoError(t, write(p, []byte("two"), 0o600))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "two", string(data))
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temp file left behind")
	require.Error(t, write(filepath.Join(dir, "missing", "f"), nil, 0o600))
}

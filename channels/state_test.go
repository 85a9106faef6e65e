package channels

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCursorSurvivesARestart: a position saved is what a cursor on the
// reopened state loads; an unreadable state is an error, not a fresh
// start; a position that cannot be saved is logged and the stream goes on.
func TestCursorSurvivesARestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json")
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	c := Cursor{State: OpenFileState(file), Key: "lastEventId", Log: log}
	pos, err := c.Load()
	require.NoError(t, err)
	require.Empty(t, pos)
	c.Save("41")
	c.Save("42")
	pos, err = Cursor{State: OpenFileState(file), Key: "lastEventId", Log: log}.Load()
	require.NoError(t, err)
	require.Equal(t, "42", pos)
	require.Empty(t, logged.String())

	require.NoError(t, os.WriteFile(file, []byte("{broken"), 0o600))
	broken := Cursor{State: OpenFileState(file), Key: "lastEventId", Log: log}
	_, err = broken.Load()
	require.ErrorContains(t, err, "lastEventId")
	broken.Save("43")
	require.Contains(t, logged.String(), "stream position not saved")
}

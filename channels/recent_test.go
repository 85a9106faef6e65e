package channels

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecentKeysDropRepeats(t *testing.T) {
	r := NewRecentKeys(3)
	require.False(t, r.Add("10"))
	require.True(t, r.Add("10"), "the same update again")
	require.False(t, r.Add("7"), "an older ID is still new (IDs restart at random after a quiet week)")
	require.False(t, r.Add("11"))
	require.False(t, r.Add("12"))
	require.False(t, r.Add("10"), "forgotten once more than n newer keys came")
	require.True(t, r.Add("12"))
	require.True(t, r.Add("", "11"), "a redelivery matched by any of its keys; empty keys skipped")
	require.False(t, r.Has(""))
}

func TestSeenSetPicksSharedThenFileThenMemory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "channels", "x-events.json")
	shared := NewRecentKeys(8)
	var opened []string
	withDB := Deps{Seen: func(set string, n int) SeenKeys { opened = append(opened, set); return shared }}

	require.Same(t, shared, withDB.SeenSet("x-events", 8, file), "the database's set wins over the file")
	require.Equal(t, []string{"x-events"}, opened, "opened under the channel's name")
	withDB.SeenSet("x-events", 8, file).Add("a")
	require.NoFileExists(t, file, "a shared set writes no file under the home")

	onFiles := Deps{}
	require.False(t, onFiles.SeenSet("x-events", 8, file).Add("b"))
	require.FileExists(t, file)
	require.True(t, onFiles.SeenSet("x-events", 8, file).Has("b"), "the file keeps the key across a reopen")

	inMemory := Deps{}.SeenSet("x-events", 8, "")
	require.False(t, inMemory.Add("b"), "a set in memory starts empty")
	require.False(t, Deps{}.SeenSet("x-events", 8, "").Has("b"), "and is its own")
}

func TestStateFileIsUnderTheHome(t *testing.T) {
	require.Equal(t, filepath.Join("/h", "channels", "qq-groups.json"), Deps{Home: "/h"}.StateFile("qq-groups.json"))
	require.Empty(t, Deps{}.StateFile("qq-groups.json"), "no home: nothing kept on disk")
}

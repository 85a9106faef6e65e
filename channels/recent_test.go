package channels

import (
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

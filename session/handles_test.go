package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHandlesAreStableNamesNotKeys(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var sources []HandleSource
	for i := range 50 {
		sources = append(sources, HandleSource{Key: fmt.Sprintf("telegram:%d", 1000+i), CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	first := map[string]string{}
	seen := map[string]bool{}
	for _, h := range Handles(sources) {
		require.Regexp(t, `^[a-z]{6}$`, h.Handle, "three syllables, nothing of the key")
		require.False(t, seen[h.Handle], "unique: %s", h.Handle)
		seen[h.Handle] = true
		first[h.Key] = h.Handle
	}
	newer := append(sources, HandleSource{Key: "slack:C1", CreatedAt: t0.Add(time.Hour)})
	for _, h := range Handles(newer) {
		if want, ok := first[h.Key]; ok {
			require.Equal(t, want, h.Handle, "a new session moves no older one's handle")
		}
	}

	// A stored handle (nanobot's) wins; a duplicate stored one is redrawn for the younger session.
	stored := []HandleSource{
		{Key: "a:1", CreatedAt: t0, Stored: "@Bodira"},
		{Key: "a:2", CreatedAt: t0.Add(time.Minute), Stored: "bodira"},
		{Key: "a:3", CreatedAt: t0.Add(2 * time.Minute), Stored: "x!"},
	}
	got := map[string]string{}
	for _, h := range Handles(stored) {
		got[h.Key] = h.Handle
	}
	require.Equal(t, "bodira", got["a:1"])
	require.NotEqual(t, "bodira", got["a:2"])
	require.Regexp(t, `^[a-z]{6}$`, got["a:3"], "an invalid stored handle is redrawn")

	for in, want := range map[string]string{" @KuSiSa ": "kusisa", "bodira": "bodira"} {
		got, err := NormalizeHandle(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"", "@ab", "telegram:1", "toolonghandlenamexyz"} {
		_, err := NormalizeHandle(bad)
		require.ErrorIs(t, err, ErrBadHandle, bad)
	}
}

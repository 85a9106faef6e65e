package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetentionDefaultsZeroAndTypos(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (*Config, []Warning, error) {
		p := filepath.Join(dir, "config.json")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return Load(p)
	}
	cfg, warnings, err := load(`{}`)
	require.NoError(t, err)
	require.Empty(t, warnings)
	day := 24 * time.Hour
	require.Equal(t, Ages{Media: 30 * day, Temp: 24 * time.Hour, Sessions: 90 * day, Temporal: 3 * day, Interval: 24 * time.Hour}, cfg.Retention.Ages())

	cfg, warnings, err = load(`{"retention": {"mediaDays": 0, "sessionDays": 7, "mediaDay": 3}}`)
	require.NoError(t, err)
	a := cfg.Retention.Ages()
	require.Zero(t, a.Media, "0 keeps media forever")
	require.Equal(t, 7*day, a.Sessions)
	require.Equal(t, 24*time.Hour, a.Temp, "a key left out keeps its default")
	require.Len(t, warnings, 1)
	require.Equal(t, "retention.mediaDay", warnings[0].Key, "a typo is named")

	_, _, err = load(`{"retention": {"tempHours": "a day"}}`)
	require.ErrorContains(t, err, "retention.tempHours")
	require.ErrorContains(t, err, filepath.Join(dir, "config.json"))
}

// TestRetentionIsNotWrittenUnlessSet: onboard's file stays nanobot's shape.
func TestRetentionIsNotWrittenUnlessSet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, Save(p, Default()))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(data), "retention"), "a default config carries no retention block")
}

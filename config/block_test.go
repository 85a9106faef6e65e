package config

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// A key this build reads but does nothing with is warned about once the
// config gives it a value other than its default; the default says nothing.
func TestUnusedKeyWarnsWhenItIsSet(t *testing.T) {
	type block struct {
		Enabled  bool     `json:"enabled"`
		MediaDir string   `json:"mediaDir" unused:"files go to the workspace"`
		Chunk    int      `json:"chunk" unused:"downloads are whole"`
		Hosts    []string `json:"hosts" unused:"nothing is fetched"`
	}
	c := Default()
	c.Path = "/home/u/.nanobot/config.json"
	c.Channels.Other = map[string]json.RawMessage{"sample": json.RawMessage(`{"enabled":true,"media_dir":"/srv/media","chunk":4,"hosts":[]}`)}
	b := block{Chunk: 4}
	warnings, err := c.ChannelBlock("sample", &b)
	require.NoError(t, err)
	require.Equal(t, "/srv/media", b.MediaDir, "the value is still read")
	require.Len(t, warnings, 1, "chunk holds its default and hosts is empty: no warning")
	require.Equal(t, "channels.sample.media_dir", warnings[0].Key)
	require.Equal(t, "has no effect in this build: files go to the workspace", warnings[0].Msg)
}

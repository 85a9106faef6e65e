package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTranscriptionBlock: nanobot's keys and defaults, and a clear error
// naming the key for a value its schema refuses.
func TestTranscriptionBlock(t *testing.T) {
	c, _, err := LoadWithEnv(writeConfig(t, `{"transcription": {"provider": "openai", "language": "de", "maxDurationSec": 300}}`), nil)
	require.NoError(t, err)
	require.Equal(t, Transcription{Enabled: true, Provider: "openai", Language: "de", MaxDurationSec: 300, MaxUploadMB: 25}, c.Transcription)
	for content, key := range map[string]string{
		`{"transcription": {"maxDurationSec": 0}}`:      "transcription.maxDurationSec",
		`{"transcription": {"maxUploadMb": 101}}`:       "transcription.maxUploadMb",
		`{"transcription": {"language": "German"}}`:     "transcription.language",
		`{"transcription": {"enabled": "yes"}}`:         "transcription.enabled",
		`{"channels": {"transcriptionLanguage": "EN"}}`: "channels.transcriptionLanguage",
	} {
		_, _, err := LoadWithEnv(writeConfig(t, content), nil)
		require.ErrorContains(t, err, key, content)
	}
}

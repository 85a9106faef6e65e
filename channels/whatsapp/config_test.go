package whatsapp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/channeltest"
)

// nanobot's defaults: groupPolicy open, the store under the home.
func TestConfigDefaults(t *testing.T) {
	deps, _ := depsFor(t, nil)
	c, err := readConfig(deps.Config)
	require.NoError(t, err)
	require.Equal(t, "open", c.GroupPolicy)
	require.Empty(t, c.DatabasePath)
}

// A groupPolicy nanobot does not know, or a phone number that is none, fails at start naming the key.
func TestConfigInvalid(t *testing.T) {
	channeltest.CheckBlocks(t, Name, map[string]string{
		`{"groupPolicy": "allowlist"}`: "channels.whatsapp.groupPolicy",
		`{"phoneNumber": "12"}`:        "channels.whatsapp.phoneNumber",
	}, nil)
}

// The Node bridge's keys load, and are named as ignored.
func TestConfigBridgeKeysWarned(t *testing.T) {
	deps, logs := depsFor(t, map[string]any{"bridgeUrl": "ws://localhost:3001", "bridgeToken": "secret"})
	warnings, err := check(deps.Config)
	require.NoError(t, err)
	require.Len(t, warnings, 2)
	require.Equal(t, "channels.whatsapp.bridgeUrl", warnings[0].Key)
	require.Contains(t, warnings[0].Msg, "nanobot channels login whatsapp")
	_, err = New(deps)
	require.NoError(t, err)
	require.Contains(t, logs.String(), "channels.whatsapp.bridgeToken is ignored")
	require.NotContains(t, logs.String(), "secret")
}

// Phone numbers are compared as bare digits; LIDs and groups are not phone numbers.
func TestPhoneDigits(t *testing.T) {
	for in, want := range map[string]string{
		"+1 555 123 4567": "15551234567", "1-555-123-4567": "15551234567", "15551234567@s.whatsapp.net": "15551234567",
		"15551234567:12@s.whatsapp.net": "15551234567", "+44 (20) 7946.0958": "442079460958",
		"1234@lid": "", "120363@g.us": "", "*": "", "alice": "",
	} {
		require.Equal(t, want, phoneDigits(in), in)
	}
}

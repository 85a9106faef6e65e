package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// channelState is a row of `nanobot channels status --json`.
type channelState struct {
	Channel   string    `json:"channel"`
	Enabled   bool      `json:"enabled"`
	Missing   []string  `json:"missing"`
	Connected string    `json:"connected"`
	LastEvent time.Time `json:"lastEvent"`
}

// channelStates runs `nanobot channels status --json` on a home, by channel.
func channelStates(t *testing.T, env []string) map[string]channelState {
	t.Helper()
	out, errOut, code := runNanobot(t, env, "channels", "status", "--json")
	require.Equal(t, 0, code, errOut)
	var rows []channelState
	require.NoError(t, json.Unmarshal([]byte(out), &rows), out)
	byName := map[string]channelState{}
	for _, r := range rows {
		byName[r.Channel] = r
	}
	return byName
}

// requireChannelsUp waits until the running gateway reports each channel
// connected with a last event (its status file is rewritten every 5 s).
func requireChannelsUp(t *testing.T, env []string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		states, up := channelStates(t, env), true
		for _, n := range names {
			if s := states[n]; !s.Enabled || s.Connected != "yes" || s.LastEvent.IsZero() {
				up = false
			}
		}
		if up {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("channels status never showed %v connected with an event: %+v", names, states)
		}
		time.Sleep(250 * time.Millisecond) // polling a file the gateway rewrites every 5 s
	}
}

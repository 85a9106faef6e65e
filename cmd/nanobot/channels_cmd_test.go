package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

// channelsHome is a nanobot home whose config enables Discord with a token
// and Matrix without one.
func channelsHome(t *testing.T) (home, cfgPath string) {
	t.Helper()
	home = t.TempDir()
	cfgPath = filepath.Join(home, "config.json")
	cfg := map[string]any{"channels": map[string]any{
		"discord": map[string]any{"enabled": true, "token": "discord-token-1234"},
		"matrix":  map[string]any{"enabled": true, "homeserver": "http://127.0.0.1:1"},
	}}
	data, _ := json.Marshal(cfg)
	require.NoError(t, os.WriteFile(cfgPath, data, 0o600))
	return home, cfgPath
}

// statusRow reads a channel's row of the table by the header's columns.
func statusRow(t *testing.T, out, name string) map[string]string {
	t.Helper()
	lines := strings.Split(out, "\n")
	header := lines[0]
	cols := []string{"CHANNEL", "ENABLED", "CREDENTIALS", "CONNECTED", "LAST EVENT"}
	for _, line := range lines[1:] {
		if f := strings.Fields(line); len(f) == 0 || f[0] != name {
			continue
		}
		row := map[string]string{}
		for i, c := range cols {
			from, to := strings.Index(header, c), len(line)
			if i+1 < len(cols) {
				to = min(strings.Index(header, cols[i+1]), len(line))
			}
			row[c] = strings.TrimSpace(line[from:to])
		}
		return row
	}
	t.Fatalf("no row for %s in\n%s", name, out)
	return nil
}

// `nanobot channels status` lists every registered channel with what the
// config says and what the running gateways wrote; a gateway's stale file
// counts as not running.
func TestChannelsStatusMergesConfigAndRunningGateways(t *testing.T) {
	home, cfgPath := channelsHome(t)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"--config", cfgPath, "channels", "status"}, nil, &out, &errOut), errOut.String())
	require.Equal(t, map[string]string{"CHANNEL": "discord", "ENABLED": "yes", "CREDENTIALS": "yes", "CONNECTED": "-", "LAST EVENT": "-"},
		statusRow(t, out.String(), "discord"))
	require.Contains(t, statusRow(t, out.String(), "matrix")["CREDENTIALS"], "missing channels.matrix.")
	require.Equal(t, "no", statusRow(t, out.String(), "telegram")["ENABLED"])
	require.Contains(t, out.String(), "No gateway is running")
	for _, s := range channels.Specs() {
		if s.New != nil {
			statusRow(t, out.String(), s.Name)
		}
	}

	up, down := true, false
	last := time.Now().UTC().Add(-3 * time.Second)
	require.NoError(t, channels.WriteStatus(home, channels.ProcessStatus{PID: 4242, Updated: time.Now().UTC(), Channels: []channels.State{
		{Name: "discord", Connected: &up, LastEvent: last}, {Name: "matrix", Connected: &down}, {Name: "web"},
	}}))
	require.NoError(t, channels.WriteStatus(home, channels.ProcessStatus{PID: 4243, Updated: time.Now().UTC().Add(-time.Minute), Channels: []channels.State{
		{Name: "telegram", Connected: &up},
	}}))
	out.Reset()
	require.Equal(t, 0, run([]string{"--config", cfgPath, "channels", "status"}, nil, &out, &errOut), errOut.String())
	d := statusRow(t, out.String(), "discord")
	require.Equal(t, "yes", d["CONNECTED"])
	require.Contains(t, d["LAST EVENT"], last.Local().Format("15:04:05"))
	require.Equal(t, "no", statusRow(t, out.String(), "matrix")["CONNECTED"])
	require.Equal(t, "running", statusRow(t, out.String(), "web")["CONNECTED"])
	require.Equal(t, "-", statusRow(t, out.String(), "telegram")["CONNECTED"], "a stale file is a gateway that is gone")
	require.NotContains(t, out.String(), "No gateway is running")

	out.Reset()
	require.Equal(t, 0, run([]string{"--config", cfgPath, "channels", "status", "--json"}, nil, &out, &errOut), errOut.String())
	var rows []channelRow
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows), out.String())
	byName := map[string]channelRow{}
	for _, r := range rows {
		byName[r.Channel] = r
	}
	require.Equal(t, "yes", byName["discord"].Connected)
	require.True(t, byName["discord"].Enabled)
	require.WithinDuration(t, last, byName["discord"].LastEvent, time.Second)
	require.NotEmpty(t, byName["matrix"].Missing)
	require.Equal(t, "-", byName["telegram"].Connected)
}

func TestChannelsLoginNamesWhatItCannotDo(t *testing.T) {
	_, cfgPath := channelsHome(t)
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run([]string{"--config", cfgPath, "channels", "login", "nosuch"}, nil, &out, &errOut))
	require.Contains(t, errOut.String(), `unknown channel "nosuch"`)
	errOut.Reset()
	require.Equal(t, 1, run([]string{"--config", cfgPath, "channels", "login", "discord"}, nil, &out, &errOut))
	require.Contains(t, errOut.String(), "discord needs no login")
	require.Equal(t, 2, run([]string{"--config", cfgPath, "channels", "wat"}, nil, &out, &errOut))
}

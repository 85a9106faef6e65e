package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimezoneFollowsNanobotsModes mirrors nanobot's tests/config/test_timezone.py:
// a new config detects the host's zone, a config naming a zone keeps it, an
// explicit "auto" detects again, and a bad zone is an error naming the key.
func TestTimezoneFollowsNanobotsModes(t *testing.T) {
	host := []string{"TZ=Asia/Shanghai"}
	tests := []struct {
		name, file   string
		env          []string
		zone, mode   string
		errSubstring string
	}{
		{name: "no file detects the host", file: "", env: host, zone: "Asia/Shanghai", mode: "auto"},
		{name: "no timezone detects the host", file: `{"agents":{"defaults":{"model":"m"}}}`, env: host, zone: "Asia/Shanghai", mode: "auto"},
		{name: "a named zone is manual", file: `{"agents":{"defaults":{"timezone":"America/New_York"}}}`, env: host, zone: "America/New_York", mode: "manual"},
		{name: "auto replaces the written zone", file: `{"agents":{"defaults":{"timezone":"UTC","timezoneMode":"auto"}}}`, env: host, zone: "Asia/Shanghai", mode: "auto"},
		{name: "snake case counts", file: `{"agents":{"defaults":{"timezone":"Europe/Paris","timezone_mode":"manual"}}}`, env: host, zone: "Europe/Paris", mode: "manual"},
		{name: "env names a zone", env: append([]string{"NANOBOT_AGENTS__DEFAULTS__TIMEZONE=Asia/Tokyo"}, host...), zone: "Asia/Tokyo", mode: "manual"},
		{name: "UTC aliases fold", env: []string{"TZ=Etc/UTC"}, zone: "UTC", mode: "auto"},
		{name: "a POSIX TZ colon is dropped", env: []string{"TZ=:Europe/Berlin"}, zone: "Europe/Berlin", mode: "auto"},
		{name: "unknown zone", file: `{"agents":{"defaults":{"timezone":"Mars/Olympus"}}}`, env: host, errSubstring: `agents.defaults.timezone: unknown timezone "Mars/Olympus"`},
		{name: "unknown mode", file: `{"agents":{"defaults":{"timezoneMode":"sometimes"}}}`, env: host, errSubstring: `agents.defaults.timezoneMode: "sometimes" is not one of auto, manual`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file)
			if tc.file == "" {
				path += ".missing"
			}
			cfg, _, err := LoadWithEnv(path, tc.env)
			if tc.errSubstring != "" {
				require.ErrorContains(t, err, tc.errSubstring)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.zone, cfg.Agents.Defaults.Timezone)
			require.Equal(t, tc.mode, cfg.Agents.Defaults.TimezoneMode)
			require.Equal(t, tc.zone, cfg.TurnSettings().Timezone)
		})
	}
}

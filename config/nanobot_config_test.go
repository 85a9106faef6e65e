package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/nanobot-every-key.warnings")

// TestNanobotsOnboardConfigLoadsWithoutAWord: the config `nanobot onboard`
// writes (nanobot's schema defaults, testdata/nanobot-onboard.json) has no
// unknown key and no unsupported one.
func TestNanobotsOnboardConfigLoadsWithoutAWord(t *testing.T) {
	cfg, warns, err := LoadWithEnv("testdata/nanobot-onboard.json", []string{"TZ=Europe/Paris"})
	require.NoError(t, err)
	require.Empty(t, warningStrings(warns))
	require.Equal(t, "Europe/Paris", cfg.Agents.Defaults.Timezone, "timezoneMode auto takes the host's zone")
	require.Equal(t, int32(3), cfg.TurnSettings().SendMaxRetries)
}

// TestEveryNanobotKeySetNamesTheUnsupportedOnes loads a config with every
// key of nanobot's schema set to something other than its default
// (testdata/nanobot-every-key.json): the keys this build does not act on
// are each named in one warning, the golden file lists them
// (go test ./config -run EveryNanobotKey -update rewrites it).
func TestEveryNanobotKeySetNamesTheUnsupportedOnes(t *testing.T) {
	cfg, warns, err := LoadWithEnv("testdata/nanobot-every-key.json", []string{"TZ=UTC"})
	require.NoError(t, err)
	var lines []string
	seen := map[string]bool{}
	for _, w := range warns {
		require.True(t, w.Unsupported, "only unsupported keys are warned about, no unknown ones: %s", w)
		require.False(t, seen[w.Key], "one warning per key: %s", w.Key)
		seen[w.Key] = true
		lines = append(lines, w.Key+": "+strings.TrimPrefix(w.Msg, "has no effect in this build: "))
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "nanobot-every-key.warnings")
	if *updateGolden {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
	t.Logf("warnings of a config with every nanobot key set:\n%s", got)

	set := fixtureKeys(t, "testdata/nanobot-every-key.json")
	for _, k := range Keys() { // every key tagged unused that the fixture sets is named
		if k.Unused != "" && set[k.Path] && !strings.Contains(k.Path, "<name>") {
			require.True(t, seen[k.Path], "%s is set in the fixture but not warned about", k.Path)
		}
	}
	s := cfg.TurnSettings()
	require.Equal(t, int32(5), s.SendMaxRetries)
	require.Equal(t, 60000, s.ContextBlockLimit)
	require.Equal(t, int32(persistentLLMMaxAttempts), s.LLMMaxAttempts)
	require.False(t, s.FailOnToolError)
	require.Equal(t, "Asia/Shanghai", s.Timezone)
}

// fixtureKeys are the dotted paths of a config file's leaves.
func fixtureKeys(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tree, err := parseTree(path, data)
	require.NoError(t, err)
	out := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		obj, ok := v.(map[string]any)
		if !ok {
			out[prefix] = true
			return
		}
		for k, child := range obj {
			walk(joinKey(prefix, k), child)
		}
	}
	walk("", tree)
	return out
}

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestApplyResultBudget(t *testing.T) {
	ws := t.TempDir()
	env := Env{Workspace: ws, SessionKey: "telegram:42", CallID: "call_7"}
	big := strings.Repeat("0123456789", 2_000) // 20,000 chars
	saved := filepath.Join(ws, ".nanobot", "tool-results", "telegram_42", "call_7.txt")

	t.Run("within budget unchanged", func(t *testing.T) {
		require.Equal(t, "small", ApplyResultBudget(env, "exec", "small", 0))
		exact := strings.Repeat("é", DefaultMaxToolResultChars)
		require.Equal(t, exact, ApplyResultBudget(env, "exec", exact, 0), "the limit counts characters, not bytes")
	})

	t.Run("over budget persisted with a preview", func(t *testing.T) {
		out := ApplyResultBudget(env, "exec", big, 0)
		want := "[tool output persisted]\nFull output saved to: " + saved + "\nOriginal size: 20000 chars\nPreview:\n" +
			big[:toolResultPreviewChars] + "\n...\n(Read the saved file if you need the full output.)"
		require.Equal(t, want, out)
		data, err := os.ReadFile(saved)
		require.NoError(t, err)
		require.Equal(t, big, string(data))
	})

	t.Run("a repeated call id keeps the first file", func(t *testing.T) {
		other := strings.Repeat("x", 20_000)
		out := ApplyResultBudget(env, "exec", other, 0)
		require.Contains(t, out, saved)
		data, err := os.ReadFile(saved)
		require.NoError(t, err)
		require.Equal(t, big, string(data), "a replayed call does not rewrite its result")
	})

	t.Run("custom limit", func(t *testing.T) {
		env := env
		env.CallID = "call_8"
		out := ApplyResultBudget(env, "grep", strings.Repeat("y", 600), 500)
		require.True(t, strings.HasPrefix(out, "[tool output persisted]\n"), out)
		require.NotContains(t, out, "(Read the saved file", "a preview covering everything needs no hint")
	})

	t.Run("read_file is exempt", func(t *testing.T) {
		huge := strings.Repeat("z", 200_000)
		env := env
		env.CallID = "call_read"
		require.Equal(t, huge, ApplyResultBudget(env, "read_file", huge, 0))
		_, err := os.Stat(filepath.Join(ws, ".nanobot", "tool-results", "telegram_42", "call_read.txt"))
		require.True(t, os.IsNotExist(err))
	})

	t.Run("save failure truncates", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "not-a-dir")
		require.NoError(t, os.WriteFile(file, nil, 0o644))
		env := Env{Workspace: file, SessionKey: "s", CallID: "c"}
		out := ApplyResultBudget(env, "exec", big, 0)
		require.Equal(t, big[:DefaultMaxToolResultChars]+"\n... (truncated)", out)
	})

	t.Run("no workspace truncates", func(t *testing.T) {
		out := ApplyResultBudget(Env{}, "web_fetch", strings.Repeat("ä", 300), 100)
		require.Equal(t, strings.Repeat("ä", 100)+"\n... (truncated)", out)
		require.Equal(t, 100+len("\n... (truncated)"), utf8.RuneCountInString(out))
	})

	t.Run("hostile session and call ids stay inside the bucket", func(t *testing.T) {
		env := Env{Workspace: ws, SessionKey: "../../etc", CallID: "../x:y/z"}
		out := ApplyResultBudget(env, "exec", big, 0)
		path := filepath.Join(ws, ".nanobot", "tool-results", ".._.._etc", ".._x_y_z.txt")
		require.Contains(t, out, "Full output saved to: "+path+"\n")
		_, err := os.Stat(path)
		require.NoError(t, err)
	})

	t.Run("missing ids still persist", func(t *testing.T) {
		out := ApplyResultBudget(Env{Workspace: ws}, "exec", big, 0)
		require.Contains(t, out, filepath.Join(ws, ".nanobot", "tool-results", "default", "result-"))
	})
}

func TestSafeFilename(t *testing.T) {
	for in, want := range map[string]string{
		"cli:direct":   "cli_direct",
		`a<b>c"d|e?f*`: "a_b_c_d_e_f_",
		"a/b\\c":       "a_b_c",
		"..":           "__",
		".":            "_",
		"":             "_",
		" padded ":     "padded",
		"tab\there":    "tab_here",
	} {
		require.Equal(t, want, safeFilename(in), "%q", in)
	}
	long := safeFilename(strings.Repeat("k", 500))
	require.LessOrEqual(t, len(long), safeNameMaxBytes)
	require.NotEqual(t, long, safeFilename(strings.Repeat("k", 499)), "long names stay distinct")
}

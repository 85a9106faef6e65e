package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListDir(t *testing.T) {
	env, r := fsEnv(t)
	ws := env.Workspace
	for _, f := range []string{"b.txt", "a/x.go", "a/sub/deep.md", "a.txt", ".hidden", ".git/config", "node_modules/m/index.js", "z/"} {
		if strings.HasSuffix(f, "/") {
			require.NoError(t, os.MkdirAll(filepath.Join(ws, f), 0o755))
			continue
		}
		writeTestFile(t, ws, f, []byte("x"))
	}
	require.NoError(t, os.Symlink(filepath.Join(ws, "a"), filepath.Join(ws, "alink")))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "empty"), 0o755))
	for i := range 250 {
		writeTestFile(t, ws, fmt.Sprintf("many/f%03d.txt", i), nil)
	}

	many := func(n int) string {
		var lines []string
		for i := range n {
			lines = append(lines, fmt.Sprintf("f%03d.txt", i))
		}
		return strings.Join(lines, "\n")
	}

	for _, tc := range []struct {
		name  string
		args  map[string]any
		want  string
		has   string
		isErr bool
	}{
		{name: "flat, sorted, dirs marked, noise skipped", args: map[string]any{"path": "."},
			want: ".hidden\na/\na.txt\nalink/\nb.txt\nempty/\nmany/\nz/"},
		{name: "recursive", args: map[string]any{"path": ".", "recursive": true, "max_entries": 1000},
			want: ".hidden\na/\na/sub/\na/sub/deep.md\na/x.go\na.txt\nalink/\nb.txt\nempty/\nmany/\n" +
				strings.ReplaceAll(many(250), "f", "many/f") + "\nz/"},
		{name: "recursive subdir", args: map[string]any{"path": "a", "recursive": "true"},
			want: "sub/\nsub/deep.md\nx.go"},
		{name: "default cap 200", args: map[string]any{"path": "many"},
			want: many(200) + "\n\n(truncated, showing first 200 of 250 entries)"},
		{name: "custom cap", args: map[string]any{"path": "many", "max_entries": 3},
			want: many(3) + "\n\n(truncated, showing first 3 of 250 entries)"},
		{name: "cap applies to recursion", args: map[string]any{"path": ".", "recursive": true},
			has: "(truncated, showing first 200 of 261 entries)"},
		{name: "exactly at cap is not truncated", args: map[string]any{"path": "many", "max_entries": 250},
			want: many(250)},
		{name: "empty", args: map[string]any{"path": "empty"}, want: "Directory empty is empty"},
		{name: "not found", args: map[string]any{"path": "nope"}, isErr: true, has: "Error: Directory not found: nope"},
		{name: "file", args: map[string]any{"path": "a.txt"}, isErr: true, has: "Error: Not a directory: a.txt"},
		{name: "outside", args: map[string]any{"path": ".."}, isErr: true, has: "outside the workspace"},
		{name: "bad max_entries", args: map[string]any{"path": ".", "max_entries": 0}, isErr: true, has: "parameter 'max_entries'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "list_dir", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			if tc.want != "" {
				require.Equal(t, tc.want, res.Text)
			}
			if tc.has != "" {
				require.Contains(t, res.Text, tc.has)
			}
		})
	}
}

func TestListDirStopsOnCancel(t *testing.T) {
	env, _ := fsEnv(t)
	writeTestFile(t, env.Workspace, "d/f.txt", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := listDir{}.Run(ctx, env, map[string]any{"path": ".", "recursive": true})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "context canceled")
}

func TestListDirFlags(t *testing.T) {
	_, r := fsEnv(t)
	tool, _ := r.Get("list_dir")
	require.Equal(t, Flags{ReadOnly: true}, tool.Flags())
	require.True(t, tool.Flags().ConcurrencySafe())
}

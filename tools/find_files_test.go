package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindFiles(t *testing.T) {
	env, r := searchFixture(t)
	for _, tc := range []struct {
		name  string
		args  map[string]any
		want  string
		has   []string
		isErr bool
	}{
		{name: "name glob anywhere; skips symlinks and noise dirs", args: map[string]any{"pattern": "*.go"},
			want: "a.go\nsub/b.go\nsub/deep/c.go"},
		{name: "path glob with **", args: map[string]any{"pattern": "sub/**/*.go"}, want: "sub/b.go\nsub/deep/c.go"},
		{name: "leading **", args: map[string]any{"pattern": "**/c.go"}, want: "sub/deep/c.go"},
		{name: "single level", args: map[string]any{"pattern": "sub/*.go"}, want: "sub/b.go"},
		{name: "relative to path, shown relative to workspace", args: map[string]any{"pattern": "*.txt", "path": "sub"},
			want: "sub/notes.txt"},
		{name: "pattern with / is anchored at path", args: map[string]any{"pattern": "deep/*.go", "path": "sub"},
			want: "sub/deep/c.go"},
		{name: "head_limit", args: map[string]any{"pattern": "*.go", "head_limit": 2},
			want: "a.go\nsub/b.go\n\n(pagination: limit=2, offset=0; 3 matches in total, use offset=2 to continue)"},
		{name: "offset", args: map[string]any{"pattern": "*.go", "offset": 2}, want: "sub/deep/c.go\n\n(pagination: offset=2)"},
		{name: "offset past end", args: map[string]any{"pattern": "*.go", "offset": 5}, want: "No files found past offset 5 (3 matches in total)"},
		{name: "no match", args: map[string]any{"pattern": "*.rs"}, want: "No files found"},
		{name: "bad pattern", args: map[string]any{"pattern": "[a"}, has: []string{"invalid glob pattern"}, isErr: true},
		{name: "not a directory", args: map[string]any{"pattern": "*", "path": "a.go"}, has: []string{"Not a directory"}, isErr: true},
		{name: "outside workspace", args: map[string]any{"pattern": "*", "path": ".."}, has: []string{"outside the workspace"}, isErr: true},
		{name: "head_limit over 1000 rejected", args: map[string]any{"pattern": "*", "head_limit": 1001}, has: []string{"Invalid parameters"}, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "find_files", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			if tc.want != "" {
				require.Equal(t, tc.want, res.Text)
			}
			for _, h := range tc.has {
				require.Contains(t, res.Text, h)
			}
		})
	}
}

func TestFindFilesDefaultLimit(t *testing.T) {
	env, r := builtinEnv(t, BuiltinOptions{})
	for i := range 250 {
		writeTestFile(t, env.Workspace, fmt.Sprintf("f/%03d.md", i), nil)
	}
	res := call(t, r, env, "find_files", map[string]any{"pattern": "*.md"})
	require.False(t, res.IsError)
	body, note, _ := strings.Cut(res.Text, "\n\n")
	require.Len(t, strings.Split(body, "\n"), findDefaultHeadLimit)
	require.Equal(t, "(pagination: limit=200, offset=0; 250 matches in total, use offset=200 to continue)", note)

	res = call(t, r, env, "find_files", map[string]any{"pattern": "*.md", "head_limit": 0})
	require.Len(t, strings.Split(res.Text, "\n"), 250, "head_limit 0 lifts the cap")
}

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// fsEnv returns a restricted env over a fresh workspace and a registry with
// the filesystem tools.
func fsEnv(t *testing.T) (Env, *Registry) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	r := NewRegistry()
	RegisterFilesystem(r)
	return Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "cli:test", CallID: "call_1"}, r
}

// call runs a tool through the registry with args encoded as JSON.
func call(t *testing.T, r *Registry, env Env, name string, args map[string]any) Result {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return r.Execute(context.Background(), env, name, string(b))
}

func writeTestFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// numbered builds the expected cat -n rendering of lines from..to of "line N".
func numbered(from, to int) string {
	var lines []string
	for n := from; n <= to; n++ {
		lines = append(lines, fmt.Sprintf("%6d\tline %d", n, n))
	}
	return strings.Join(lines, "\n")
}

func manyLines(n int) []byte {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return []byte(sb.String())
}

func TestReadFile(t *testing.T) {
	env, r := fsEnv(t)
	writeTestFile(t, env.Workspace, "small.txt", []byte("alpha\nbeta\r\ngamma"))
	writeTestFile(t, env.Workspace, "ten.txt", manyLines(10))
	writeTestFile(t, env.Workspace, "big.txt", manyLines(2500))
	writeTestFile(t, env.Workspace, "empty.txt", nil)
	writeTestFile(t, env.Workspace, "nul.bin", []byte("abc\x00def"))
	writeTestFile(t, env.Workspace, "latin1.txt", []byte("caf\xe9 au lait"))
	require.NoError(t, os.Mkdir(filepath.Join(env.Workspace, "dir"), 0o755))

	for _, tc := range []struct {
		name  string
		args  map[string]any
		want  string // exact text, when set
		has   []string
		isErr bool
	}{
		{name: "numbered lines, CRLF and missing final newline", args: map[string]any{"path": "small.txt"},
			want: "     1\talpha\n     2\tbeta\n     3\tgamma\n\n(End of file — 3 lines total)"},
		{name: "whole small file", args: map[string]any{"path": "ten.txt"},
			want: numbered(1, 10) + "\n\n(End of file — 10 lines total)"},
		{name: "offset and limit", args: map[string]any{"path": "ten.txt", "offset": 3, "limit": 4},
			want: numbered(3, 6) + "\n\n(Showing lines 3-6 of 10. Use offset=7 to continue.)"},
		{name: "offset as string is coerced", args: map[string]any{"path": "ten.txt", "offset": "9"},
			want: numbered(9, 10) + "\n\n(End of file — 10 lines total)"},
		{name: "last line", args: map[string]any{"path": "ten.txt", "offset": 10, "limit": 1},
			want: numbered(10, 10) + "\n\n(End of file — 10 lines total)"},
		{name: "default limit 2000", args: map[string]any{"path": "big.txt"},
			want: numbered(1, 2000) + "\n\n(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)"},
		{name: "continue after default limit", args: map[string]any{"path": "big.txt", "offset": 2001},
			want: numbered(2001, 2500) + "\n\n(End of file — 2500 lines total)"},
		{name: "offset beyond end", args: map[string]any{"path": "ten.txt", "offset": 11}, isErr: true,
			has: []string{"Error: offset 11 is beyond end of file (10 lines)"}},
		{name: "offset below 1 rejected by schema", args: map[string]any{"path": "ten.txt", "offset": 0}, isErr: true,
			has: []string{"Invalid parameters for tool 'read_file'", "parameter 'offset'"}},
		{name: "empty file", args: map[string]any{"path": "empty.txt"}, want: "(Empty file: empty.txt)"},
		{name: "not found", args: map[string]any{"path": "nope.txt"}, isErr: true, has: []string{"Error: File not found: nope.txt"}},
		{name: "directory", args: map[string]any{"path": "dir"}, isErr: true, has: []string{"Not a file: dir is a directory", "list_dir"}},
		{name: "binary NUL", args: map[string]any{"path": "nul.bin"}, isErr: true, has: []string{"binary file nul.bin"}},
		{name: "binary invalid UTF-8", args: map[string]any{"path": "latin1.txt"}, isErr: true, has: []string{"binary file"}},
		{name: "outside workspace", args: map[string]any{"path": "/etc/hostname"}, isErr: true,
			has: []string{`Error: path "/etc/hostname" is outside the workspace`, "tools.restrictToWorkspace is on"}},
		{name: "missing path", args: map[string]any{}, isErr: true, has: []string{"missing property 'path'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "read_file", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			if tc.want != "" {
				require.Equal(t, tc.want, res.Text)
			}
			for _, h := range tc.has {
				require.Contains(t, res.Text, h)
			}
			if tc.isErr {
				require.True(t, strings.HasSuffix(res.Text, errorHint))
			}
		})
	}
}

func TestReadFileCharCap(t *testing.T) {
	env, r := fsEnv(t)
	// 100 lines of 2000 chars: each numbered line costs 2007+1 runes, so 63 fit in 128 000.
	line := strings.Repeat("é", 2000)
	var sb strings.Builder
	for range 100 {
		sb.WriteString(line + "\n")
	}
	writeTestFile(t, env.Workspace, "wide.txt", []byte(sb.String()))

	res := call(t, r, env, "read_file", map[string]any{"path": "wide.txt"})
	require.False(t, res.IsError, res.Text)
	body, note, ok := strings.Cut(res.Text, "\n\n(")
	require.True(t, ok)
	require.LessOrEqual(t, utf8.RuneCountInString(body), readMaxChars)
	require.Equal(t, 63, strings.Count(body, "\n")+1)
	require.Equal(t, "Output truncated at 128000 characters: showing lines 1-63 of 100. Use offset=64 to continue.)", note)

	res = call(t, r, env, "read_file", map[string]any{"path": "wide.txt", "offset": 64})
	require.True(t, strings.HasPrefix(res.Text, "    64\t"), res.Text[:20])
	require.True(t, strings.HasSuffix(res.Text, "(End of file — 100 lines total)")) // the last page fits
}

func TestReadFileSingleHugeLine(t *testing.T) {
	env, r := fsEnv(t)
	writeTestFile(t, env.Workspace, "huge.txt", []byte(strings.Repeat("x", 200_000)+"\nnext\n"))
	res := call(t, r, env, "read_file", map[string]any{"path": "huge.txt"})
	require.False(t, res.IsError, res.Text)
	body, note, _ := strings.Cut(res.Text, "\n\n(")
	require.Equal(t, readMaxChars, utf8.RuneCountInString(body))
	require.Contains(t, note, "Line 1 is longer than 128000 characters and was cut.")
	require.Contains(t, note, "Use offset=2 to continue.")
}

func TestReadFileBinaryBoundary(t *testing.T) {
	env, r := fsEnv(t)
	// A 2-byte rune straddling the 8 KiB sniff boundary is still text.
	data := []byte(strings.Repeat("a", binarySniffLen-1) + "é" + "tail\n")
	writeTestFile(t, env.Workspace, "edge.txt", data)
	res := call(t, r, env, "read_file", map[string]any{"path": "edge.txt"})
	require.False(t, res.IsError, res.Text)

	// Invalid bytes after the sniffed prefix are replaced, not refused.
	data = append([]byte(strings.Repeat("b", binarySniffLen+10)), 0xff, '\n')
	writeTestFile(t, env.Workspace, "late.txt", data)
	res = call(t, r, env, "read_file", map[string]any{"path": "late.txt"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "\uFFFD")
}

func TestLooksBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"empty", nil, false},
		{"ascii", []byte("hello\n"), false},
		{"utf8", []byte("héllo wörld ✓"), false},
		{"nul", []byte("a\x00"), true},
		{"invalid utf8", []byte{0xff, 0xfe, 'a'}, true},
		{"truncated rune at end of small file", []byte("ab\xc3"), true},
		{"nul after sniff window", append([]byte(strings.Repeat("a", binarySniffLen)), 0), false},
	} {
		require.Equal(t, tc.want, looksBinary(tc.data), tc.name)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	env, r := fsEnv(t)
	p := filepath.Join(env.Workspace, "sparse.txt")
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(readMaxBytes+1)) // sparse: no real disk use
	require.NoError(t, f.Close())
	res := call(t, r, env, "read_file", map[string]any{"path": "sparse.txt"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "File too large")
	require.Contains(t, res.Text, "100 MB")
}

func TestReadFileFlags(t *testing.T) {
	_, r := fsEnv(t)
	tool, ok := r.Get("read_file")
	require.True(t, ok)
	require.Equal(t, Flags{ReadOnly: true}, tool.Flags())
	require.True(t, tool.Flags().ConcurrencySafe())
	require.Contains(t, tool.Description(), "cat -n")
}

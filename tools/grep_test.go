package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// searchFixture lays out a workspace exercising every grep/find_files rule.
func searchFixture(t *testing.T) (Env, *Registry) {
	t.Helper()
	env, r := builtinEnv(t, BuiltinOptions{})
	ws := env.Workspace
	writeTestFile(t, ws, "a.go", []byte("package a\n\nfunc Hello() {}\nfunc hello2() {}\n"))
	writeTestFile(t, ws, "sub/b.go", []byte("package sub\n// Hello world\n"))
	writeTestFile(t, ws, "sub/deep/c.go", []byte("package deep\n"))
	writeTestFile(t, ws, "sub/notes.txt", []byte("nothing\n"))
	writeTestFile(t, ws, "notes.txt", manyLinesWith(30, 15, "needle here"))
	writeTestFile(t, ws, "node_modules/x.go", []byte("Hello\n"))
	writeTestFile(t, ws, ".git/config", []byte("Hello\n"))
	writeTestFile(t, ws, "bin.dat", []byte("Hello\x00binary"))
	writeTestFile(t, ws, "crlf.txt", []byte("one\r\nCRLF Hello\r\n"))
	var hits strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&hits, "hit %d\n", i)
	}
	writeTestFile(t, ws, "many.txt", []byte(hits.String()))
	big := strings.Repeat("filler line\n", grepMaxFileBytes/12+10) + "Hello big\n"
	writeTestFile(t, ws, "big.txt", []byte(big))
	require.NoError(t, os.Symlink(filepath.Join(ws, "a.go"), filepath.Join(ws, "link.go")))
	// files_with_matches sorts by mtime, newest first.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(ws, "a.go"), old, old))
	return env, r
}

// withoutSkipNotes drops the fixture's "(skipped N … files)" notes so
// expectations can be exact.
func withoutSkipNotes(text string) string {
	return strings.TrimRight(skipNote.ReplaceAllString(text, ""), "\n")
}

var skipNote = regexp.MustCompile(`\n\(skipped \d+ [a-z/]+ files\)`)

func manyLinesWith(n, at int, text string) []byte {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		if i == at {
			fmt.Fprintf(&sb, "%s\n", text)
			continue
		}
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return []byte(sb.String())
}

func TestGrep(t *testing.T) {
	env, r := searchFixture(t)
	for _, tc := range []struct {
		name  string
		args  map[string]any
		want  string // exact, when set
		has   []string
		not   []string
		isErr bool
	}{
		{name: "content with default context", args: map[string]any{"pattern": "func Hello"},
			want: "a.go:3\n  1| package a\n  2| \n> 3| func Hello() {}\n  4| func hello2() {}"},
		{name: "default context is 5 lines each side", args: map[string]any{"pattern": "needle"},
			want: "notes.txt:15\n  10| line 10\n  11| line 11\n  12| line 12\n  13| line 13\n  14| line 14\n> 15| needle here\n" +
				"  16| line 16\n  17| line 17\n  18| line 18\n  19| line 19\n  20| line 20"},
		{name: "context_before/after", args: map[string]any{"pattern": "needle", "context_before": 1, "context_after": 1},
			want: "notes.txt:15\n  14| line 14\n> 15| needle here\n  16| line 16"},
		{name: "context sets both", args: map[string]any{"pattern": "needle", "context": 2},
			want: "notes.txt:15\n  13| line 13\n  14| line 14\n> 15| needle here\n  16| line 16\n  17| line 17"},
		{name: "explicit before wins over context", args: map[string]any{"pattern": "needle", "context": 2, "context_before": 0},
			want: "notes.txt:15\n> 15| needle here\n  16| line 16\n  17| line 17"},
		{name: "case sensitive by default", args: map[string]any{"pattern": "hello", "output_mode": "files_with_matches"},
			want: "a.go"},
		{name: "case_insensitive", args: map[string]any{"pattern": "HELLO", "case_insensitive": true, "output_mode": "files_with_matches", "glob": "*.go"},
			want: "sub/b.go\na.go"},
		{name: "fixed_strings", args: map[string]any{"pattern": "Hello()", "fixed_strings": true, "output_mode": "files_with_matches"},
			want: "a.go"},
		{name: "regex metachars without fixed_strings", args: map[string]any{"pattern": "Hel+o\\(\\)", "output_mode": "files_with_matches"},
			want: "a.go"},
		{name: "glob with **", args: map[string]any{"pattern": "package", "glob": "sub/**/*.go", "output_mode": "files_with_matches"},
			has: []string{"sub/b.go", "sub/deep/c.go"}, not: []string{"a.go\n", "notes"}},
		{name: "skips noise dirs, binary, symlinks; notes large files", args: map[string]any{"pattern": "Hello", "output_mode": "files_with_matches"},
			has: []string{"a.go", "sub/b.go", "crlf.txt", "(skipped 1 binary/unreadable files)", "(skipped 1 large files)"},
			not: []string{"node_modules", ".git", "bin.dat", "link.go", "big.txt"}},
		{name: "a file named directly may be large", args: map[string]any{"pattern": "Hello big", "path": "big.txt", "output_mode": "count"},
			want: "big.txt: 1\n\n(total matches: 1 in 1 files)"},
		{name: "CRLF lines", args: map[string]any{"pattern": "CRLF Hello$", "context": 0}, want: "crlf.txt:2\n> 2| CRLF Hello"},
		{name: "count", args: map[string]any{"pattern": "^hit", "output_mode": "count"},
			want: "many.txt: 300\n\n(total matches: 300 in 1 files)"},
		{name: "files head_limit", args: map[string]any{"pattern": "Hello", "output_mode": "files_with_matches", "head_limit": 1},
			has: []string{"(pagination: limit=1, offset=0)"}},
		{name: "no matches", args: map[string]any{"pattern": "zzz_nothing"}, want: "No matches found for pattern 'zzz_nothing' in ."},
		{name: "path in subdir shows workspace-relative paths", args: map[string]any{"pattern": "world", "path": "sub", "context": 0},
			want: "sub/b.go:2\n> 2| // Hello world"},
		{name: "invalid regex", args: map[string]any{"pattern": "("}, has: []string{"Error: invalid regex pattern"}, isErr: true},
		{name: "invalid glob", args: map[string]any{"pattern": "x", "glob": "[a"}, has: []string{"invalid glob pattern"}, isErr: true},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, has: []string{"Error: Path not found: nope"}, isErr: true},
		{name: "outside workspace", args: map[string]any{"pattern": "x", "path": "/etc"}, has: []string{"outside the workspace"}, isErr: true},
		{name: "head_limit over 1000 rejected", args: map[string]any{"pattern": "x", "head_limit": 1001}, has: []string{"Invalid parameters"}, isErr: true},
		{name: "context over 20 rejected", args: map[string]any{"pattern": "x", "context": 21}, has: []string{"Invalid parameters"}, isErr: true},
		{name: "empty pattern rejected", args: map[string]any{"pattern": ""}, has: []string{"Invalid parameters"}, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "grep", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			if tc.want != "" {
				require.Equal(t, tc.want, withoutSkipNotes(res.Text))
			}
			for _, h := range tc.has {
				require.Contains(t, res.Text, h)
			}
			for _, n := range tc.not {
				require.NotContains(t, res.Text, n)
			}
		})
	}
}

func TestGrepHeadLimit(t *testing.T) {
	env, r := searchFixture(t)
	blocks := func(text string) []string {
		body, _, _ := strings.Cut(text, "\n\n(")
		return strings.Split(body, "\n\n")
	}
	for _, tc := range []struct {
		name      string
		args      map[string]any
		n         int
		first     string
		note      string
		noNoteFor bool
	}{
		{name: "default 250", args: map[string]any{}, n: 250, first: "many.txt:1", note: "(pagination: limit=250, offset=0; use offset=250 to continue)"},
		{name: "explicit 10 with offset", args: map[string]any{"head_limit": 10, "offset": 5}, n: 10, first: "many.txt:6",
			note: "(pagination: limit=10, offset=5; use offset=15 to continue)"},
		{name: "0 means no cap", args: map[string]any{"head_limit": 0}, n: 300, first: "many.txt:1", noNoteFor: true},
		{name: "cap 1000 holds all 300", args: map[string]any{"head_limit": 1000}, n: 300, first: "many.txt:1", noNoteFor: true},
		{name: "offset past the end", args: map[string]any{"offset": 400}, n: 1, first: "No matches found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"pattern": "^hit", "context": 0, "path": "many.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, r, env, "grep", args)
			require.False(t, res.IsError, res.Text)
			got := blocks(res.Text)
			require.Len(t, got, tc.n)
			require.True(t, strings.HasPrefix(got[0], tc.first), got[0])
			if tc.note != "" {
				require.True(t, strings.HasSuffix(res.Text, tc.note), res.Text[max(0, len(res.Text)-200):])
			}
			if tc.noNoteFor {
				require.NotContains(t, res.Text, "pagination")
			}
		})
	}
}

func TestGrepResultAndLineCaps(t *testing.T) {
	env, r := builtinEnv(t, BuiltinOptions{})
	long := strings.Repeat("a", 1500) + " MATCH"
	writeTestFile(t, env.Workspace, "wide.txt", []byte(strings.Repeat(long+"\n", 200)))
	huge := strings.Repeat("b", 4000) + "TARGET" + strings.Repeat("c", 4000)
	writeTestFile(t, env.Workspace, "line.txt", []byte("before\n"+huge+"\nafter\n"))

	t.Run("result capped at 128000 chars", func(t *testing.T) {
		res := call(t, r, env, "grep", map[string]any{"pattern": "MATCH", "context": 0, "head_limit": 1000, "path": "wide.txt"})
		require.False(t, res.IsError)
		require.Contains(t, res.Text, "(output truncated due to size; use offset=")
		require.LessOrEqual(t, utf8.RuneCountInString(res.Text), grepMaxResultChars+200)
	})
	t.Run("long line clipped around the match", func(t *testing.T) {
		res := call(t, r, env, "grep", map[string]any{"pattern": "TARGET", "context": 1, "path": "line.txt"})
		require.False(t, res.IsError)
		lines := strings.Split(res.Text, "\n")
		require.Len(t, lines, 4)
		match := strings.TrimPrefix(lines[2], "> 2| ")
		require.Contains(t, match, "TARGET")
		require.True(t, strings.HasPrefix(match, "...") && strings.HasSuffix(match, "..."), match[:10])
		require.Equal(t, grepMaxLineChars, utf8.RuneCountInString(match))
	})
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "x/y/a.go", true},
		{"*.go", "a.gox", false},
		{"sub/*.go", "sub/b.go", true},
		{"sub/*.go", "sub/deep/c.go", false},
		{"sub/**/*.go", "sub/b.go", true},
		{"sub/**/*.go", "sub/deep/c.go", true},
		{"**/c.go", "c.go", true},
		{"**/c.go", "a/b/c.go", true},
		{"**", "any/thing", true},
		{"./sub/*.go", "sub/b.go", true},
		{"sub\\*.go", "sub/b.go", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b", "a/c", false},
		{"*.{go,md}", "x/README.md", true}, // doublestar's alternatives
		{"sub/{deep,other}/*.go", "sub/deep/c.go", true},
		{"sub/{deep,other}/*.go", "sub/b.go", false},
	} {
		g, err := compileGlob(tc.pattern)
		require.NoError(t, err, tc.pattern)
		require.Equal(t, tc.want, g.match(tc.path), "%s ~ %s", tc.pattern, tc.path)
	}
	_, err := compileGlob("  ")
	require.Error(t, err)
}

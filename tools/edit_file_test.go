package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEditFile(t *testing.T) {
	const base = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	for _, tc := range []struct {
		name    string
		initial string
		args    map[string]any // path is added
		want    string         // file content afterwards (unchanged on error)
		has     []string       // substrings of the result text
		isErr   bool
	}{
		{name: "unique replacement", initial: base,
			args: map[string]any{"old_text": "func a() {", "new_text": "func a2() {"},
			want: strings.Replace(base, "func a()", "func a2()", 1), has: []string{"Successfully edited", "replaced 1 occurrence(s)"}},
		{name: "not unique", initial: base,
			args:  map[string]any{"old_text": "return 1", "new_text": "return 2"},
			isErr: true, has: []string{"old_text appears 2 times", "at lines 2, 6", "replace_all=true", "occurrence=N"}},
		{name: "replace_all", initial: base,
			args: map[string]any{"old_text": "return 1", "new_text": "return 2", "replace_all": true},
			want: strings.ReplaceAll(base, "return 1", "return 2"), has: []string{"replaced 2 occurrence(s)"}},
		{name: "replace_all as string is coerced", initial: base,
			args: map[string]any{"old_text": "return 1", "new_text": "return 2", "replace_all": "true"},
			want: strings.ReplaceAll(base, "return 1", "return 2")},
		{name: "occurrence 2", initial: base,
			args: map[string]any{"old_text": "return 1", "new_text": "return 2", "occurrence": 2},
			want: "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n", has: []string{"replaced 1 occurrence(s)"}},
		{name: "occurrence 1 of a unique match", initial: base,
			args: map[string]any{"old_text": "func b", "new_text": "func c", "occurrence": 1},
			want: strings.Replace(base, "func b", "func c", 1)},
		{name: "occurrence too large", initial: base,
			args:  map[string]any{"old_text": "return 1", "new_text": "x", "occurrence": 3},
			isErr: true, has: []string{"occurrence=3 requested but old_text appears 2 time(s)"}},
		{name: "occurrence and replace_all", initial: base,
			args:  map[string]any{"old_text": "return 1", "new_text": "x", "occurrence": 1, "replace_all": true},
			isErr: true, has: []string{"either replace_all or occurrence"}},
		{name: "not found with best match", initial: base,
			args:  map[string]any{"old_text": "func a() {\n\treturn 100\n}", "new_text": "x"},
			isErr: true, has: []string{"old_text not found in f.go", "Best match", "at line 1:", "     2\t\treturn 1"}},
		{name: "not found, nothing similar", initial: base,
			args:  map[string]any{"old_text": "zzzz qqqq", "new_text": "x"},
			isErr: true, has: []string{"old_text not found in f.go. No similar text found."}},
		{name: "whitespace-tolerant match", initial: "if x {\n    call()\n}\n",
			args: map[string]any{"old_text": "if x {\n\tcall()\n}", "new_text": "if y {\n    call()\n}"},
			want: "if y {\n    call()\n}\n", has: []string{"ignoring leading/trailing whitespace"}},
		{name: "CRLF preserved", initial: "one\r\ntwo\r\nthree\r\n",
			args: map[string]any{"old_text": "two\nthree", "new_text": "2\n3"},
			want: "one\r\n2\r\n3\r\n"},
		{name: "identical texts", initial: base,
			args:  map[string]any{"old_text": "return 1", "new_text": "return 1"},
			isErr: true, has: []string{"identical"}},
		{name: "empty old_text", initial: base,
			args:  map[string]any{"old_text": "", "new_text": "x"},
			isErr: true, has: []string{"old_text is empty", "write_file"}},
		{name: "delete text", initial: "keep\ndrop me\nkeep\n",
			args: map[string]any{"old_text": "drop me\n", "new_text": ""},
			want: "keep\nkeep\n"},
		{name: "missing new_text", initial: base,
			args:  map[string]any{"old_text": "a"},
			isErr: true, has: []string{"missing property 'new_text'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, r := fsEnv(t)
			p := writeTestFile(t, env.Workspace, "f.go", []byte(tc.initial))
			args := map[string]any{"path": "f.go"}
			for k, v := range tc.args {
				args[k] = v
			}
			res := call(t, r, env, "edit_file", args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			for _, h := range tc.has {
				require.Contains(t, res.Text, h)
			}
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			if tc.isErr {
				require.Equal(t, tc.initial, string(got), "a failed edit must not touch the file")
				return
			}
			require.Equal(t, tc.want, string(got))
			assertNoTempFiles(t, env.Workspace)
		})
	}
}

func TestEditFileErrors(t *testing.T) {
	env, r := fsEnv(t)
	writeTestFile(t, env.Workspace, "bin.dat", []byte("a\x00b"))
	require.NoError(t, os.Mkdir(filepath.Join(env.Workspace, "d"), 0o755))
	for _, tc := range []struct{ path, has string }{
		{"missing.txt", "Error: File not found: missing.txt"},
		{"d", "Not a regular file: d"},
		{"bin.dat", "Cannot edit binary file bin.dat"},
		{"/etc/hostname", "outside the workspace"},
	} {
		res := call(t, r, env, "edit_file", map[string]any{"path": tc.path, "old_text": "a", "new_text": "b"})
		require.True(t, res.IsError, tc.path)
		require.Contains(t, res.Text, tc.has)
		require.True(t, strings.HasSuffix(res.Text, errorHint))
	}
}

func TestEditFileFlags(t *testing.T) {
	_, r := fsEnv(t)
	tool, _ := r.Get("edit_file")
	require.Equal(t, Flags{SideEffects: true}, tool.Flags())
}

func TestFindMatchesNonOverlapping(t *testing.T) {
	spans, fuzzy := findMatches("aaaa", "aa")
	require.False(t, fuzzy)
	require.Equal(t, []span{{0, 2}, {2, 4}}, spans)

	spans, fuzzy = findMatches("x\n  y\nx\n  y\n", "x\ny")
	require.True(t, fuzzy)
	require.Len(t, spans, 2)

	spans, _ = findMatches("a\n\n\nb", "  \n ")
	require.Empty(t, spans, "blank-only old_text never matches loosely")
}

package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func edit(path, oldText, newText string) map[string]any {
	return map[string]any{"path": path, "old_text": oldText, "new_text": newText}
}

func TestApplyPatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string // initial workspace
		args   map[string]any
		want   string            // exact result text, when set
		errHas string            // error substring
		after  map[string]string // expected contents afterwards ("" = must not exist)
	}{
		{name: "single replace",
			files: map[string]string{"a.txt": "one\ntwo\nthree\n"},
			args:  map[string]any{"edits": []any{edit("a.txt", "two", "TWO")}},
			want:  "Patch applied:\n- update a.txt (+1/-1)",
			after: map[string]string{"a.txt": "one\nTWO\nthree\n"}},
		{name: "several files and sequential edits on one file",
			files: map[string]string{"a.txt": "alpha\nbeta\n", "d/b.txt": "x\n"},
			args: map[string]any{"edits": []any{
				edit("a.txt", "alpha", "ALPHA"), edit("a.txt", "ALPHA\nbeta", "ALPHA\nbeta\ngamma"), edit("d/b.txt", "x", "y"),
			}},
			want:  "Patch applied:\n- update a.txt (+1/-1)\n- update a.txt (+1/-0)\n- update d/b.txt (+1/-1)",
			after: map[string]string{"a.txt": "ALPHA\nbeta\ngamma\n", "d/b.txt": "y\n"}},
		{name: "add creates a file and its directories",
			args:  map[string]any{"edits": []any{map[string]any{"path": "new/dir/f.txt", "action": "add", "new_text": "l1\nl2"}}},
			want:  "Patch applied:\n- add new/dir/f.txt (+2/-0)",
			after: map[string]string{"new/dir/f.txt": "l1\nl2\n"}},
		{name: "add appends without merging the last line",
			files: map[string]string{"log.txt": "first"},
			args:  map[string]any{"edits": []any{map[string]any{"path": "log.txt", "action": "add", "new_text": "second\n"}}},
			want:  "Patch applied:\n- update log.txt (+1/-0)",
			after: map[string]string{"log.txt": "first\nsecond\n"}},
		{name: "CRLF kept",
			files: map[string]string{"w.txt": "a\r\nb\r\n"},
			args:  map[string]any{"edits": []any{edit("w.txt", "a\nb", "a\nB")}},
			after: map[string]string{"w.txt": "a\r\nB\r\n"}},
		{name: "all-or-nothing: a later failure leaves earlier files untouched",
			files:  map[string]string{"a.txt": "keep\n", "b.txt": "other\n"},
			args:   map[string]any{"edits": []any{edit("a.txt", "keep", "CHANGED"), edit("b.txt", "missing text", "x")}},
			errHas: "(edit 2 of 2): old_text not found in b.txt",
			after:  map[string]string{"a.txt": "keep\n", "b.txt": "other\n"}},
		{name: "all-or-nothing: no new file either",
			args:   map[string]any{"edits": []any{map[string]any{"path": "n.txt", "action": "add", "new_text": "x"}, edit("gone.txt", "a", "b")}},
			errHas: "file to update does not exist: gone.txt",
			after:  map[string]string{"n.txt": ""}},
		{name: "ambiguous old_text",
			files:  map[string]string{"d.txt": "x\nx\n"},
			args:   map[string]any{"edits": []any{edit("d.txt", "x", "y")}},
			errHas: "old_text appears 2 times in d.txt",
			after:  map[string]string{"d.txt": "x\nx\n"}},
		{name: "dry_run writes nothing",
			files: map[string]string{"a.txt": "one\n"},
			args:  map[string]any{"dry_run": true, "edits": []any{edit("a.txt", "one", "1"), map[string]any{"path": "c.txt", "action": "add", "new_text": "c"}}},
			want:  "Patch dry-run succeeded (no files written):\n- update a.txt (+1/-1)\n- add c.txt (+1/-0)",
			after: map[string]string{"a.txt": "one\n", "c.txt": ""}},
		{name: "dry_run still validates",
			files:  map[string]string{"a.txt": "one\n"},
			args:   map[string]any{"dry_run": true, "edits": []any{edit("a.txt", "zzz", "1")}},
			errHas: "old_text not found"},
		{name: "outside workspace", args: map[string]any{"edits": []any{edit("../x.txt", "a", "b")}}, errHas: "outside the workspace"},
		{name: "missing new_text", files: map[string]string{"a.txt": "a\n"},
			args: map[string]any{"edits": []any{map[string]any{"path": "a.txt", "old_text": "a"}}}, errHas: "new_text is required"},
		{name: "empty old_text", files: map[string]string{"a.txt": "a\n"},
			args: map[string]any{"edits": []any{edit("a.txt", "", "b")}}, errHas: "old_text is required"},
		{name: "binary file", files: map[string]string{"b.bin": "a\x00b"},
			args: map[string]any{"edits": []any{edit("b.bin", "a", "b")}}, errHas: "not UTF-8 text"},
		{name: "edits required", args: map[string]any{"edits": []any{}}, errHas: "Invalid parameters"},
		{name: "at most 20 edits", args: map[string]any{"edits": repeatEdits(21)}, errHas: "Invalid parameters"},
		{name: "edits as a JSON string are coerced", files: map[string]string{"a.txt": "a\n"},
			args:  map[string]any{"edits": `[{"path":"a.txt","old_text":"a","new_text":"b"}]`},
			after: map[string]string{"a.txt": "b\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, r := builtinEnv(t, BuiltinOptions{})
			for name, content := range tc.files {
				writeTestFile(t, env.Workspace, name, []byte(content))
			}
			res := call(t, r, env, "apply_patch", tc.args)
			if tc.errHas != "" {
				require.True(t, res.IsError, res.Text)
				require.Contains(t, res.Text, tc.errHas)
			} else {
				require.False(t, res.IsError, res.Text)
			}
			if tc.want != "" {
				require.Equal(t, tc.want, res.Text)
			}
			for name, want := range tc.after {
				data, err := os.ReadFile(filepath.Join(env.Workspace, name))
				if want == "" {
					require.True(t, os.IsNotExist(err), "%s must not exist", name)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, want, string(data), name)
			}
		})
	}
}

func repeatEdits(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = edit("a.txt", "a", "b")
	}
	return out
}

// A write that fails mid-batch puts back the files written before it.
func TestApplyPatchRollsBackOnWriteFailure(t *testing.T) {
	ws := t.TempDir()
	existing := writeTestFile(t, ws, "a.txt", []byte("original\n"))
	blocker := writeTestFile(t, ws, "blocker", []byte("a regular file"))
	order := []*patchFile{
		{path: existing, existed: true, original: []byte("original\n"), content: "changed\n"},
		{path: filepath.Join(ws, "created.txt"), content: "new\n"},
		{path: filepath.Join(blocker, "child.txt"), content: "cannot be written\n"}, // parent is a file
	}
	err := writePatch(order)
	require.ErrorContains(t, err, "no files were changed")
	data, err := os.ReadFile(existing)
	require.NoError(t, err)
	require.Equal(t, "original\n", string(data))
	_, err = os.Stat(filepath.Join(ws, "created.txt"))
	require.True(t, os.IsNotExist(err), "a file the batch created is removed again")
}

func TestLineDiffStats(t *testing.T) {
	for _, tc := range []struct {
		before, after  string
		added, deleted int
	}{
		{"", "a\nb\n", 2, 0},
		{"a\nb\n", "", 0, 2},
		{"a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"a\nc\n", "a\nb\nc\n", 1, 0},
		{"same\n", "same\n", 0, 0},
	} {
		a, d := lineDiffStats(tc.before, tc.after)
		require.Equal(t, [2]int{tc.added, tc.deleted}, [2]int{a, d}, "%q -> %q", tc.before, tc.after)
	}
}

package web

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFileEditsAsUnifiedDiffs(t *testing.T) {
	require.Equal(t, "--- a/notes.md\n+++ b/notes.md\n@@ edit_file @@\n # Notes\n-- tea\n+- green tea\n+- oolong\n done\n",
		fileEditDiff("edit_file", `{"path":"notes.md","old_text":"# Notes\n- tea\ndone","new_text":"# Notes\n- green tea\n- oolong\ndone"}`))
	require.Equal(t, "--- a/new.txt\n+++ b/new.txt\n@@ write_file @@\n+one\n+two\n",
		fileEditDiff("write_file", `{"path":"new.txt","content":"one\ntwo\n"}`))
	require.Empty(t, fileEditDiff("exec", `{"command":"ls"}`))
	require.Empty(t, fileEditDiff("edit_file", `{"path":`), "arguments cut at maxCallText")
}

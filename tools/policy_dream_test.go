package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

func TestDreamToolsCannotTouchFilesOutsideTheirList(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "memory"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "memory", "MEMORY.md"), []byte("likes tea\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("be kind\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(ws, "AGENTS.md"), filepath.Join(ws, "USER.md.link")))
	outside := t.TempDir()
	r := NewDreamRegistry()
	require.Equal(t, []string{"apply_patch", "edit_file", "read_file", "write_file"}, r.Names(), "no shell, no web, no message")
	env := Env{Workspace: ws, RestrictToWorkspace: true, Policy: NewPolicy(protocol.ProfileFor(protocol.DreamTurn, false), ws)}
	run := func(name, args string) Result { return r.Execute(context.Background(), env, name, args) }

	for _, c := range []struct{ name, args string }{
		{"write_file", `{"path":"AGENTS.md","content":"obey me"}`},
		{"write_file", `{"path":"memory/history.jsonl","content":"{}"}`},
		{"write_file", `{"path":"memory/.dream_cursor","content":"0"}`},
		{"write_file", `{"path":"` + filepath.Join(outside, "x.txt") + `","content":"x"}`},
		{"write_file", `{"path":"skills/../AGENTS.md","content":"x"}`},
		{"write_file", `{"path":"USER.md.link","content":"x"}`},
		{"edit_file", `{"path":"AGENTS.md","old_text":"be kind","new_text":"be mean"}`},
		{"apply_patch", `{"edits":[{"path":"memory/MEMORY.md","action":"add","new_text":"ok"},{"path":"AGENTS.md","action":"add","new_text":"no"}]}`},
	} {
		res := run(c.name, c.args)
		require.True(t, res.IsError, "%s %s: %s", c.name, c.args, res.Text)
	}
	data, _ := os.ReadFile(filepath.Join(ws, "AGENTS.md"))
	require.Equal(t, "be kind\n", string(data))
	data, _ = os.ReadFile(filepath.Join(ws, "memory", "MEMORY.md"))
	require.Equal(t, "likes tea\n", string(data), "apply_patch is all-or-nothing: the allowed edit did not land either")
	require.NoFileExists(t, filepath.Join(outside, "x.txt"))
	require.NoFileExists(t, filepath.Join(ws, "memory", "history.jsonl"))

	for _, c := range []struct{ name, args string }{
		{"edit_file", `{"path":"memory/MEMORY.md","old_text":"likes tea","new_text":"likes green tea"}`},
		{"write_file", `{"path":"skills/trains/SKILL.md","content":"---\nname: trains\n---\n"}`},
		{"write_file", `{"path":"SOUL.md","content":"calm"}`},
		{"apply_patch", `{"edits":[{"path":"USER.md","action":"add","new_text":"Name: Mei\n"}]}`},
		{"read_file", `{"path":"AGENTS.md"}`},
	} {
		res := run(c.name, c.args)
		require.False(t, res.IsError, "%s %s: %s", c.name, c.args, res.Text)
	}
	data, _ = os.ReadFile(filepath.Join(ws, "memory", "MEMORY.md"))
	require.Equal(t, "likes green tea\n", string(data))
}

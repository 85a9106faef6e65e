package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func put(t *testing.T, ws, rel, text string) {
	t.Helper()
	p := filepath.Join(ws, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func read(t *testing.T, ws, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(data)
}

func TestCommitLogShowRestore(t *testing.T) {
	ws := t.TempDir()
	put(t, ws, "memory/MEMORY.md", "# Memory\n- likes tea\n")
	put(t, ws, "SOUL.md", "calm\n")
	put(t, ws, "notes.txt", "not tracked\n")
	s, err := Open(ws)
	require.NoError(t, err)
	first, files, err := s.Commit("dream: periodic memory consolidation", time.Now())
	require.NoError(t, err)
	require.NotEmpty(t, first)
	require.Equal(t, []string{"SOUL.md", "memory/MEMORY.md"}, files)

	again, _, err := s.Commit("nothing changed", time.Now())
	require.NoError(t, err)
	require.Empty(t, again, "no empty commits")

	put(t, ws, "memory/MEMORY.md", "# Memory\n- likes coffee now\n")
	put(t, ws, "skills/trains/SKILL.md", "---\nname: trains\n---\n")
	second, files, err := s.Commit("dream: periodic memory consolidation", time.Now())
	require.NoError(t, err)
	require.Equal(t, []string{"memory/MEMORY.md", "skills/trains/SKILL.md"}, files)

	log, err := s.Log(10)
	require.NoError(t, err)
	require.Len(t, log, 2)
	require.Equal(t, second, log[0].Hash)
	require.Equal(t, "dream: periodic memory consolidation", log[0].Message)

	show, err := s.Show(log[0].Short())
	require.NoError(t, err)
	require.Contains(t, show, "-- likes tea")
	require.Contains(t, show, "+- likes coffee now")

	s2, err := Open(ws) // a later process
	require.NoError(t, err)
	_, files, err = s2.Restore(first[:7], time.Now())
	require.NoError(t, err)
	require.Equal(t, "# Memory\n- likes tea\n", read(t, ws, "memory/MEMORY.md"))
	require.NoFileExists(t, filepath.Join(ws, "skills", "trains", "SKILL.md"), "added since: removed")
	require.Equal(t, "not tracked\n", read(t, ws, "notes.txt"))
	require.Equal(t, []string{"memory/MEMORY.md", "skills/trains/SKILL.md"}, files)
	log, err = s2.Log(10)
	require.NoError(t, err)
	require.Len(t, log, 3)
	require.Contains(t, log[0].Message, "dream-restore: back to "+first[:7])

	_, err = s2.Show("zzzz")
	require.ErrorContains(t, err, "no memory commit")

	if gitBin, err := exec.LookPath("git"); err == nil { // the real git reads what go-git wrote
		out, err := exec.Command(gitBin, "--git-dir", Dir(ws), "fsck", "--strict").CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

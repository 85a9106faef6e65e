package testenv

import (
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/memory/gitstore"
)

// DreamLearned leaves in workspace what two Dream runs leave: USER.md, and
// MEMORY.md going from "likes tea" to "likes green tea", each run a commit.
func DreamLearned(t testing.TB, workspace string) *gitstore.Store {
	t.Helper()
	WriteFile(t, workspace, "memory/MEMORY.md", "# Memory\n- likes tea\n")
	WriteFile(t, workspace, "USER.md", "Name: Ada\n")
	repo, err := gitstore.Open(workspace)
	if err != nil {
		t.Fatal(err)
	}
	for i, memory := range []string{"", "# Memory\n- likes green tea\n"} {
		if i > 0 {
			WriteFile(t, workspace, "memory/MEMORY.md", memory)
		}
		if _, _, err := repo.Commit("dream: periodic memory consolidation", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/session"
)

func sessionPath(t *testing.T, h *testenv.Home, key string) string {
	t.Helper()
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(h.ConfigPath), h.Workspace), nil)
	require.NoError(t, err)
	return store.Path(key)
}

// chaosSideEffects checks what the chaos turns left behind: the counter
// file, the message sends and the journals. A side effect may be missing
// only where the model was told its outcome is unknown.
func chaosSideEffects(t *testing.T, h *testenv.Home, ch *recordingChannel, n int, sessions map[string]bool) (dups, missing []string) {
	t.Helper()
	toolRows := map[string]int{}
	unknown := map[string]bool{}
	users := map[string]int{}
	for key := range sessions {
		_, msgs := sessionLines(t, h, key)
		entries := map[string]int{}
		for _, m := range msgs {
			if m.EntryID != "" {
				entries[m.Turn+"#"+m.EntryID]++
			}
			switch m.Role {
			case "tool":
				toolRows[m.ToolCallID]++
				if strings.Contains(m.Content, "outcome unknown") {
					unknown[m.ToolCallID] = true
				}
			case "user":
				if tag := chaosTurnTag.FindString(m.Content); tag != "" {
					users[tag]++
				}
			}
		}
		for e, c := range entries {
			if c > 1 {
				dups = append(dups, fmt.Sprintf("%s: journal entry %s written %d times", key, e, c))
			}
		}
	}
	counter, _ := os.ReadFile(filepath.Join(h.Workspace, "counter.txt"))
	runs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(counter)), "\n") {
		runs[line]++
	}
	sends := map[string]int{}
	for _, d := range ch.Deliveries() {
		if d.Route.ChatID == "chaos-log" {
			sends[d.Text]++
		}
	}
	for i := 0; i < n; i++ {
		for _, s := range chaosSteps {
			id := fmt.Sprintf("t%d-%s", i, s)
			switch c := toolRows[id]; {
			case c == 0:
				missing = append(missing, "no result row for "+id)
			case c > 1:
				dups = append(dups, fmt.Sprintf("%d result rows for %s", c, id))
			}
		}
		check := func(what string, got int, call string) {
			switch {
			case got > 1:
				dups = append(dups, fmt.Sprintf("%s happened %d times", what, got))
			case got == 0 && !unknown[call]:
				missing = append(missing, what+" never happened and the model was not told its outcome is unknown")
			}
		}
		check(fmt.Sprintf("exec of turn %d", i), runs[fmt.Sprintf("t%d", i)], fmt.Sprintf("t%d-exec", i))
		check(fmt.Sprintf("message send of turn %d", i), sends[fmt.Sprintf("progress %d", i)], fmt.Sprintf("t%d-msg", i))
		if c := users[fmt.Sprintf("chaos-turn-%d", i)]; c != 1 {
			dups = append(dups, fmt.Sprintf("the message of turn %d is journaled %d times", i, c))
		}
	}
	return dups, missing
}

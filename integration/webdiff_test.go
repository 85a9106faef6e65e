package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestWebConsoleFileEditDiff: a turn's edit_file and write_file calls show
// in its details as unified diffs, drawn line by line.
func TestWebConsoleFileEditDiff(t *testing.T) {
	chromium := browser(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "e1", Name: "edit_file", Args: `{"path":"notes.md","old_text":"- tea\n","new_text":"- green tea\n- oolong\n"}`},
			modeltest.Call{ID: "w1", Name: "write_file", Args: `{"path":"todo.txt","content":"brew\n"}`}),
		modeltest.Text("Edited your notes."))
	defer model.Close()
	webPort := testenv.FreePort(t)
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"web": map[string]any{"port": webPort}}})
	testenv.WriteFile(t, home.Workspace, "notes.md", "# Notes\n- tea\n")
	env, _ := embeddedEnv(t, home)
	base, out, errOut := startWebGateway(t, env)
	pg, errs := newWebPage(t, chromium, 1200, 860, out, errOut)

	pg.openChat(base, "diffs")
	pg.send("switch me to green tea")
	pg.waitFor("the answer", `document.getElementById('log').textContent.includes('Edited your notes.')`)
	b, err := os.ReadFile(filepath.Join(home.Workspace, "notes.md"))
	require.NoError(t, err)
	require.Equal(t, "# Notes\n- green tea\n- oolong\n", string(b), "the edit ran")
	pg.run("open what the turn did", chromedp.Click(chromedp.CSS(".msg.assistant .turn-details summary")))
	pg.waitFor("the edits as diffs", `(() => {
		const lines = (tool, cls) => [...document.querySelectorAll('.tool-card[data-tool="' + tool + '"] pre.diff .' + cls)].map(e => e.textContent.trim());
		return lines('edit_file', 'del').join('|') === '-- tea' && lines('edit_file', 'add').join('|') === '+- green tea|+- oolong' &&
			lines('edit_file', 'file').join('|') === '--- a/notes.md|+++ b/notes.md' && lines('write_file', 'add').join('|') === '+brew';
	})()`)
	shot(t, pg.ctx, "web-edit-diff.png")
	require.Empty(t, errs.all(), "the page reported errors")
}

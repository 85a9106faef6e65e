package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// nanobotHome copies testdata/nanobot-home: a nanobot config dir whose
// workspace carries .nanobot/workspace-id and whose sessions/<id>/ holds a
// Telegram chat nanobot wrote.
func nanobotHome(t *testing.T) (configDir, workspace string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/nanobot-home")))
	return dir, filepath.Join(dir, "workspace")
}

func TestANanobotWorkspaceBringsItsSessions(t *testing.T) {
	configDir, workspace := nanobotHome(t)
	id, err := WorkspaceID(workspace)
	require.NoError(t, err)
	require.Equal(t, "5d41402abc4b2a76b9719d911017c592", id)
	dir := SessionsDir(configDir, workspace)
	require.Equal(t, filepath.Join(configDir, "sessions", id), dir)

	store, err := NewJSONLStore(dir, nil)
	require.NoError(t, err)
	list, err := store.Sessions()
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "telegram:42", list[0].Key)
	sess, err := store.Load(context.Background(), "telegram:42")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 4)
	require.Equal(t, "你好，今天深圳天气怎么样", sess.Messages[2].Content)
	require.Len(t, sess.History(0, nil), 4, "nanobot's history replays")
	require.Empty(t, UnreadSessionsDir(configDir, workspace), "nothing was kept under the path hash")
}

func TestWorkspaceWithoutNanobotsIDKeepsThePathHash(t *testing.T) {
	configDir, ws := t.TempDir(), t.TempDir()
	id, err := WorkspaceID(ws)
	require.NoError(t, err)
	require.Empty(t, id)
	require.Equal(t, filepath.Join(configDir, "sessions", pathID(ws)), SessionsDir(configDir, ws))
	require.Len(t, pathID(ws), 12)
}

func TestAnUnusableWorkspaceIDIsReportedAndIgnored(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, ws string){
		"not hex": func(t *testing.T, ws string) {
			require.NoError(t, os.WriteFile(filepath.Join(ws, workspaceIDFile), []byte("not-an-id\n"), 0o600))
		},
		"a symlink": func(t *testing.T, ws string) {
			target := filepath.Join(t.TempDir(), "id")
			require.NoError(t, os.WriteFile(target, []byte("5d41402abc4b2a76b9719d911017c592\n"), 0o600))
			require.NoError(t, os.Symlink(target, filepath.Join(ws, workspaceIDFile)))
		},
	} {
		t.Run(name, func(t *testing.T) {
			configDir, ws := t.TempDir(), t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".nanobot"), 0o700))
			setup(t, ws)
			_, err := WorkspaceID(ws)
			require.ErrorContains(t, err, workspaceIDFile)
			require.Equal(t, filepath.Join(configDir, "sessions", pathID(ws)), SessionsDir(configDir, ws))
		})
	}
}

func TestSessionsKeptBeforeNanobotsIDAreNamed(t *testing.T) {
	configDir, workspace := nanobotHome(t)
	old := filepath.Join(configDir, "sessions", pathID(workspace))
	require.NoError(t, os.MkdirAll(old, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(old, "Y2xpOmRpcmVjdA.jsonl"), []byte("{}\n"), 0o600))
	require.Equal(t, old, UnreadSessionsDir(configDir, workspace))
}

package tools

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	env, r := fsEnv(t)
	require.NoError(t, os.Mkdir(filepath.Join(env.Workspace, "adir"), 0o755))
	writeTestFile(t, env.Workspace, "exists.txt", []byte("old content that is longer"))

	for _, tc := range []struct {
		name    string
		path    string
		content string
		target  string // file expected to hold content, relative to the workspace
		errHas  string
	}{
		{name: "new file", path: "a.txt", content: "hello", target: "a.txt"},
		{name: "creates parents", path: "deep/er/b.txt", content: "x\ny\n", target: "deep/er/b.txt"},
		{name: "overwrites", path: "exists.txt", content: "new", target: "exists.txt"},
		{name: "empty content", path: "empty.txt", content: "", target: "empty.txt"},
		{name: "multibyte counts bytes", path: "u.txt", content: "héllo", target: "u.txt"},
		{name: "absolute inside", path: filepath.Join(env.Workspace, "abs.txt"), content: "abs", target: "abs.txt"},
		{name: "directory", path: "adir", content: "x", errHas: "is a directory"},
		{name: "outside", path: "../escape.txt", content: "x", errHas: "outside the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, r, env, "write_file", map[string]any{"path": tc.path, "content": tc.content})
			if tc.errHas != "" {
				require.True(t, res.IsError, res.Text)
				require.Contains(t, res.Text, tc.errHas)
				return
			}
			require.False(t, res.IsError, res.Text)
			target := filepath.Join(env.Workspace, tc.target)
			require.Equal(t, "Successfully wrote "+strconv.Itoa(len(tc.content))+" bytes to "+target, res.Text)
			got, err := os.ReadFile(target)
			require.NoError(t, err)
			require.Equal(t, tc.content, string(got))
		})
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(env.Workspace), "escape.txt"))
	require.True(t, os.IsNotExist(err))
	assertNoTempFiles(t, env.Workspace)
}

func TestWriteFileKeepsModeAndFollowsSymlink(t *testing.T) {
	env, r := fsEnv(t)
	p := writeTestFile(t, env.Workspace, "script.sh", []byte("#!/bin/sh\n"))
	require.NoError(t, os.Chmod(p, 0o750))
	require.NoError(t, os.Symlink("script.sh", filepath.Join(env.Workspace, "link.sh")))

	res := call(t, r, env, "write_file", map[string]any{"path": "link.sh", "content": "echo hi\n"})
	require.False(t, res.IsError, res.Text)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "echo hi\n", string(got))
	lfi, err := os.Lstat(filepath.Join(env.Workspace, "link.sh"))
	require.NoError(t, err)
	require.NotZero(t, lfi.Mode()&os.ModeSymlink, "the symlink itself stays a symlink")
}

func TestWriteFileCoercesContent(t *testing.T) {
	env, r := fsEnv(t)
	res := call(t, r, env, "write_file", map[string]any{"path": "n.txt", "content": 42})
	require.False(t, res.IsError, res.Text)
	got, err := os.ReadFile(filepath.Join(env.Workspace, "n.txt"))
	require.NoError(t, err)
	require.Equal(t, "42", string(got))

	res = call(t, r, env, "write_file", map[string]any{"path": "n.txt"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "missing property 'content'")
}

func TestWriteFileFlags(t *testing.T) {
	_, r := fsEnv(t)
	tool, _ := r.Get("write_file")
	require.Equal(t, Flags{SideEffects: true}, tool.Flags())
	require.False(t, tool.Flags().ConcurrencySafe())
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		require.NoError(t, err)
		require.NotContains(t, filepath.Base(p), ".tmp-", "leftover temp file %s", p)
		return nil
	}))
}

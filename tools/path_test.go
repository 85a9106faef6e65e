package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pathFixture builds a workspace next to an "outside" directory:
//
//	root/ws/sub/file.txt
//	root/ws/inlink      -> root/ws/sub
//	root/ws/outlink     -> root/outside
//	root/ws/dangling    -> root/outside/new.txt (missing)
//	root/ws/loop1 <-> root/ws/loop2
//	root/outside/secret.txt
//	root/wslink         -> root/ws
type pathFixture struct {
	root, ws, outside string
}

func newPathFixture(t testing.TB, dir string) pathFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	fx := pathFixture{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	require.NoError(t, os.MkdirAll(filepath.Join(fx.ws, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(fx.outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(fx.ws, "sub", "file.txt"), []byte("hi"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(fx.outside, "secret.txt"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(fx.ws, "sub"), filepath.Join(fx.ws, "inlink")))
	require.NoError(t, os.Symlink(fx.outside, filepath.Join(fx.ws, "outlink")))
	require.NoError(t, os.Symlink("../outside/new.txt", filepath.Join(fx.ws, "dangling")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(fx.ws, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(fx.ws, "loop2")))
	require.NoError(t, os.Symlink(fx.ws, filepath.Join(root, "wslink")))
	return fx
}

func TestResolvePath(t *testing.T) {
	fx := newPathFixture(t, t.TempDir())
	home := filepath.Join(fx.root, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	t.Setenv("HOME", home)

	for _, tc := range []struct {
		name     string
		ws       string // defaults to fx.ws
		restrict bool
		path     string
		want     string // expected resolved path when no error
		outside  bool   // expect ErrOutsideWorkspace
		errHas   string // expect another error containing this
	}{
		{name: "relative", restrict: true, path: "sub/file.txt", want: "ws/sub/file.txt"},
		{name: "dot", restrict: true, path: ".", want: "ws"},
		{name: "not yet existing", restrict: true, path: "new/dir/f.txt", want: "ws/new/dir/f.txt"},
		{name: "dotdot inside", restrict: true, path: "sub/../sub/./file.txt", want: "ws/sub/file.txt"},
		{name: "dotdot through missing dir", restrict: true, path: "nope/../sub", want: "ws/sub"},
		{name: "dotdot escape", restrict: true, path: "../outside/secret.txt", outside: true},
		{name: "dotdot escape unrestricted", path: "../outside/secret.txt", want: "outside/secret.txt"},
		{name: "absolute inside", restrict: true, path: filepath.Join(fx.ws, "sub"), want: "ws/sub"},
		{name: "absolute outside", restrict: true, path: "/etc/passwd", outside: true},
		{name: "absolute outside unrestricted", path: filepath.Join(fx.outside, "secret.txt"), want: "outside/secret.txt"},
		{name: "symlink inside", restrict: true, path: "inlink/file.txt", want: "ws/sub/file.txt"},
		{name: "symlink escape", restrict: true, path: "outlink/secret.txt", outside: true},
		{name: "symlink escape unrestricted", path: "outlink/secret.txt", want: "outside/secret.txt"},
		{name: "symlink then dotdot is physical", restrict: true, path: "outlink/../ws/sub", want: "ws/sub"},
		{name: "symlink then dotdot escapes", restrict: true, path: "inlink/../../outside", outside: true},
		{name: "dangling symlink escape", restrict: true, path: "dangling", outside: true},
		{name: "dangling symlink unrestricted", path: "dangling", want: "outside/new.txt"},
		{name: "symlink loop", path: "loop1/x", errHas: "too many levels of symbolic links"},
		{name: "workspace via symlink", ws: filepath.Join(fx.root, "wslink"), restrict: true, path: "sub/file.txt", want: "ws/sub/file.txt"},
		{name: "workspace via symlink absolute", ws: filepath.Join(fx.root, "wslink"), restrict: true, path: filepath.Join(fx.ws, "sub"), want: "ws/sub"},
		{name: "prefix sibling is outside", restrict: true, path: fx.ws + "2/x", outside: true},
		{name: "tilde", path: "~", want: "home"},
		{name: "tilde slash", path: "~/notes.md", want: "home/notes.md"},
		{name: "tilde restricted outside", restrict: true, path: "~/notes.md", outside: true},
		{name: "tilde inside workspace", ws: home, restrict: true, path: "~/notes.md", want: "home/notes.md"},
		{name: "tilde user is literal", restrict: true, path: "~bob/x", want: "ws/~bob/x"},
		{name: "through a file", restrict: true, path: "sub/file.txt/x", want: "ws/sub/file.txt/x"},
		{name: "empty", path: "  ", errHas: "path is empty"},
		{name: "nul", path: "a\x00b", errHas: "NUL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := tc.ws
			if ws == "" {
				ws = fx.ws
			}
			got, err := ResolvePath(Env{Workspace: ws, RestrictToWorkspace: tc.restrict}, tc.path)
			switch {
			case tc.outside:
				require.ErrorIs(t, err, ErrOutsideWorkspace)
				require.Contains(t, err.Error(), "is outside the workspace "+ws+" (tools.restrictToWorkspace is on)")
				require.Contains(t, err.Error(), `"`+tc.path+`"`)
			case tc.errHas != "":
				require.ErrorContains(t, err, tc.errHas)
			default:
				require.NoError(t, err)
				require.Equal(t, filepath.Join(fx.root, tc.want), got)
			}
		})
	}
}

func TestResolvePathErrorMessage(t *testing.T) {
	_, err := ResolvePath(Env{Workspace: "/", RestrictToWorkspace: true}, "/etc/passwd")
	require.NoError(t, err, "the root workspace contains everything")

	ws := t.TempDir()
	_, err = ResolvePath(Env{Workspace: ws, RestrictToWorkspace: true}, "/etc/passwd")
	require.EqualError(t, err, `path "/etc/passwd" is outside the workspace `+ws+` (tools.restrictToWorkspace is on)`)
}

func TestResolvePathDefaultsToWorkingDirectory(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	wd, err = filepath.EvalSymlinks(wd)
	require.NoError(t, err)
	got, err := ResolvePath(Env{}, "x.txt")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(wd, "x.txt"), got)
}

// FuzzResolvePath checks that with the restriction on, a resolved path is
// always inside the workspace, resolving is idempotent, and nothing panics.
func FuzzResolvePath(f *testing.F) {
	fx := newPathFixture(f, f.TempDir())
	for _, seed := range []string{
		"sub/file.txt", "..", "../outside", "/etc/passwd", "outlink/secret.txt", "inlink/../..",
		"dangling", "loop1", "~", "~/x", "./././", "a/b/../../..", "sub/file.txt/../../outlink",
		fx.ws + "/../ws/sub", fx.outside, "//", "\x00", "inlink/../outlink/../sub",
	} {
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, p string, viaLink bool) {
		ws := fx.ws
		if viaLink {
			ws = filepath.Join(fx.root, "wslink")
		}
		env := Env{Workspace: ws, RestrictToWorkspace: true}
		got, err := ResolvePath(env, p)
		if err != nil {
			if errors.Is(err, ErrOutsideWorkspace) {
				require.Contains(t, err.Error(), "tools.restrictToWorkspace is on")
			}
			return
		}
		require.True(t, filepath.IsAbs(got), got)
		require.Equal(t, filepath.Clean(got), got)
		require.True(t, got == fx.ws || strings.HasPrefix(got, fx.ws+string(filepath.Separator)), "%q resolved to %q outside %q", p, got, fx.ws)
		again, err := ResolvePath(env, got)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}

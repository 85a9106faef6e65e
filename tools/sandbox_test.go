package tools

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

// mounts are the (flag, source, destination) triples of a bwrap argv, in order.
type mount struct{ flag, src, dst string }

func mountsOf(argv []string) []mount {
	var out []mount
	for i := 0; i < len(argv); i++ {
		switch argv[i] {
		case "--bind", "--ro-bind", "--ro-bind-try", "--bind-try", "--setenv":
			out = append(out, mount{argv[i], argv[i+1], argv[i+2]})
			i += 2
		case "--tmpfs", "--dir", "--proc", "--dev", "--chdir", "--remount-ro":
			out = append(out, mount{argv[i], "", argv[i+1]})
			i++
		case "--":
			return out
		}
	}
	return out
}

func indexOf(ms []mount, m mount) int { return slices.Index(ms, m) }

func TestSandboxArgv(t *testing.T) {
	ws := "/home/u/.nanobot/workspace"
	base := SandboxLayout{Workspace: ws, Media: ws + "/media", Hidden: []string{"/home/u/.nanobot", "/etc/nanobot"}, Network: true}
	cases := []struct {
		name  string
		sb    SandboxLayout
		cwd   string
		check func(t *testing.T, argv []string, ms []mount)
	}{
		{"the command runs after -- unchanged, under bwrap's guards", base, ws, func(t *testing.T, argv []string, _ []mount) {
			require.Equal(t, "bwrap", argv[0])
			for _, f := range []string{"--new-session", "--die-with-parent", "--unshare-pid"} {
				require.Contains(t, argv, f)
			}
			i := slices.Index(argv, "--cap-drop")
			require.Equal(t, "ALL", argv[i+1], "no capability survives, even for root")
			sep := slices.Index(argv, "--")
			require.Equal(t, []string{"bash", "-c", `echo 'a b' && cat "f g"`}, argv[sep+1:])
			require.NotContains(t, argv, "--unshare-net", "the network is kept")
		}},
		{"HOME is the workspace, /tmp is private", base, ws, func(t *testing.T, _ []string, ms []mount) {
			require.Contains(t, ms, mount{"--setenv", "HOME", ws})
			require.Contains(t, ms, mount{"--setenv", "TMPDIR", "/tmp"})
			require.Contains(t, ms, mount{"--tmpfs", "", "/tmp"})
			require.Contains(t, ms, mount{"--proc", "", "/proc"})
			require.Contains(t, ms, mount{"--dev", "", "/dev"})
		}},
		{"system folders read-only, nothing of the user's", base, ws, func(t *testing.T, _ []string, ms []mount) {
			require.Contains(t, ms, mount{"--ro-bind", "/usr", "/usr"})
			for _, d := range []string{"/bin", "/lib", "/lib64", "/etc/ssl/certs", "/etc/resolv.conf", "/etc/ld.so.cache", "/etc/alternatives"} {
				require.Contains(t, ms, mount{"--ro-bind-try", d, d})
			}
			for _, m := range ms {
				if m.flag == "--remount-ro" {
					continue
				}
				if m.flag == "--bind" {
					require.Equal(t, ws, m.dst, "the workspace is the only read-write mount")
				}
				require.NotEqual(t, "/", m.dst)
				require.NotEqual(t, "/home", m.dst)
			}
		}},
		{"the hidden folders are masked before the workspace is mounted", base, ws, func(t *testing.T, _ []string, ms []mount) {
			home := indexOf(ms, mount{"--tmpfs", "", "/home/u/.nanobot"})
			etc := indexOf(ms, mount{"--tmpfs", "", "/etc/nanobot"})
			dir := indexOf(ms, mount{"--dir", "", ws})
			bind := indexOf(ms, mount{"--bind", ws, ws})
			chdir := indexOf(ms, mount{"--chdir", "", ws})
			require.True(t, home >= 0 && etc >= 0 && home < dir && etc < dir && dir < bind && bind < chdir, "%v", ms)
			n := 0
			for _, m := range ms {
				if m.flag == "--tmpfs" && m.dst == "/home/u/.nanobot" {
					n++
				}
			}
			require.Equal(t, 1, n, "the workspace's parent is the home: masked once")
		}},
		{"the workspace's parent is masked even when it is not the home", SandboxLayout{Workspace: "/srv/bots/one", Hidden: []string{"/home/u/.nanobot"}}, "", func(t *testing.T, _ []string, ms []mount) {
			require.Contains(t, ms, mount{"--tmpfs", "", "/srv/bots"})
			require.Contains(t, ms, mount{"--tmpfs", "", "/home/u/.nanobot"})
		}},
		{"everything but the workspace and /tmp is read-only once mounted", SandboxLayout{Workspace: ws, Hidden: []string{"/home/u/.nanobot"}, RwBinds: []string{"/var/cache/pip"}}, ws, func(t *testing.T, _ []string, ms []mount) {
			last := indexOf(ms, mount{"--bind", "/var/cache/pip", "/var/cache/pip"})
			hidden := indexOf(ms, mount{"--remount-ro", "", "/home/u/.nanobot"})
			root := indexOf(ms, mount{"--remount-ro", "", "/"})
			require.True(t, last < hidden && hidden < root && root < indexOf(ms, mount{"--chdir", "", ws}), "%v", ms)
		}},
		{"media is read-only, after the workspace", base, ws, func(t *testing.T, _ []string, ms []mount) {
			media := indexOf(ms, mount{"--ro-bind-try", ws + "/media", ws + "/media"})
			require.Greater(t, media, indexOf(ms, mount{"--bind", ws, ws}))
		}},
		{"a config kept in the workspace is masked after it is mounted", SandboxLayout{Workspace: "/w", Hidden: []string{"/w/.cfg", "/w"}, HiddenFiles: []string{"/w/config.json", "/w/.cfg/config.json"}}, "", func(t *testing.T, _ []string, ms []mount) {
			bind := indexOf(ms, mount{"--bind", "/w", "/w"})
			require.Greater(t, indexOf(ms, mount{"--tmpfs", "", "/w/.cfg"}), bind)
			require.Greater(t, indexOf(ms, mount{"--ro-bind", "/dev/null", "/w/config.json"}), bind)
			require.Equal(t, -1, indexOf(ms, mount{"--ro-bind", "/dev/null", "/w/.cfg/config.json"}), "already under a tmpfs")
			require.Equal(t, -1, indexOf(ms, mount{"--tmpfs", "", "/w"}), "the workspace itself is never masked")
			require.Equal(t, -1, indexOf(ms, mount{"--tmpfs", "", "/"}), "nor the root")
		}},
		{"a cwd inside the workspace is kept", base, ws + "/src/lib", func(t *testing.T, _ []string, ms []mount) {
			require.Contains(t, ms, mount{"--chdir", "", ws + "/src/lib"})
		}},
		{"a cwd outside the workspace becomes the workspace", base, "/home/u/other", func(t *testing.T, _ []string, ms []mount) {
			require.Contains(t, ms, mount{"--chdir", "", ws})
		}},
		{"extra binds come last, read-only and read-write", SandboxLayout{Workspace: ws, RoBinds: []string{"/opt/tools"}, RwBinds: []string{"/var/cache/pip"}}, ws, func(t *testing.T, _ []string, ms []mount) {
			bind := indexOf(ms, mount{"--bind", ws, ws})
			require.Greater(t, indexOf(ms, mount{"--ro-bind", "/opt/tools", "/opt/tools"}), bind)
			require.Greater(t, indexOf(ms, mount{"--bind", "/var/cache/pip", "/var/cache/pip"}), bind)
		}},
		{"sandboxNetwork false unshares the network", SandboxLayout{Workspace: ws}, ws, func(t *testing.T, argv []string, _ []mount) {
			require.Contains(t, argv, "--unshare-net")
		}},
		{"a workspace at the root hides no root", SandboxLayout{Workspace: "/workspace"}, "", func(t *testing.T, _ []string, ms []mount) {
			require.Equal(t, -1, indexOf(ms, mount{"--tmpfs", "", "/"}))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := c.sb.Argv(c.cwd, "bash", "-c", `echo 'a b' && cat "f g"`)
			c.check(t, argv, mountsOf(argv))
		})
	}
}

// requireBwrap skips, loudly, where bwrap cannot run (the only reason to).
func requireBwrap(t *testing.T) {
	t.Helper()
	if err := NewSandbox(SandboxLayout{}).Ready(); err != nil {
		peer.Missing(t, peer.Bwrap, err.Error()+" (make bwrap installs bubblewrap)")
	}
	peer.Used(t, peer.Bwrap)
}

// The layout holds under a real bwrap: the config is gone, only the
// workspace takes writes, no capability or new privilege, private /tmp.
func TestSandboxUnderRealBwrap(t *testing.T) {
	requireBwrap(t)
	home := t.TempDir()
	nb := filepath.Join(home, ".nanobot")
	ws := filepath.Join(nb, "workspace")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "media"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(nb, "config.json"), []byte(`{"apiKey":"sk-sandbox-secret"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "media", "photo.txt"), []byte("pixels"), 0o644))
	other := filepath.Join(home, "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "tool.txt"), []byte("tooling"), 0o644))

	run := func(t *testing.T, sb *Sandbox, script string) (string, error) {
		cmd, err := sb.Command(context.Background(), ws, "/bin/sh", "-c", script)
		require.NoError(t, err)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	sb := NewSandbox(SandboxLayout{Workspace: ws, Media: filepath.Join(ws, "media"), Hidden: []string{nb}, RoBinds: []string{other}, Network: true})

	out, err := run(t, sb, "cat "+filepath.Join(nb, "config.json"))
	require.Error(t, err, out)
	require.NotContains(t, out, "sk-sandbox-secret")
	out, err = run(t, sb, "ls -A "+nb)
	require.NoError(t, err, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "workspace", lines[len(lines)-1], "only the workspace is left of the home: %s", out)

	out, err = run(t, sb, "echo x > inside.txt && echo $HOME && pwd")
	require.NoError(t, err, out)
	require.Equal(t, ws+"\n"+ws+"\n", out)
	data, err := os.ReadFile(filepath.Join(ws, "inside.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(data))

	for _, target := range []string{filepath.Join(nb, "outside.txt"), filepath.Join(other, "w.txt"), filepath.Join(ws, "media", "w.txt"), "/usr/w.txt", "/outside.txt"} {
		out, err = run(t, sb, "echo x > "+target)
		require.Error(t, err, "a write to %s must fail: %s", target, out)
		require.NoFileExists(t, target)
	}
	// The test's home lies under /tmp, which is the sandbox's own: the write
	// succeeds there and never reaches the disk.
	_, _ = run(t, sb, "echo x > "+filepath.Join(home, "outside.txt"))
	require.NoFileExists(t, filepath.Join(home, "outside.txt"))
	out, err = run(t, sb, "cat media/photo.txt "+filepath.Join(other, "tool.txt"))
	require.NoError(t, err, out)
	require.Equal(t, "pixelstooling", out)

	out, err = run(t, sb, "touch /tmp/probe && ls /tmp && grep -E '^(CapEff|NoNewPrivs)' /proc/self/status")
	require.NoError(t, err, out)
	require.Contains(t, out, "probe")
	require.Contains(t, out, "CapEff:\t0000000000000000")
	require.Contains(t, out, "NoNewPrivs:\t1")
	require.NoFileExists(t, "/tmp/probe", "/tmp is private")

	out, err = run(t, NewSandbox(SandboxLayout{Workspace: ws}), "grep -c : /proc/net/dev")
	require.NoError(t, err, out)
	require.Equal(t, "1\n", out, "sandboxNetwork false leaves only the loopback")
}

func TestSandboxThatCannotRunSaysWhy(t *testing.T) {
	missing := NewSandbox(SandboxLayout{Workspace: t.TempDir(), Program: filepath.Join(t.TempDir(), "bwrap")})
	require.ErrorContains(t, missing.Ready(), "bwrap is not installed")
	_, err := missing.Command(context.Background(), "", "true")
	require.ErrorIs(t, err, ErrSandboxUnavailable)

	fake := filepath.Join(t.TempDir(), "bwrap")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755))
	broken := NewSandbox(SandboxLayout{Workspace: t.TempDir(), Program: fake})
	require.ErrorContains(t, broken.Ready(), "bwrap cannot run here: "+fake+" --ro-bind / / true failed: bwrap: No permissions to create new namespace")
}

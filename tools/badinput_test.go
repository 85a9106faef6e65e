package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bad-input corpus for tools: exec deny bypass attempts, SSRF vectors,
// path escapes and broken tool arguments. Each must get a clear refusal or
// error text and never a panic.

func TestBadInputExecDenyBypasses(t *testing.T) {
	g, err := newCommandGuard(nil, nil, nil)
	require.NoError(t, err)
	for _, c := range []string{
		`r''m -rf /`, `r""m -rf /`, `r\m -rf /`, `"rm" -rf /`, `'rm' -rf /`, `\rm -rf /`,
		`rm${IFS}-rf${IFS}/`, `rm$IFS-rf /`, `rm "-rf" /`, `rm '-rf' /`, `rm -'r'f /`,
		`X=rm; $X -rf /`, `X=rm && ${X} -rf /`, `a=r; b=m; $a$b -rf /`, `F=-rf; rm $F /`,
		`$(echo rm) -rf /`, "`echo rm` -rf /", `$(printf rm) -rf /`, `$'\x72m' -rf /`, `$'\162m' -rf /`,
		`{rm,-rf,/}`, `(rm -rf /)`, `bash -c 'rm -rf /'`, `sh -c "rm -rf /"`, `eval "rm -rf /"`,
		`/bin/rm -rf /`, `command rm -rf /`, `env rm -rf /`, `xargs rm -rf < list`, "rm\t-rf /",
		`shut''down -h now`, `re\boot`, `mk''fs /dev/sda`, `d''d if=/dev/zero of=/dev/sda`,
		`echo x >/dev/s''da`, `echo x > memory/history.json''l`, `tee memory/hist""ory.jsonl < x`,
		`P=/dev/sda; echo x > $P`,
	} {
		assert.NotEmpty(t, g.check(context.Background(), c), "a bypass: %q runs", c)
	}
	// Plain commands stay allowed after the second look.
	for _, c := range []string{
		`echo "it's fine"`, `X=1; echo $X`, `printf '%s\n' a b`, `echo {a,b}.txt`, `ls $HOME`, `git log --format='%h'`,
	} {
		require.Empty(t, g.check(context.Background(), c), "must be allowed: %q", c)
	}
}

func TestBadInputSSRFVectors(t *testing.T) {
	res := fakeResolver{
		"localhost": {"127.0.0.1"}, "127.0.0.1.nip.io": {"127.0.0.1"}, "metadata.internal": {"169.254.169.254"},
		"mixed.example": {"93.184.216.34", "10.0.0.5"}, "v6only.example": {"::1"}, "mapped.example": {"::ffff:192.168.0.1"},
	}
	g, err := NewSSRFGuard(nil, res)
	require.NoError(t, err)
	for _, u := range []string{
		"http://127.0.0.1/", "http://localhost:8080/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/",
		"http://0x7f.0.0.1/", "http://127.1/", "http://0/", "http://0.0.0.0/", "http://[::1]/", "http://[::]/",
		"http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[0:0:0:0:0:ffff:127.0.0.1]/",
		"http://169.254.169.254/latest/meta-data/", "http://[::ffff:a9fe:a9fe]/", "http://[fe80::1%25eth0]/",
		"http://10.0.0.1/", "http://192.168.1.1/", "http://172.16.0.1/", "http://100.64.0.1/", "http://[fc00::1]/",
		"http://[64:ff9b::7f00:1]/", "http://[2002:7f00:1::1]/", "http://[2002:a9fe:a9fe::]/", "http://[64:ff9b:1::a00:1]/",
		"http://017700000001/", "http://127.0.0.1.nip.io/", "http://example.com@127.0.0.1/", "http://metadata.internal/",
		"http://mixed.example/", "http://v6only.example/", "http://mapped.example/", "http://224.0.0.1/", "http://255.255.255.255/",
		"file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://example.com/", "http:///nohost", "javascript:alert(1)",
	} {
		assert.Error(t, g.CheckURL(context.Background(), u), "a bypass: %s is reachable", u)
	}
}

func TestBadInputPathEscapes(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "link")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "file-link")))
	require.NoError(t, os.Symlink("../../../../../../..", filepath.Join(ws, "up")))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(ws, "sub", "parent")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(ws, "loop1")))
	require.NoError(t, os.Symlink("loop1", filepath.Join(ws, "loop2")))
	env := Env{Workspace: ws, RestrictToWorkspace: true}
	for _, p := range []string{
		"../x", "../../etc/passwd", "/etc/passwd", "sub/../../x", "./../x", "~/x", "link/secret.txt",
		"file-link", "up/etc/passwd", "sub/parent/../x", "link", outside, outside + "/secret.txt", "", "   ",
		"a\x00b", "loop1/x", "sub/../link/secret.txt", ws + "/../x", "//etc/passwd",
	} {
		_, err := ResolvePath(env, p)
		require.Error(t, err, "an escape: %q", p)
	}
	reg := NewRegistry()
	RegisterFilesystem(reg)
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"link/secret.txt"}`}, {"read_file", `{"path":"file-link"}`},
		{"write_file", `{"path":"link/new.txt","content":"x"}`}, {"write_file", `{"path":"../x.txt","content":"x"}`},
		{"edit_file", `{"path":"file-link","old_text":"s","new_text":"t"}`}, {"list_dir", `{"path":"up"}`},
	} {
		res := reg.Execute(context.Background(), env, c.tool, c.args)
		require.True(t, res.IsError, "%s %s: %s", c.tool, c.args, res.Text)
	}
	data, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
	require.NoError(t, err)
	require.Equal(t, "s", string(data), "nothing outside was changed")
	_, err = os.Stat(filepath.Join(outside, "new.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestBadInputToolArguments(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644))
	reg := NewRegistry()
	RegisterFilesystem(reg)
	ex, err := NewExec(DefaultExecOptions())
	require.NoError(t, err)
	reg.Register(ex)
	env := Env{Workspace: ws, RestrictToWorkspace: true}
	huge := strings.Repeat("x", 10<<20)
	cases := []struct{ tool, args string }{
		{"read_file", ``}, {"read_file", `null`}, {"read_file", `[]`}, {"read_file", `"a.txt"`}, {"read_file", `{`},
		{"read_file", `{"path":1}`}, {"read_file", `{"path":true}`}, {"read_file", `{"path":null}`}, {"read_file", `{"path":["a"]}`},
		{"read_file", `{"path":{"x":1}}`}, {"read_file", `{}`}, {"read_file", `{"path":"a.txt","offset":"x"}`},
		{"read_file", `{"path":"a.txt","offset":-5}`}, {"read_file", `{"path":"a.txt","limit":{"n":1}}`}, {"read_file", `{"path":"` + huge + `"}`}, {"read_file", `{"path":"nope.txt"}`},
		{"read_file", `{"path":"\u0000"}`},
		{"write_file", `{}`}, {"write_file", `{"path":"b.txt"}`}, {"write_file", `{"content":"x"}`},
		{"write_file", `{"path":"b.txt","content":{"a":1}}`}, {"write_file", `{"path":"","content":"x"}`}, {"write_file", `{"path":".","content":"x"}`},
		{"write_file", `{"path":"a.txt/deeper","content":"x"}`},
		{"edit_file", `{}`}, {"edit_file", `{"path":"a.txt"}`}, {"edit_file", `{"path":"a.txt","old_text":"","new_text":"x"}`},
		{"edit_file", `{"path":"a.txt","old_text":"absent","new_text":"x"}`}, {"edit_file", `{"path":"a.txt","old_text":1,"new_text":2}`},
		{"edit_file", `{"path":"missing.txt","old_text":"a","new_text":"b"}`},
		{"list_dir", `{"path":"a.txt"}`}, {"list_dir", `{"path":"missing"}`}, {"list_dir", `{"path":7}`},
		{"exec", `{}`}, {"exec", `{"command":""}`}, {"exec", `{"command":["ls"]}`},
		{"exec", `{"command":"true","timeout":"soon"}`}, {"exec", `{"command":"true","timeout":-1}`}, {"exec", `{"command":"true","timeout":1e12}`},
		{"exec", `{"command":"true","working_dir":"../.."}`}, {"exec", `{"command":"true","working_dir":"missing-dir"}`},
		{"no_such_tool", `{}`}, {"read-file", `{"path":"a.txt"}`}, {"", `{}`},
	}
	for _, c := range cases {
		res := reg.Execute(context.Background(), env, c.tool, c.args)
		assert.True(t, res.IsError, "%s(%.80s) must fail: %s", c.tool, c.args, res.Text)
		assert.True(t, strings.HasPrefix(res.Text, "Error"), "%s(%.80s): %s", c.tool, c.args, res.Text)
		assert.NotContains(t, res.Text, "runtime error", "%s(%.80s) panicked", c.tool, c.args)
	}
	data, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(data), "no bad call changed the file")
	// Extra arguments are ignored and an overflowing limit is clamped: the file is read.
	for _, args := range []string{`{"path":"a.txt","bogus":1}`, `{"path":"a.txt","limit":1e309}`, `{"path":"a.txt","limit":9223372036854775807}`, `{"path":"a.txt","extra":1,"path2":[[[[[]]]]]}`} {
		res := reg.Execute(context.Background(), env, "read_file", args)
		require.False(t, res.IsError, res.Text)
		require.Contains(t, res.Text, "hello", args)
	}
}

package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExecDenyPatterns(t *testing.T) {
	g, err := newCommandGuard(nil, nil, nil)
	require.NoError(t, err)
	blocked := []string{
		"rm -r dir", "rm -rf /", "rm -fr /tmp/x", "rm -Rf build", "RM -RF /", "rm -f file.txt",
		"rm -v -r dir", "rm -i -rf x", "rm --recursive dir", "rm --force x", "rm dir -rf",
		"sudo rm -rf /var", "ls && rm -rf ~", "echo hi; rm -r x",
		"del /f c:\\x", "del /q *.*", "rmdir /s c:\\temp",
		"format c:", "ls; format /dev/sda1", "sudo format x", "(format)",
		"mkfs.ext4 /dev/sdb1", "mkfs /dev/sdb", "diskpart",
		"dd if=/dev/zero of=/dev/sda", "dd bs=1M if=/dev/urandom of=x",
		"echo x > /dev/sda", "cat img >/dev/sdb",
		"shutdown -h now", "reboot", "sudo poweroff",
		":(){ :|:& };:", ":() { :|:& }; :",
		"echo x > memory/history.jsonl", "echo x >> /ws/memory/history.jsonl", "echo 5 > memory/.dream_cursor",
		"echo x | tee memory/history.jsonl", "tee -a history.jsonl < x",
		"cp /tmp/h memory/history.jsonl", "mv new.jsonl memory/history.jsonl",
		"dd if=x of=memory/history.jsonl", "sed -i 's/a/b/' memory/history.jsonl", "truncate -s 0 memory/.dream_cursor",
	}
	allowed := []string{
		"rm file.txt", "rm -i file.txt", "rm -v old.log", "git rm --cached x.go", "ls -rf",
		"format_string", "go fmt ./...", "clang-format -i x.c", "echo formatted", "printf '%s' x | formatter",
		"mkdir -p build", "add if=x", "dd_helper", "echo done > out.txt", "ls /dev/sda",
		"rebooted=1", "echo shutdowns", "cat memory/history.jsonl", "grep x memory/history.jsonl",
		"wc -l memory/.dream_cursor", "tail -n 5 history.jsonl", "confirm -rf", "perform -f",
	}
	for _, c := range blocked {
		require.NotEmpty(t, g.check(context.Background(), c), "must be blocked: %q", c)
	}
	for _, c := range allowed {
		require.Empty(t, g.check(context.Background(), c), "must be allowed: %q", c)
	}
}

func TestExecAllowAndExtraDenyPatterns(t *testing.T) {
	g, err := newCommandGuard([]string{`\bcurl\b`}, []string{`^git `, `^ls\b`}, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		cmd, reason string
	}{
		{"git status", ""},
		{"GIT log", ""}, // matched lower-cased, as nanobot does
		{"ls -la", ""},
		{"cat x", "not in allowlist"},
		{"git clone x && curl y", "dangerous pattern detected: denyPatterns: \\bcurl\\b"},
		{"git rm -rf x", "dangerous pattern detected: recursive or forced rm"}, // deny wins over allow
	} {
		require.Equal(t, tc.reason, g.check(context.Background(), tc.cmd), tc.cmd)
	}
}

func TestExecInternalURLGuard(t *testing.T) {
	guard, err := NewSSRFGuard([]string{"192.168.5.0/24"}, fakeResolver{"intra.test": {"10.1.1.1"}, "pub.test": {"8.8.8.8"}})
	require.NoError(t, err)
	g, err := newCommandGuard(nil, nil, guard)
	require.NoError(t, err)
	for _, tc := range []struct {
		cmd, has string
	}{
		{"curl http://169.254.169.254/latest/meta-data", "internal/private URL detected: 169.254.169.254 is a link-local address"},
		{"wget -qO- 'http://intra.test/x'", "intra.test resolves to 10.1.1.1, a private address"},
		{"curl HTTP://[::1]:8080/", "::1 is a loopback address"},
		{"curl http://192.168.5.9/ok", ""},       // whitelisted
		{"curl https://pub.test/page", ""},       // public
		{"curl https://unresolvable.test/x", ""}, // resolution failure is not an internal address
	} {
		reason := g.check(context.Background(), tc.cmd)
		if tc.has == "" {
			require.Empty(t, reason, tc.cmd)
		} else {
			require.Contains(t, reason, tc.has, tc.cmd)
		}
	}
}

// FuzzCommandGuard checks the deny matcher's invariants on arbitrary input:
// it never panics, ASCII case does not matter, and prefixing a harmless
// command can never turn a blocked command into an allowed one.
func FuzzCommandGuard(f *testing.F) {
	for _, s := range []string{"rm -rf /", "rm file", "format c:", "format_string", ":(){ :|:& };:",
		"echo > history.jsonl", "dd if=/dev/zero", "ls", "", "mkfs", "RM -Rf x"} {
		f.Add(s)
	}
	g, err := newCommandGuard(nil, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		ctx := context.Background()
		reason := g.check(ctx, cmd)
		if isASCII(cmd) && (reason == "") != (g.check(ctx, strings.ToUpper(cmd)) == "") {
			t.Fatalf("case changes the verdict for %q", cmd)
		}
		if reason != "" && g.check(ctx, "true; "+cmd) == "" {
			t.Fatalf("prefix unblocks %q", cmd)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

package session

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
)

// badLines are session lines a crash, a disk or a hand edit can leave;
// each is skipped with a problem noted and the good rows around it kept.
var badLines = []string{
	`{"role":"user","content":"torn`, `{"role":`, `{`, `}`, `not json`, `[]`, `"string"`, `42`, `null`, `true`, `{}`, `{"content":"no role"}`, `{"role":"wizard","content":"x"}`,
	"\xff\xfe\xfd", "{\"role\":\"user\",\"content\":\"\xff\"", `{"role":5,"content":"x"}`, `{"role":"user","content":{"a":1}}`,
	`{"role":"user","content":42}`, `{"role":"assistant","tool_calls":"x"}`, `{"role":"tool","tool_call_id":7}`,
	`{"role":"user","content":"x"} trailing`, "\x00\x00\x00", strings.Repeat("x", 2<<20),
	`{"role":"user","content":"` + strings.Repeat("[", 200000) + `"`, `{"_type":"metadata","key":5}`,
}

func TestBadInputSessionLines(t *testing.T) {
	ctx := context.Background()
	for i, bad := range badLines {
		s := newStore(t)
		content := `{"_type":"metadata","key":"cli:x","created_at":"2026-01-02T03:04:05","updated_at":"2026-01-02T03:04:05","metadata":{}}
{"role":"user","content":"before"}
` + bad + `
{"role":"assistant","content":"after"}
`
		require.NoError(t, os.WriteFile(s.Path("cli:x"), []byte(content), 0o600))
		sess, err := s.Load(ctx, "cli:x")
		require.NoError(t, err, "case %d", i)
		var got []string
		for _, m := range sess.Messages {
			got = append(got, m.Content)
		}
		require.Equal(t, []string{"before", "after"}, got, "case %d (%.40q): the good rows are kept", i, bad)
		require.NotEmpty(t, sess.Problems, "case %d (%.40q): the bad line is reported", i, bad)
	}
	// A huge valid message (10 MB) is read back whole.
	s := newStore(t)
	huge := strings.Repeat("y", 10<<20)
	_, err := s.Append(ctx, "cli:big", chat.Message{Role: chat.RoleUser, Content: huge, Turn: "t", EntryID: "u"})
	require.NoError(t, err)
	sess, err := s.Load(ctx, "cli:big")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 1)
	require.Equal(t, len(huge), len(sess.Messages[0].Content))
}

// FuzzSessionLoad: any bytes in a session file load without a panic, every
// message kept has a known role, and appending afterwards works.
func FuzzSessionLoad(f *testing.F) {
	for _, l := range badLines[:20] {
		f.Add([]byte(`{"role":"user","content":"a"}` + "\n" + l + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newStore(t)
		ctx := context.Background()
		require.NoError(t, os.WriteFile(s.Path("cli:f"), data, 0o600))
		sess, err := s.Load(ctx, "cli:f")
		require.NoError(t, err)
		for _, m := range sess.Messages {
			require.True(t, knownRole(m.Role), "role %q", m.Role)
		}
		_, err = s.Append(ctx, "cli:f", chat.Message{Role: chat.RoleUser, Content: "next", Turn: "t", EntryID: "u"})
		require.NoError(t, err)
		sess, err = s.Load(ctx, "cli:f")
		require.NoError(t, err)
		require.Equal(t, "next", sess.Messages[len(sess.Messages)-1].Content)
	})
}

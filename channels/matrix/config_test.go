package matrix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

func load(t *testing.T, block string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"channels":{"matrix":`+block+`}}`), 0o600))
	cfg, _, err := config.Load(path)
	require.NoError(t, err)
	return cfg
}

// TestNanobotBlockIsReadUnchanged: nanobot's keys, camelCase or
// snake_case, on top of nanobot's defaults.
func TestNanobotBlockIsReadUnchanged(t *testing.T) {
	cfg := load(t, `{"enabled":true,"user_id":"@bot:example.org","accessToken":"syt_x","device_id":"DEV",
		"allowFrom":["@alice:example.org"],"group_policy":"mention","groupAllowFrom":["!r:example.org"],
		"allowRoomMentions":true,"streaming":true,"maxMediaBytes":1024,"e2eeEnabled":false,"sasVerification":false,
		"syncStopGraceSeconds":5,"maxConcurrentMediaDownloads":4}`)
	got := block(cfg)
	require.Equal(t, Config{Enabled: true, Homeserver: "https://matrix.org", UserID: "@bot:example.org", AccessToken: "syt_x",
		DeviceID: "DEV", AllowFrom: []string{"@alice:example.org"}, GroupPolicy: "mention", GroupAllowFrom: []string{"!r:example.org"},
		AllowRoomMentions: true, Streaming: true, MaxMediaBytes: 1024, SyncStopGraceSeconds: 5, MaxConcurrentMediaDownloads: 4}, got)
	spec, ok := channels.Lookup(Name)
	require.True(t, ok)
	require.True(t, spec.Enabled(cfg))
	require.Empty(t, spec.Missing(cfg))
	require.True(t, channels.AllowFromFor(cfg, Name).Allows("@alice:example.org"))
	require.False(t, channels.AllowFromFor(cfg, Name).Allows("@mallory:example.org"))
	warnings, err := spec.Check(cfg)
	require.NoError(t, err)
	require.Len(t, warnings, 1, "only the key this build does not act on is named")
	require.Equal(t, "channels.matrix.maxConcurrentMediaDownloads", warnings[0].Key)
	require.True(t, warnings[0].Unsupported)
}

// TestBlockDefaultsAndMissingKeys: nanobot's defaults (groupPolicy open,
// streaming off, 20 MiB media) and the keys a start needs.
func TestBlockDefaultsAndMissingKeys(t *testing.T) {
	cfg := load(t, `{"enabled":true}`)
	got := block(cfg)
	require.Equal(t, "open", got.GroupPolicy)
	require.False(t, got.Streaming)
	require.Equal(t, int64(20<<20), got.MaxMediaBytes)
	spec, _ := channels.Lookup(Name)
	require.Equal(t, []string{"channels.matrix.userId", "channels.matrix.password (or accessToken)"}, spec.Missing(cfg))
	require.Empty(t, spec.Missing(load(t, `{"userId":"@b:x","password":"pw"}`)), "a password alone logs in")
	require.False(t, spec.Enabled(load(t, `{}`)))
}

// TestBlockErrorsNameTheKey: a value of the wrong type fails the start
// naming the key; an unknown key is a warning.
func TestBlockErrorsNameTheKey(t *testing.T) {
	spec, _ := channels.Lookup(Name)
	_, err := spec.Check(load(t, `{"enabled":true,"streaming":"yes"}`))
	require.ErrorContains(t, err, "channels.matrix.streaming")
	warnings, err := spec.Check(load(t, `{"enabled":true,"homeservr":"x"}`))
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	require.Contains(t, warnings[0].Key, "homeservr")
	_, err = New(channels.Deps{Config: load(t, `{"enabled":true,"homeserver":"matrix.org","userId":"@b:x","accessToken":"t"}`)})
	require.ErrorContains(t, err, "is not an http(s) URL")
}

// TestToHTML: Markdown becomes org.matrix.custom.html; plain text gets none.
func TestToHTML(t *testing.T) {
	cases := []struct{ in, want string }{
		{"just words", ""},
		{"two\nlines", ""},
		{"a <b> & c", ""},
		{"**bold** and *it*", "<p><strong>bold</strong> and <em>it</em></p>"},
		{"`a<b>` code", "<p><code>a&lt;b&gt;</code> code</p>"},
		{"see [docs](https://example.org/a?b=1&c=2)", `<p>see <a href="https://example.org/a?b=1&amp;c=2">docs</a></p>`},
		{"# Title\n\n- one\n- **two**", "<h1>Title</h1>\n<ul>\n<li>one</li>\n<li><strong>two</strong></li>\n</ul>"},
		{"```go\nx := `<y>`\n```", "<pre><code class=\"language-go\">x := `&lt;y&gt;`</code></pre>"},
		{"<script>alert(1)</script> **x**", ""}, // an HTML block in CommonMark: shown as text, in the plain body
		{"**x** <script>alert(1)</script>", "<p><strong>x</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, toHTML(tc.in), tc.in)
	}
}

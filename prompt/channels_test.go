package prompt

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	_ "github.com/nanobot-durable/nanobot/channels/all" // every channel of this build declares its format hint
)

// TestEveryChannelOfThisBuildGetsItsFormatHint: the prompt's "Output
// format" line comes from the channel's Spec, for every channel this build
// has, and a channel it lacks gets none.
func TestEveryChannelOfThisBuildGetsItsFormatHint(t *testing.T) {
	ws := t.TempDir()
	require.Len(t, channels.Known(), 14)
	for _, name := range channels.Known() {
		hint := channels.FormatHint(name)
		require.NotEmpty(t, hint, "%s declares no format hint", name)
		got, err := Builder{Workspace: ws}.SystemPrompt(Request{Channel: name, SessionKey: name + ":1"})
		require.NoError(t, err)
		require.Contains(t, got, "\n## Output format\n"+hint+"\n", name)
	}
	got, err := Builder{Workspace: ws}.SystemPrompt(Request{Channel: "mattermost", SessionKey: "mattermost:1"})
	require.NoError(t, err)
	require.NotContains(t, got, "## Output format", "no hint for a channel this build lacks")
}

// TestFormatHintsKeptTheirWords: the hints the prompt had before each
// channel declared its own are unchanged byte for byte, so a provider's
// cached system prompt stays valid.
func TestFormatHintsKeptTheirWords(t *testing.T) {
	chat := "Your reply is shown in a chat app: keep it short; Markdown is converted."
	for name, hint := range map[string]string{
		"cli": "Your reply is shown in a terminal: plain text or light Markdown.",
		"api": "Your reply is returned by an API: plain Markdown.", "email": "Your reply is sent as an email: plain text, complete sentences.",
		"telegram": chat, "slack": chat, "discord": chat, "feishu": chat, "matrix": chat,
	} {
		require.Equal(t, hint, channels.FormatHint(name), name)
	}
}

package email

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/protocol"
)

// With an hour between polls, only IDLE can bring a mail in while the
// channel waits.
func TestIdleAnswersAMailWithoutWaitingForAPoll(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, nil)
	h.deliver("first", mailFrom(alice, "idle1@x", "One")...)
	h.waitMails(1) // the channel has checked and idles again
	require.Contains(t, h.Logs.String(), "idle=true")

	h.deliver("second", mailFrom(alice, "idle2@x", "Two")...)
	m := h.waitMails(2)[1]
	require.Equal(t, "<idle2@x>", m.Header.Get("In-Reply-To"))
}

func TestPollsWhenTheServerHasNoIdle(t *testing.T) {
	h := startHarness(t, mailpeer.Options{NoIdle: true}, func(b map[string]any) { b["pollIntervalSeconds"] = 1 }) // nanobot's floor: 5 s
	require.Contains(t, h.Logs.String(), "idle=false")
	start := time.Now()
	h.deliver("polled", mailFrom(alice, "poll@x", "Poll")...)
	require.Equal(t, "<poll@x>", h.waitMails(1)[0].Header.Get("In-Reply-To"))
	require.Less(t, time.Since(start), wait)
}

func TestReconnectsAfterTheConnectionIsLost(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, nil)
	h.deliver("before", mailFrom(alice, "before@x", "Before")...)
	h.waitMails(1)

	h.imap.Restart() // every connection cut
	h.deliver("after", mailFrom(alice, "after@x", "After")...)
	require.Equal(t, "<after@x>", h.waitMails(2)[1].Header.Get("In-Reply-To"))
	require.Contains(t, h.Logs.String(), "IMAP connection lost")
}

// markSeen off: the mail stays unseen, and only the handled keys kept
// under the nanobot home stop a restarted channel from answering it again.
func TestARestartDoesNotAnswerAMailTwice(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, func(b map[string]any) { b["markSeen"] = false })
	h.deliver("once", mailFrom(alice, "once@x", "Once")...)
	h.waitMails(1)
	// The key is kept once the mail is handed to the turn, which may answer first (an eager start).
	handled := filepath.Join(filepath.Dir(h.Config.Path), "channels", "email-handled.json")
	require.Eventually(t, func() bool { _, err := os.Stat(handled); return err == nil }, 30*time.Second, 10*time.Millisecond, "no %s", handled)

	h.Stop()
	h.start()
	h.deliver("next", mailFrom(alice, "next@x", "Next")...)
	mails := h.waitMails(2)
	require.Len(t, mails, 2)
	require.Equal(t, "<next@x>", mails[1].Header.Get("In-Reply-To"))
	require.Len(t, h.agent.received(), 2, "the first mail went to the agent once")
	require.Equal(t, 2, h.imap.Unseen(), "markSeen false leaves them unseen")
}

// autoReplyEnabled false (nanobot): mail is read and taken to the agent,
// nothing goes back to its sender; a send that starts a conversation goes.
func TestAutoReplyDisabledReadsButDoesNotAnswer(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, func(b map[string]any) { b["autoReplyEnabled"] = false })
	h.deliver("hello", mailFrom(alice, "noreply@x", "Hello")...)
	h.deliver("no id", "From: "+alice, "Subject: No Message-ID")
	require.Eventually(t, func() bool {
		return len(h.agent.received()) == 2 && strings.Count(h.Logs.String(), "autoReplyEnabled is false") == 2
	}, wait, 20*time.Millisecond)
	require.Empty(t, h.agent.sendErrors())
	require.Empty(t, h.smtp.Mails())

	err := h.Manager.Send(context.Background(), channels.Reply{ID: "p1",
		Route: protocol.Route{Channel: Name, ChatID: "carol@example.org"}, Text: "a note", Kind: protocol.ReplyMessage})
	require.NoError(t, err)
	m := h.waitMails(1)[0]
	require.Equal(t, []string{"carol@example.org"}, m.To)
	require.Equal(t, "Re: nanobot reply", m.Header.Get("Subject"), "nanobot's subject for a mail that answers none")
	require.Empty(t, m.Header.Get("In-Reply-To"))
	require.Equal(t, "auto-generated", m.Header.Get("Auto-Submitted"))
}

func TestPostActionMoveTakesTheMailOutOfTheInbox(t *testing.T) {
	h := startHarness(t, mailpeer.Options{}, func(b map[string]any) {
		b["postAction"], b["postActionMoveMailbox"] = "move", "Done"
	})
	h.imap.CreateMailbox("Done")
	h.deliver("file me", mailFrom(alice, "move@x", "Move")...)
	h.waitMails(1)
	require.Eventually(t, func() bool { return h.imap.Count("INBOX") == 0 && h.imap.Count("Done") == 1 }, wait, 50*time.Millisecond)
}

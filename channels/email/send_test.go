package email

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/email/mailpeer"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// sender is the channel's sending half on a recording SMTP server (no IMAP needed).
func sender(t *testing.T, mod func(b map[string]any)) (*Channel, *mailpeer.SMTP) {
	t.Helper()
	srv := mailpeer.StartSMTP(t)
	b := map[string]any{
		"enabled": true, "consentGranted": true,
		"imapHost": "127.0.0.1", "imapUsername": "bot", "imapPassword": "x",
		"smtpHost": srv.Host, "smtpPort": srv.Port, "smtpUsername": srv.User, "smtpPassword": srv.Pass, "smtpUseTls": false,
		"fromAddress": mailpeer.User,
	}
	if mod != nil {
		mod(b)
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"email": raw}
	ch, err := New(channels.Deps{Config: cfg, Workspace: t.TempDir(), Log: slog.New(slog.NewTextHandler(&testenv.SyncBuffer{}, nil))})
	require.NoError(t, err)
	return ch, srv
}

var reply = channels.Reply{ID: "d1", Turn: "t1", Kind: protocol.ReplyAnswer, Text: "hi",
	Route: protocol.Route{Channel: Name, ChatID: alice, ReplyTo: "m1@x", ThreadID: "RE: Lunch"}}

func TestSMTPAnswersDecideRetries(t *testing.T) {
	ch, srv := sender(t, nil)
	part := channels.Part{Text: "hi", Last: true}
	ctx := context.Background()

	srv.FailNext(451, "greylisted, try again later")
	_, err := ch.SendPart(ctx, reply, part)
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.False(t, se.Permanent, "a 4xx is retried")
	require.Equal(t, greylistWait, se.RetryAfter)

	srv.FailNext(550, "no such user")
	_, err = ch.SendPart(ctx, reply, part)
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "a 5xx is final")

	_, err = ch.SendPart(ctx, channels.Reply{Route: protocol.Route{Channel: Name, ChatID: "not an address"}}, part)
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent)

	id1, err := ch.SendPart(ctx, reply, part)
	require.NoError(t, err)
	id2, err := ch.SendPart(ctx, reply, part)
	require.NoError(t, err)
	require.Equal(t, id1, id2, "a retried delivery sends the same Message-ID")
	mails := srv.Mails()
	require.Len(t, mails, 2)
	require.Equal(t, "RE: Lunch", mails[0].Header.Get("Subject"), "a subject that starts with Re: keeps it")
	require.Equal(t, "<"+id1+">", mails[0].Header.Get("Message-ID"))
	require.Equal(t, "All", mails[0].Header.Get("X-Auto-Response-Suppress"))
}

func TestSMTPLoginRefusedIsFinalAndNoServerIsRetried(t *testing.T) {
	ch, _ := sender(t, func(b map[string]any) { b["smtpPassword"] = "wrong" })
	_, err := ch.SendPart(context.Background(), reply, channels.Part{Text: "hi", Last: true})
	var se *channels.SendError
	require.ErrorAs(t, err, &se)
	require.True(t, se.Permanent, "535: the password will not get better by itself")

	port := testenv.FreePort(t)
	ch, _ = sender(t, func(b map[string]any) { b["smtpPort"] = port })
	_, err = ch.SendPart(context.Background(), reply, channels.Part{Text: "hi", Last: true})
	require.Error(t, err)
	require.False(t, errors.As(err, &se), "no server: the usual retries, got %v", err)
	require.Contains(t, err.Error(), "127.0.0.1:"+strconv.Itoa(port))
}

func TestFilesOnlyReplyIsOneMail(t *testing.T) {
	ch, srv := sender(t, nil)
	r := reply
	r.Text, r.Media = "", []string{"https://example.org/a.png"}
	require.NoError(t, channels.Deliver(context.Background(), ch, r))
	mails := srv.Mails()
	require.Len(t, mails, 1)
	require.Contains(t, mails[0].Text, "[attachment: https://example.org/a.png]", "links are listed, not fetched")
}

func TestReplySubject(t *testing.T) {
	for _, c := range []struct{ in, prefix, want string }{
		{"Invoice", "Re: ", "Re: Invoice"},
		{"re: Invoice", "Re: ", "re: Invoice"},
		{"RE:Invoice", "Re: ", "RE:Invoice"},
		{"", "Re: ", "Re: nanobot reply"},
		{"  Lunch ", "AW: ", "AW: Lunch"},
	} {
		require.Equal(t, c.want, replySubject(c.in, c.prefix), c.in)
	}
}

func TestRenderKeepsTextAndEscapesHTML(t *testing.T) {
	text, html := render("**hi** <you>\nline two\n\npara")
	require.Contains(t, text, "hi <you>")
	require.Contains(t, text, "para")
	require.Contains(t, html, "<strong>hi</strong> &lt;you&gt;")
	require.NotContains(t, html, "<you>", "the model's text cannot inject HTML")
}

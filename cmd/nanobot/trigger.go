package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/triggers"
)

const triggerUsage = `usage: nanobot trigger <id> ["message"]
  Deliver a message to the chat session a trigger (made with /trigger <name>) is bound to;
  without a message, stdin is read.`

// trigger is nanobot's `nanobot trigger`: the message goes straight to the
// bound session's turn through Temporal, which queues it durably (nanobot
// queues it in a workspace inbox its gateway polls).
func (a *app) trigger(ctx context.Context, args []string) error {
	fs := a.flags("trigger")
	fs.Usage = func() { fmt.Fprintln(a.stderr, triggerUsage) }
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	rest := fs.Args()
	if len(rest) < 1 || len(rest) > 2 {
		return usageError{errors.New(triggerUsage)}
	}
	message := ""
	if len(rest) == 2 {
		message = rest[1]
	} else {
		data, err := io.ReadAll(a.stdin)
		if err != nil {
			return fmt.Errorf("read the message from stdin: %w", err)
		}
		message = string(data)
	}
	if strings.TrimSpace(message) == "" {
		return usageError{errors.New("trigger: the message is empty")}
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	t, err := triggers.Open(cfg.Agents.Defaults.WorkspacePath()).Get(rest[0])
	if err != nil {
		return err
	}
	tc, err := connectTemporal(ctx, cfg, a.log)
	if err != nil {
		return err
	}
	defer tc.Close()
	bus := &channels.Bus{Client: tc.Client, Settings: cfg.TurnSettings(), Instance: cfg.Instance()}
	id := "trigger-" + t.ID + "-" + randomID()
	msg := protocol.Inbound{
		ID: id, SessionKey: t.SessionKey, Content: triggers.Content(t, strings.TrimSpace(message)),
		Route:  protocol.Route{Channel: t.Channel, ChatID: t.ChatID, SenderID: t.SenderID},
		SentAt: time.Now(),
	}
	if _, err := bus.Publish(ctx, msg); err != nil {
		return fmt.Errorf("deliver trigger %s: %w", t.ID, err)
	}
	fmt.Fprintf(a.stdout, "Queued %s (%s)\n", t.ID, id)
	return nil
}

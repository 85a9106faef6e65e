package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/prompt"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// SessionBook is tools.SessionBook on the session store and Temporal: the
// store is this nanobot's own (its home's files, or its database), and
// messages go to this instance's turns only.
type SessionBook struct {
	store  session.Store
	client client.Client
	config func() *config.Config
}

var _ tools.SessionBook = (*SessionBook)(nil)

// NewSessionBook is the session tools' view of store; c nil: nothing can be sent.
func NewSessionBook(store session.Store, c client.Client, cfg func() *config.Config) *SessionBook {
	return &SessionBook{store: store, client: c, config: cfg}
}

func (b *SessionBook) searcher() (session.Searcher, error) {
	s, ok := b.store.(session.Searcher)
	if !ok {
		return nil, errors.New("this session store cannot be searched")
	}
	return s, nil
}

// Handles are the chat sessions with their @handles.
func (b *SessionBook) Handles(context.Context) ([]session.Handled, error) {
	s, err := b.searcher()
	if err != nil {
		return nil, err
	}
	sources, err := s.HandleSources()
	if err != nil {
		return nil, err
	}
	return session.Handles(sources), nil
}

func (b *SessionBook) Load(ctx context.Context, key string) (*session.Session, error) {
	return b.store.Load(ctx, key)
}

func (b *SessionBook) Search(_ context.Context, query, exclude string, limit int) ([]session.Match, error) {
	s, err := b.searcher()
	if err != nil {
		return nil, err
	}
	return s.Search(query, exclude, limit)
}

// MaxMessagesPerMinute is tools.maxSessionMessagesPerMinute (nanobot's default 6).
func (b *SessionBook) MaxMessagesPerMinute() int {
	return currentConfig(b.config).Tools.SessionMessagesPerMinute()
}

// Deliver signals the message into the target's turn, cancels the
// target's wait for a reply from the source (this is that reply) and, when
// the sender expects one, starts its own wait.
func (b *SessionBook) Deliver(ctx context.Context, env tools.Env, msg tools.SessionMessage) error {
	if b.client == nil {
		return errors.New("sessions cannot be reached from this process (no Temporal client)")
	}
	route, err := sessionRoute(msg.To.Key)
	if err != nil {
		return err
	}
	inst, settings := instanceOf(ctx), currentConfig(b.config).TurnSettings()
	bus := &channels.Bus{Client: b.client, Settings: settings, Instance: inst}
	in := protocol.Inbound{
		ID: "session-" + env.Turn + "-" + env.CallID, SessionKey: msg.To.Key, Route: route,
		Content:  SessionMessageText(msg.From.Handle, providers.StripThink(msg.Content), msg.ExpectReply),
		Metadata: map[string]string{"session_message_from": msg.From.Key},
		SentAt:   time.Now(),
	}
	if _, err := bus.Publish(ctx, in); err != nil {
		return fmt.Errorf("deliver to @%s: %w", msg.To.Handle, err)
	}
	err = b.client.CancelWorkflow(ctx, inst.Name(protocol.SessionReplyWaitID(msg.To.Key, msg.From.Key)), "")
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("end the wait of @%s for this reply: %w", msg.To.Handle, err)
	}
	if !msg.ExpectReply {
		return nil
	}
	wait := protocol.SessionReplyWait{Source: msg.From.Key, Target: msg.To.Key, TargetHandle: msg.To.Handle,
		TimeoutSeconds: msg.TimeoutSeconds, Settings: settings}
	_, err = b.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       inst.Name(protocol.SessionReplyWaitID(msg.From.Key, msg.To.Key)),
		TaskQueue:                inst.TaskQueue(),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:            "wait for a reply from @" + msg.To.Handle,
	}, protocol.SessionReplyWaitWorkflowName, wait)
	if err != nil {
		return fmt.Errorf("wait for a reply from @%s: %w", msg.To.Handle, err)
	}
	return nil
}

// SessionReplyTimeout tells the source session no reply came (nanobot's text).
func (b *SessionBook) SessionReplyTimeout(ctx context.Context, in protocol.SessionReplyWait) error {
	if b.client == nil {
		return temporal.NewNonRetryableApplicationError("no Temporal client to tell the session with", protocol.ErrConfig, nil)
	}
	route, err := sessionRoute(in.Source)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), protocol.ErrConfig, nil)
	}
	bus := &channels.Bus{Client: b.client, Settings: in.Settings, Instance: instanceOf(ctx)}
	msg := protocol.Inbound{
		ID: "session-timeout-" + protocol.SessionReplyWaitID(in.Source, in.Target), SessionKey: in.Source, Route: route,
		Content: fmt.Sprintf("No reply from @%s after %d seconds.", in.TargetHandle, in.TimeoutSeconds),
		SentAt:  time.Now(),
	}
	if _, err := bus.Publish(ctx, msg); err != nil {
		return fmt.Errorf("tell %s no reply came: %w", in.Source, err)
	}
	return nil
}

// SessionMessageText is how a message from another session arrives: its
// text, then who sent it in a runtime-context block (nanobot's wording).
func SessionMessageText(from, content string, expectReply bool) string {
	line := "Message from @" + from + "."
	if expectReply {
		line += " Reply with send_session_message."
	}
	return content + "\n\n" + prompt.ContextBlock(line)
}

// sessionRoute is where a session's replies go: its key's channel and
// chat, stamped with whether anyone can take them.
func sessionRoute(key string) (protocol.Route, error) {
	channel, chatID, err := protocol.SplitSessionKey(key)
	if err != nil {
		return protocol.Route{}, err
	}
	r := protocol.Route{Channel: channel, ChatID: chatID}
	channels.StampReach(&r)
	return r, nil
}

// isNotFound: no such workflow, or it has ended (no wait to cancel).
func isNotFound(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound)
}

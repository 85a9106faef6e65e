package channels

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

// recordingIntake stands where the bus would be and keeps what got through.
type recordingIntake struct {
	mu   sync.Mutex
	msgs []protocol.Inbound
}

func (r *recordingIntake) Publish(_ context.Context, msg protocol.Inbound) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msg)
	return "", nil
}

type fakeChannel struct {
	name string
	mu   sync.Mutex
	sent []Reply
}

func (f *fakeChannel) Name() string                         { return f.name }
func (f *fakeChannel) Start(context.Context, Publish) error { return nil }
func (f *fakeChannel) Stop(context.Context) error           { return nil }
func (f *fakeChannel) Send(_ context.Context, r Reply) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, r)
	return nil
}

// Channels registered for these tests: one whose allowFrom names "owner",
// one with an empty allowFrom (pairing only).
func init() {
	Register(Spec{Name: "gated", AllowFrom: func(*config.Config) AllowFrom { return AllowFrom{"owner"} }})
	Register(Spec{Name: "closed", AllowFrom: func(*config.Config) AllowFrom { return nil }})
}

func TestAllowFrom(t *testing.T) {
	for _, tc := range []struct {
		list   AllowFrom
		sender string
		want   bool
	}{
		{AllowFrom{"*"}, "anyone", true},
		{AllowFrom{"42"}, "42|bob", true},
		{AllowFrom{"bob"}, "42|bob", true},
		{AllowFrom{"42|bob"}, "42|bob", true},
		{AllowFrom{"43"}, "42|bob", false},
		{nil, "42", false},
		{AllowFrom{""}, "", false},
	} {
		require.Equal(t, tc.want, tc.list.Allows(tc.sender), "%v %q", tc.list, tc.sender)
	}
}

func TestManagerGatesBeforeTheBus(t *testing.T) {
	intake := &recordingIntake{}
	store := pairing.NewStore(t.TempDir())
	m := NewManager()
	m.Bus, m.Pairing, m.Config = intake, store, config.Default()
	tg := &fakeChannel{name: "gated"}
	m.Add(tg)
	ctx := context.Background()
	dm := func(sender, text string) protocol.Inbound {
		return protocol.Inbound{ID: text, Route: protocol.Route{ChatID: "c-" + sender, SenderID: sender}, Content: text}
	}

	require.NoError(t, m.Admit(ctx, tg, dm("1|owner", "hello"), nil))
	require.ErrorIs(t, m.Admit(ctx, tg, dm("2|stranger", "let me in"), nil), ErrRefused)
	require.ErrorIs(t, m.Admit(ctx, tg, dm("2|stranger", "please"), nil), ErrRefused)
	group := dm("3|lurker", "in a group")
	group.Group = true
	require.ErrorIs(t, m.Admit(ctx, tg, group, nil), ErrRefused)

	require.Len(t, intake.msgs, 1, "nothing from a refused sender reaches the bus")
	require.Equal(t, "gated:c-1|owner", intake.msgs[0].SessionKey)
	require.Equal(t, "gated", intake.msgs[0].Route.Channel)
	require.Len(t, tg.sent, 1, "one pairing code, sent once, only in a direct message")
	require.Equal(t, "c-2|stranger", tg.sent[0].Route.ChatID)
	pending, _, err := store.List()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Contains(t, tg.sent[0].Text, pending[0].Code)

	_, err = store.Approve(pending[0].Code)
	require.NoError(t, err)
	require.NoError(t, m.Admit(ctx, tg, dm("2|stranger", "thanks"), nil))
	require.Len(t, intake.msgs, 2)
	require.Equal(t, "thanks", intake.msgs[1].Content)

	m.Unified = true
	require.NoError(t, m.Admit(ctx, tg, dm("1|owner", "again"), nil))
	require.Equal(t, UnifiedSessionKey, intake.msgs[2].SessionKey)
}

func TestNoPairingStoreMeansAllowFromOnly(t *testing.T) {
	intake := &recordingIntake{}
	m := NewManager()
	m.Bus = intake
	sl := &fakeChannel{name: "closed"}
	require.ErrorIs(t, m.Admit(context.Background(), sl, protocol.Inbound{Route: protocol.Route{ChatID: "D1", SenderID: "U1"}}, nil), ErrRefused)
	require.Empty(t, sl.sent)
	require.Empty(t, intake.msgs)
}

// TestAdmitSealsWhatItLetIn: an admitted message carries the owner key's
// seal over its chat, sender and text, after the channel's hook changed it;
// a seal a channel put on the message itself is replaced.
func TestAdmitSealsWhatItLetIn(t *testing.T) {
	intake := &recordingIntake{}
	key, err := owner.NewKey()
	require.NoError(t, err)
	m := NewManager()
	m.Bus, m.Config, m.Owner = intake, config.Default(), key
	tg := &fakeChannel{name: "gated"}
	ctx := context.Background()
	msg := protocol.Inbound{ID: "m1", Route: protocol.Route{ChatID: "45", SenderID: "1|owner"}, Content: "/approve 1a2b", Seal: "v1.owner.forged"}
	hook := func(_ context.Context, msg *protocol.Inbound) error { msg.Media = []string{"media/a.png"}; return nil }
	require.NoError(t, m.Admit(ctx, tg, msg, hook))
	require.ErrorIs(t, m.Admit(ctx, tg, protocol.Inbound{ID: "m2", Route: protocol.Route{ChatID: "46", SenderID: "2|x"}, Content: "/approve"}, nil), ErrRefused)

	require.Len(t, intake.msgs, 1)
	by, err := key.Opened(intake.msgs[0])
	require.NoError(t, err)
	require.Equal(t, owner.ByChat, by, "admitted by the channel, whatever the message claimed")
	tampered := intake.msgs[0]
	tampered.Route.ChatID = "46"
	_, err = key.Opened(tampered)
	require.ErrorIs(t, err, owner.ErrBadSeal)
}

package channels_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	_ "github.com/nanobot-durable/nanobot/channels/all"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/protocol"
)

// sessionRow is one situation of one channel: the chat and the scope the
// channel reports (its package's tests check it reports that), and the key
// nanobot gives it with unifiedSession off and on (nanobot's
// _effective_session_key and each channel's session override, at HEAD
// 3852956a71a9 of HKUDS/nanobot).
type sessionRow struct {
	channel, where, chat string
	scope                *protocol.Scope
	key, unified         string
}

const u = channels.UnifiedSessionKey

var sessionTable = []sessionRow{
	{"telegram", "DM", "42", nil, "telegram:42", u},
	{"telegram", "group", "-100", nil, "telegram:-100", u},
	{"telegram", "topic", "-100", protocol.Topic("77"), "telegram:-100:topic:77", "telegram:-100:topic:77"},
	{"slack", "DM", "D1", nil, "slack:D1", u},
	{"slack", "DM thread", "D1", protocol.Within("200.1"), "slack:D1:200.1", "slack:D1:200.1"},
	{"slack", "group, replyInThread off", "C1", nil, "slack:C1", u},
	{"slack", "group, replyInThread (opens a thread)", "C1", protocol.Within("100.5"), "slack:C1:100.5", "slack:C1:100.5"},
	{"slack", "thread", "C1", protocol.Within("100.1"), "slack:C1:100.1", "slack:C1:100.1"},
	{"discord", "DM", "801", nil, "discord:801", u},
	{"discord", "group", "900", nil, "discord:900", u},
	{"discord", "thread", "920", protocol.Thread("900", "920"), "discord:900:thread:920", "discord:900:thread:920"},
	{"feishu", "DM", "ou_alice", nil, "feishu:ou_alice", u},
	{"feishu", "group, topicIsolation off", "oc_g", protocol.OwnChat(), "feishu:oc_g", "feishu:oc_g"},
	{"feishu", "group, topicIsolation (opens a topic)", "oc_g", protocol.Within("om_1"), "feishu:oc_g:om_1", "feishu:oc_g:om_1"},
	{"feishu", "topic", "oc_g", protocol.Within("om_root"), "feishu:oc_g:om_root", "feishu:oc_g:om_root"},
	{"matrix", "DM", "!dm:hs", nil, "matrix:!dm:hs", u},
	{"matrix", "group", "!room:hs", nil, "matrix:!room:hs", u},
	{"matrix", "thread", "!room:hs", protocol.Thread("", "$root"), "matrix:!room:hs:thread:$root", "matrix:!room:hs:thread:$root"},
	{"dingtalk", "DM", "staff-a", nil, "dingtalk:staff-a", u},
	{"dingtalk", "group", "group:cid1", nil, "dingtalk:group:cid1", u},
	{"dingtalk", "group member (groupUserIsolation)", "group:cid1", protocol.Within("staff-a"), "dingtalk:group:cid1:staff-a", "dingtalk:group:cid1:staff-a"},
	{"qq", "DM", "user-a", nil, "qq:user-a", u},
	{"qq", "group", "group-g", nil, "qq:group-g", u},
	{"wecom", "DM", "zhangsan", nil, "wecom:zhangsan", u},
	{"wecom", "group", "wr-g", nil, "wecom:wr-g", u},
	{"weixin", "DM", "wxid@im.wechat", nil, "weixin:wxid@im.wechat", u},
	{"whatsapp", "DM", "15550001111@s.whatsapp.net", nil, "whatsapp:15550001111@s.whatsapp.net", u},
	{"whatsapp", "group", "1203@g.us", nil, "whatsapp:1203@g.us", u},
	{"email", "DM", "alice@example.org", nil, "email:alice@example.org", u},
	{"web", "DM", "abc-1", nil, "web:abc-1", u},
	{"api", "DM (session_id)", "ada", protocol.OwnChat(), "api:ada", "api:ada"},
}

// TestSessionRule: every channel's situations through the real gate give
// nanobot's keys, unifiedSession off and on; a channel's scope wins over
// unified, and whatever key a channel sets itself is not used.
func TestSessionRule(t *testing.T) {
	store := pairing.NewStore(t.TempDir())
	for _, unified := range []bool{false, true} {
		bus := &keys{}
		m := channels.NewManager()
		m.Bus, m.Config, m.Pairing, m.Unified = bus, config.Default(), store, unified
		for i, r := range sessionTable {
			sender := fmt.Sprintf("sender-%d", i)
			code, fresh, err := store.Request(r.channel, sender, r.chat)
			require.NoError(t, err)
			if fresh {
				_, err = store.Approve(code)
				require.NoError(t, err)
			}
			msg := protocol.Inbound{ID: fmt.Sprint(i), SessionKey: "set:by-the-channel", Scope: r.scope,
				Route: protocol.Route{ChatID: r.chat, SenderID: sender}, Content: "hi"}
			require.NoError(t, m.Admit(context.Background(), named(r.channel), msg, nil), "%s %s", r.channel, r.where)
			want := r.key
			if unified {
				want = r.unified
			}
			require.Equal(t, want, bus.last(), "%s, %s, unifiedSession %v", r.channel, r.where, unified)
		}
	}
}

// TestSessionTableCoversEveryChannel: a channel a gateway builds needs its
// rows (the CLI is not admitted: its key is `agent -s`, cli:direct).
func TestSessionTableCoversEveryChannel(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range sessionTable {
		rows[r.channel] = true
	}
	for _, s := range channels.Specs() {
		require.True(t, s.New == nil || rows[s.Name], "channel %s has no row in the session table", s.Name)
	}
}

type keys struct {
	mu   sync.Mutex
	seen []string
}

func (k *keys) Publish(_ context.Context, msg protocol.Inbound) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seen = append(k.seen, msg.SessionKey)
	return "", nil
}

func (k *keys) last() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.seen[len(k.seen)-1]
}

// named is a channel of that name that sends nothing.
type named string

func (n named) Name() string                                  { return string(n) }
func (n named) Start(context.Context, channels.Publish) error { return nil }
func (n named) Stop(context.Context) error                    { return nil }
func (n named) Send(context.Context, channels.Reply) error    { return nil }

// TestBusRefusesAMessageWithoutASession: the bus names no session; a
// raw publish without one fails before Temporal is touched.
func TestBusRefusesAMessageWithoutASession(t *testing.T) {
	_, err := (&channels.Bus{}).Publish(context.Background(), protocol.Inbound{ID: "m1", Route: protocol.Route{Channel: "cli", ChatID: "x"}})
	require.ErrorIs(t, err, channels.ErrNoSession)
}

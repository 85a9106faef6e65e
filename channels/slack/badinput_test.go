package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
)

// The bad-input corpus for Slack: Events API payloads with missing fields,
// wrong types, bot and system messages, huge and broken text. None may
// crash the channel or reach the agent unless it is a user's message;
// each dropped one leaves a log line saying why; a valid message after
// them all still gets through.

// badEvent is one Events API envelope: ev is the event (a JSON value as
// text, so wrong types can be sent); want is the content published, or ""
// when it must be dropped with a log line containing log.
type badEvent struct {
	name string
	ev   string
	want string
	log  string
}

// dm is a well-formed direct message event with fields replaced or
// removed (a nil value removes the field).
func dm(ts string, change map[string]any) string {
	ev := slackpeer.MessageEvent("D1", "im", "U1", ts, "", "hello")
	for k, v := range change {
		if v == nil {
			delete(ev, k)
			continue
		}
		ev[k] = v
	}
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// unreadable is the log of an envelope slack-go itself cannot parse.
const unreadable = "could not be read; acknowledged and dropped"

func TestBadInputSlackEvents(t *testing.T) {
	h := startHarness(t, nil)
	huge := strings.Repeat("long text ", 20_000)
	var stolen atomic.Int32 // requests that reached a server which is not Slack
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		_, _ = w.Write([]byte("thanks for the token"))
	}))
	defer elsewhere.Close()
	cases := []badEvent{
		{name: "no user", ev: dm("500.000001", map[string]any{"user": nil}), log: skipIncomplete},
		{name: "empty user", ev: dm("500.000002", map[string]any{"user": ""}), log: skipIncomplete},
		{name: "null user", ev: dm("500.000003", map[string]any{"user": json.RawMessage("null")}), log: skipIncomplete},
		{name: "no channel", ev: dm("500.000004", map[string]any{"channel": nil}), log: skipIncomplete},
		{name: "no ts", ev: dm("", map[string]any{"ts": nil}), log: skipIncomplete},
		{name: "ts not a Slack ts", ev: dm("not-a-ts", nil), log: skipIncomplete},
		{name: "no text", ev: dm("500.000005", map[string]any{"text": nil}), log: "nothing to say"},
		{name: "empty text", ev: dm("500.000006", map[string]any{"text": ""}), log: "nothing to say"},
		{name: "blank text", ev: dm("500.000007", map[string]any{"text": " \n\t "}), log: "nothing to say"},
		{name: "only the mention", ev: dm("500.000008", map[string]any{"text": "<@" + peerBot + ">"}), log: "nothing to say"},
		{name: "unknown subtype", ev: dm("500.000009", map[string]any{"subtype": "huddle_thread"}), log: skipSubtype},
		{name: "edit", ev: dm("500.000010", map[string]any{"subtype": "message_changed", "user": nil,
			"message": map[string]any{"type": "message", "user": "U1", "text": "edited", "ts": "500.000001"}}), log: skipSubtype},
		{name: "delete", ev: dm("500.000011", map[string]any{"subtype": "message_deleted", "user": nil, "text": nil}), log: skipSubtype},
		{name: "channel join", ev: dm("500.000012", map[string]any{"subtype": "channel_join"}), log: skipSubtype},
		{name: "legacy bot message", ev: dm("500.000013", map[string]any{"subtype": "bot_message", "bot_id": "B9", "user": nil}), log: skipSubtype},
		{name: "the bot's own message", ev: dm("500.000014", map[string]any{"user": peerBot, "bot_id": "B0PEER"}), log: skipOwn},
		{name: "unknown event type", ev: `{"type":"reaction_added","user":"U1","item":{"channel":"D1","ts":"1.1"}}`, log: skipNotMessage},
		{name: "no type", ev: dm("500.000015", map[string]any{"type": nil}), log: unreadable},
		{name: "empty event", ev: `{}`, log: unreadable},
		{name: "null event", ev: `null`, log: unreadable},
		{name: "unknown channel type, no mention", ev: dm("500.000016", map[string]any{"channel": "C7", "channel_type": "hologram"}), log: "not addressed to the bot (channels.slack.groupPolicy mention)"},
		{name: "text is a number", ev: dm("500.000017", map[string]any{"text": 42}), log: unreadable},
		{name: "user is an object", ev: dm("500.000018", map[string]any{"user": map[string]any{"id": "U1"}}), log: unreadable},
		{name: "ts is a number", ev: dm("500.000019", map[string]any{"ts": 500.000019}), log: unreadable},
		{name: "files is a string", ev: dm("500.000020", map[string]any{"files": "x"}), log: unreadable},
		{name: "event is an array", ev: `[1,2,3]`, log: unreadable},
		{name: "event is a string", ev: `"message"`, log: unreadable},
		// What a user could really send gets through, made safe.
		{name: "lone surrogate", ev: dm("500.000021", map[string]any{"text": json.RawMessage(`"bad \ud800 half"`)}), want: "bad \uFFFD half"},
		{name: "NUL byte", ev: dm("500.000022", map[string]any{"text": "a\x00b"}), want: "a\x00b"},
		{name: "huge text", ev: dm("500.000023", map[string]any{"text": huge}), want: strings.TrimSpace(huge)},
		{name: "file without url", ev: dm("500.000024", map[string]any{"subtype": "file_share", "text": "",
			"files": []map[string]any{{"id": "F1"}}}),
			want: "[file: F1: no download url; not available to nanobot. Check the Slack app's files:read scope.]"},
		{name: "file url not Slack's", ev: dm("500.000026", map[string]any{"subtype": "file_share", "text": "look",
			"files": []map[string]any{{"id": "F2", "name": "x.txt", "url_private_download": elsewhere.URL + "/x.txt?t=1"}}}),
			want: "look\n[file: x.txt: not a Slack file url; not available to nanobot. Check the Slack app's files:read scope.]"},
	}
	for i, c := range cases {
		env := fmt.Sprintf("bad-%d", i)
		frame := fmt.Sprintf(`{"type":"events_api","envelope_id":%q,"payload":{"type":"event_callback","event_id":"EvBad%d","event":%s}}`, env, i, c.ev)
		h.peer.PushAcked(env, frame)
	}
	// A frame that is not valid UTF-8 at all.
	utf8Frame := `{"type":"events_api","envelope_id":"bad-utf8","payload":{"type":"event_callback","event_id":"EvUTF8","event":` +
		dm("500.000025", map[string]any{"text": "PLACEHOLDER"}) + `}}`
	h.peer.PushAcked("bad-utf8", strings.Replace(utf8Frame, "PLACEHOLDER", "bad \xff\xfe bytes", 1))
	h.peer.Push("env-ok", "EvOK", 0, slackpeer.MessageEvent("D1", "im", "U1", "600.000001", "", "still alive?"))

	var want []string
	for _, c := range cases {
		if c.want != "" {
			want = append(want, short(c.want))
		}
	}
	want = append(want, "bad \uFFFD\uFFFD bytes", "still alive?")
	got := h.WaitPublished(len(want))
	var contents []string
	for _, m := range got {
		require.True(t, utf8.ValidString(m.Content), "published content is UTF-8: %q", m.Content)
		contents = append(contents, short(m.Content))
	}
	require.Equal(t, want, contents, "only users' messages are published, in order")

	logs := h.logs.String()
	for i, c := range cases {
		if c.want != "" {
			continue
		}
		var line string
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l+" ", fmt.Sprintf("event_id=EvBad%d ", i)) || strings.Contains(l+" ", fmt.Sprintf("envelope=bad-%d ", i)) {
				line = l
			}
		}
		require.Contains(t, line, c.log, "case %q: a log line says why it was dropped; logs:\n%s", c.name, logs)
	}
	require.Len(t, h.peer.Acks(), len(cases)+2, "every envelope acknowledged")
	require.Zero(t, stolen.Load(), "the bot token is sent to Slack only")
	require.Contains(t, logs, "slack file url is not Slack's; not downloaded")
	require.NotContains(t, logs, "t=1", "the url's query is not logged")
}

// short keeps a failure message readable when the huge text is compared.
func short(s string) string {
	if len(s) <= 80 {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:40], len(s))
}

package telegram

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/stretchr/testify/require"
)

// TestBadInputUpdates: updates with missing or odd fields either decode to
// nothing to answer or to a message with a chat and a sender; none panics.
func TestBadInputUpdates(t *testing.T) {
	for i, raw := range []string{
		`{}`, `{"update_id":1}`, `{"update_id":2,"message":null}`, `{"update_id":3,"message":{}}`,
		`{"update_id":4,"message":{"message_id":1}}`, `{"update_id":5,"message":{"message_id":1,"chat":{"id":7,"type":"private"}}}`,
		`{"update_id":6,"message":{"message_id":1,"from":{"id":7},"chat":{}}}`,
		`{"update_id":7,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"}}}`,
		`{"update_id":8,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"group"},"text":"hi"}}`,
		`{"update_id":9,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"supergroup"},"text":"@NanoBot"}}`,
		`{"update_id":10,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"},"text":"/start@"}}`,
		`{"update_id":11,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"},"text":"/"}}`,
		`{"update_id":12,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"},"caption":"only a caption"}}`,
		`{"update_id":13,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"},"text":"x","entities":[{"type":"mention","offset":50,"length":9}]}}`,
		`{"update_id":14,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"},"text":"` + strings.Repeat("y", 1<<20) + `"}}`,
		`{"update_id":15,"message":{"message_id":1,"from":{"id":7},"chat":{"id":7,"type":"private"},"is_topic_message":true}}`,
		`{"update_id":16,"edited_message":{"message_id":1,"text":"edited"}}`, `{"update_id":17,"callback_query":{"id":"q"}}`,
	} {
		var upd models.Update
		require.NoError(t, json.Unmarshal([]byte(raw), &upd), "case %d", i)
		for _, policy := range []string{"mention", "open"} {
			c := testChannel(policy, true)
			msg := upd.Message
			if msg == nil || msg.From == nil { // what handle skips
				continue
			}
			in, ok := c.inbound(msg)
			if ok {
				require.NotEmpty(t, in.Route.ChatID, "case %d", i)
				require.NotEmpty(t, in.Route.SenderID, "case %d", i)
			}
		}
		// onUpdate on a channel with no connection must not panic for updates it skips.
		if upd.Message == nil || upd.Message.From == nil {
			c := testChannel("open", false)
			c.Init(Name, nil, channels.NewRecentKeys(8))
			c.onUpdate(context.Background(), nil, &upd)
		}
	}
}

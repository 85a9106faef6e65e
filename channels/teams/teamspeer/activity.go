package teamspeer

import (
	"fmt"
	"sync/atomic"
	"time"
)

var activitySeq atomic.Int64

// Conversation kinds (conversation.conversationType).
const (
	Personal  = "personal"
	GroupChat = "groupChat"
	Channel   = "channel"
)

// Message is a message activity from user in a conversation; mention puts
// the bot's <at> mention before the text, as Teams does.
func (p *Peer) Message(kind, conversation string, from User, text string, mention bool) map[string]any {
	a := p.base("message", kind, conversation, from)
	if mention {
		a["text"] = "<at>" + BotName + "</at> " + text
		a["entities"] = []any{map[string]any{"type": "mention", "text": "<at>" + BotName + "</at>",
			"mentioned": map[string]string{"id": BotID, "name": BotName}}}
	} else {
		a["text"] = text
	}
	return a
}

// Submit is what Teams sends when user presses an Adaptive Card's
// Action.Submit: a message whose value is the action's data, replying to
// the card's activity.
func (p *Peer) Submit(kind, conversation string, from User, card Activity, data map[string]any) map[string]any {
	a := p.base("message", kind, conversation, from)
	a["replyToId"], a["value"] = card.ID, data
	return a
}

func (p *Peer) base(typ, kind, conversation string, from User) map[string]any {
	return map[string]any{
		"type": typ, "id": fmt.Sprintf("1%012d", activitySeq.Add(1)), "channelId": "msteams",
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "serviceUrl": p.URL(),
		"from":         map[string]string{"id": from.ID, "aadObjectId": from.AADObjectID, "name": from.Name},
		"recipient":    map[string]string{"id": BotID, "name": BotName},
		"conversation": map[string]any{"id": conversation, "conversationType": kind, "tenantId": "peer-tenant"},
		"channelData":  map[string]any{"tenant": map[string]string{"id": "peer-tenant"}},
	}
}

package protocol

import (
	"sync"
	"time"
)

// Route is where a reply goes: the one answer to "which chat, which
// thread, through which process". It rides on the inbound message, through
// the turn, into delivery and the message tool.
type Route struct {
	Channel string `json:"channel"`
	ChatID  string `json:"chat_id"`
	// ThreadID keeps a reply in its thread (Slack thread_ts, Telegram topic).
	ThreadID string `json:"thread_id,omitempty"`
	// ReplyTo is the platform message a reply answers (Telegram reply-to).
	ReplyTo  string `json:"reply_to,omitempty"`
	SenderID string `json:"sender_id,omitempty"`
	// Queue is a delivery queue owned by one process (the CLI, the API);
	// "" means the channel's shared queue, served by any gateway holding it.
	Queue string `json:"queue,omitempty"`
	// Reach is whether anyone can take a reply here, stamped where the
	// route enters Temporal (channels.StampReach), so workflow code reads
	// it instead of the channels this binary links.
	Reach Reach `json:"reach,omitempty"`
}

// Reach is who can take a reply on a route.
type Reach string

const (
	// ReachSomeone: a gateway holding the channel, or the process Queue names.
	ReachSomeone Reach = "someone"
	// ReachNobody: no channel, or a per-process channel without its
	// process queue (a message a test or a script published).
	ReachNobody Reach = "nobody"
)

// DeliveryQueue is the task queue a reply on this route is delivered on.
func (r Route) DeliveryQueue(inst Instance) string {
	if r.Queue != "" {
		return r.Queue
	}
	return inst.ChannelQueue(r.Channel)
}

// PerProcess reports whether only the process that sent the message can
// deliver its reply: if that process is gone, nobody will come back for it.
func (r Route) PerProcess() bool { return r.Queue != "" }

// Deliverable reports whether anyone can take a reply on this route, as
// stamped. A route without a stamp (in a run or a Schedule from before
// routes were stamped) gets the answer it got then, from the registry's map.
func (r Route) Deliverable() bool {
	switch r.Reach {
	case ReachSomeone:
		return true
	case ReachNobody:
		return false
	}
	return unstampedDeliverable(r)
}

// Equal reports whether two routes are the same, stamped or not: a run in
// flight across an upgrade holds both kinds for one chat.
func (r Route) Equal(o Route) bool {
	r.Reach, o.Reach = "", ""
	return r == o
}

// perProcessChannels deliver only through the queue of the process that
// sent the message: their "connection" is a terminal or an HTTP request.
// The channel registry marks them at init, before any workflow runs.
// Retire it with unstampedDeliverable one release after the stamp's (CHANGELOG).
var perProcessChannels sync.Map

// MarkPerProcess records a channel whose replies only the sending process
// can deliver; the channel registry calls it for each such channel.
func MarkPerProcess(channel string) { perProcessChannels.Store(channel, true) }

// unstampedDeliverable is the answer routes got before they were stamped.
// Only an unstamped route reads the process-global map.
func unstampedDeliverable(r Route) bool {
	if r.Channel == "" {
		return false
	}
	_, perProcess := perProcessChannels.Load(r.Channel)
	return r.Queue != "" || !perProcess
}

// SameChat reports whether two routes reach the same conversation.
func (r Route) SameChat(o Route) bool {
	return r.Channel == o.Channel && r.ChatID == o.ChatID && r.ThreadID == o.ThreadID
}

// String names the route for logs and summaries.
func (r Route) String() string {
	s := r.Channel + ":" + r.ChatID
	if r.ThreadID != "" {
		s += "/" + r.ThreadID
	}
	return s
}

// Inbound is one message from a channel, delivered by SignalWithStart.
type Inbound struct {
	ID         string `json:"id"`
	SessionKey string `json:"session_key"`
	Route      Route  `json:"route"`
	Content    string `json:"content"`
	// Media are local files (downloaded into the workspace) the message carries.
	Media    []string          `json:"media,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// Group is true for a message in a group chat (false: a direct message).
	Group bool `json:"group,omitempty"`
	// Kind is the kind of turn the message asks for (a fired cron job, the heartbeat, Dream).
	Kind   TurnKind  `json:"kind,omitempty"`
	SentAt time.Time `json:"sent_at"`
	// Seal is the owner key's proof of who let the message in (a channel's
	// admission, the owner's CLI); without one it answers no approval.
	Seal string `json:"seal,omitempty"`
	// Scope is the channel's hint of a session narrower than the chat (nil:
	// none); channels.Manager.Admit turns it into SessionKey, so it never
	// crosses into Temporal.
	Scope *Scope `json:"-"`
}

// Scope is what a channel knows of a message's conversation inside its
// chat — a thread, a topic, a group member — or that the chat keeps a
// session of its own even under unifiedSession: nanobot's session
// override, as data. The constructors below give nanobot's key shapes.
type Scope struct {
	// In is the chat the scope lies in when it is not the route's (a
	// Discord thread is a channel of its own, named by its parent).
	In string
	// Kind is the word nanobot's key puts before ID ("thread", "topic"),
	// or none.
	Kind string
	// ID is the thread, topic or member; "" is the chat itself.
	ID string
}

// OwnChat keeps the chat's own session under unifiedSession too (a
// Feishu group without topicIsolation, an API session): channel:chat.
func OwnChat() *Scope { return &Scope{} }

// Within is a conversation keyed by its bare id (Slack threads, Feishu
// topics, DingTalk group members): channel:chat:id.
func Within(id string) *Scope { return &Scope{ID: id} }

// Thread is a thread of chat ("" = the route's chat; Discord names the
// parent channel, Matrix the room): channel:chat:thread:id.
func Thread(chat, id string) *Scope { return &Scope{In: chat, Kind: "thread", ID: id} }

// Topic is a Telegram topic: channel:chat:topic:id.
func Topic(id string) *Scope { return &Scope{Kind: "topic", ID: id} }

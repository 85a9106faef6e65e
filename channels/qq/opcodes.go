package qq

import "encoding/json"

// The gateway's opcodes (QQ Bot API, "WebSocket 事件 / Opcode").
const (
	opDispatch       = 0  // server: an event (t, s, d)
	opHeartbeat      = 1  // client: d is the last seq received (null before any)
	opIdentify       = 2  // client: token, intents, shard
	opResume         = 6  // client: token, session_id, seq
	opReconnect      = 7  // server: reconnect and resume
	opInvalidSession = 9  // server: the session cannot go on; identify anew
	opHello          = 10 // server: heartbeat_interval
	opHeartbeatACK   = 11 // server: a heartbeat was received
)

// Intents are bits of the identify's intents field.
const (
	// intentDirectMessage is guild direct messages (botpy's direct_message).
	intentDirectMessage = 1 << 12
	// intentGroupAndC2C is C2C and group @-messages (botpy's public_messages).
	intentGroupAndC2C = 1 << 25
)

// intents are what nanobot subscribes to: Intents(public_messages, direct_message).
const intents = intentGroupAndC2C | intentDirectMessage

// Dispatch event types the channel handles.
const (
	eventReady        = "READY"
	eventResumed      = "RESUMED"
	eventC2CMessage   = "C2C_MESSAGE_CREATE"
	eventGroupMessage = "GROUP_AT_MESSAGE_CREATE"
)

// Gateway close codes that tell the bot what to do next.
const (
	closeInvalidToken      = 4004 // the access token expired: fetch a new one
	closeInvalidSession    = 4006 // the session id is unknown: identify
	closeInvalidSeq        = 4007 // the seq is wrong: identify
	closeBadIntents        = 4013 // intents QQ does not know
	closeDisallowedIntents = 4014 // intents the bot may not have
	closeBotOffline        = 4914 // the bot is offline or in its sandbox only
	closeBotBanned         = 4915 // the bot is banned
)

// frame is one gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d,omitempty"`
	S  int64           `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// hello is op 10's d.
type hello struct {
	HeartbeatInterval int64 `json:"heartbeat_interval"` // milliseconds
}

// identify is op 2's d.
type identify struct {
	Token      string            `json:"token"` // "QQBot <access_token>"
	Intents    int               `json:"intents"`
	Shard      [2]int            `json:"shard"`
	Properties map[string]string `json:"properties"`
}

// resume is op 6's d.
type resume struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       int64  `json:"seq"`
}

// ready is READY's d.
type ready struct {
	Version   int    `json:"version"`
	SessionID string `json:"session_id"`
	User      struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
}

// authHeader is the Authorization value of a REST call and the identify token.
func authHeader(token string) string { return "QQBot " + token }

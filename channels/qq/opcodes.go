package qq

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

// identify is op 2's d.
type identify struct {
	Token      string            `json:"token"` // "QQBot <access_token>"
	Intents    int               `json:"intents"`
	Shard      [2]int            `json:"shard"`
	Properties map[string]string `json:"properties"`
}

// authHeader is the Authorization value of a REST call and the identify token.
func authHeader(token string) string { return "QQBot " + token }

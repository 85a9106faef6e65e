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

// authHeader is the Authorization value of a REST call and the identify token.
func authHeader(token string) string { return "QQBot " + token }

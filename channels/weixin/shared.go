package weixin

import (
	"encoding/json"
	"time"
)

// sharedToken is a user's context token as the database keeps it for every
// gateway on the account, with when it came (the refresh rule needs its age).
type sharedToken struct {
	Token string    `json:"token"`
	At    time.Time `json:"at"`
}

// contextKey is where the shared state keeps user's token: per bot, as a new
// login's tokens are not the old one's.
func (c *Channel) contextKey(user string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "context_token:" + c.acct.BotID + ":" + user
}

// shareToken puts user's context token where the other gateways on the
// database read it; without a database account.json alone keeps it. The
// last writer wins: the token that came last is the one WeChat honours.
func (c *Channel) shareToken(user, token string, at time.Time) {
	if c.shared == nil {
		return
	}
	data, err := json.Marshal(sharedToken{Token: token, At: at})
	if err == nil {
		err = c.shared.Put(c.contextKey(user), string(data))
	}
	if err != nil {
		c.Log.Warn("weixin context token not shared: another gateway answers with its own", "user", user, "error", err)
	}
}

// adoptShared takes user's context token from the database when another
// gateway got a newer one (a message it received, a refresh it made).
func (c *Channel) adoptShared(user string) {
	if c.shared == nil {
		return
	}
	raw, err := c.shared.Get(c.contextKey(user))
	if err != nil {
		c.Log.Warn("weixin shared context token unreadable; using this gateway's", "user", user, "error", err)
		return
	}
	if raw == "" {
		return
	}
	var s sharedToken
	if err := json.Unmarshal([]byte(raw), &s); err != nil || s.Token == "" {
		c.Log.Warn("weixin shared context token malformed; using this gateway's", "user", user, "error", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.At.After(c.tokenAt[user]) {
		c.acct.ContextTokens[user], c.tokenAt[user] = s.Token, s.At
	}
}

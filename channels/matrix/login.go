package matrix

import (
	"context"
	"fmt"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
)

// session is what a password login got, kept under the nanobot home so a
// restart reuses the device instead of creating one per start (nanobot's
// matrix-store/session.json).
type session struct {
	Homeserver  string `json:"homeserver"`
	UserID      string `json:"user_id"`
	AccessToken string `json:"access_token"`
	DeviceID    string `json:"device_id"`
}

// login finds working credentials (the access token; with a password, the
// saved session or a fresh m.login.password), checks them with whoami and
// learns the bot's display name and the homeserver's upload limit.
func (c *Channel) login(ctx context.Context) error {
	user := id.UserID(c.cfg.UserID)
	if c.cfg.Password == "" {
		return c.useToken(ctx, user, c.cfg.AccessToken)
	}
	if c.cfg.AccessToken != "" || c.cfg.DeviceID != "" {
		c.Log.Warn("matrix password login: channels.matrix.accessToken and deviceId are ignored")
	}
	if s, ok := c.loadSession(); ok {
		err := c.useToken(ctx, id.UserID(s.UserID), s.AccessToken)
		if err == nil || !isAuthError(err) {
			return err
		}
		c.Log.Info("matrix saved session refused; logging in with the password again", "error", err)
	}
	anon, err := c.newClient(user, "")
	if err != nil {
		return err
	}
	resp, err := anon.Login(ctx, &mautrix.ReqLogin{
		Type:                     mautrix.AuthTypePassword,
		Identifier:               mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: string(user)},
		Password:                 c.cfg.Password,
		InitialDeviceDisplayName: "nanobot",
	})
	if err != nil {
		return fmt.Errorf("matrix password login: %w", err)
	}
	c.saveState(sessionFile, session{Homeserver: c.base, UserID: string(resp.UserID), AccessToken: resp.AccessToken, DeviceID: string(resp.DeviceID)})
	c.Log.Info("matrix logged in with the password", "user", resp.UserID, "device", resp.DeviceID)
	return c.useToken(ctx, resp.UserID, resp.AccessToken)
}

// useToken makes the token the channel's credentials once whoami accepts it.
func (c *Channel) useToken(ctx context.Context, user id.UserID, token string) error {
	client, err := c.newClient(user, token)
	if err != nil {
		return err
	}
	who, err := client.Whoami(ctx)
	if err != nil {
		return fmt.Errorf("matrix whoami: %w", err)
	}
	if c.cfg.UserID != "" && who.UserID != id.UserID(c.cfg.UserID) {
		c.Log.Warn("matrix token belongs to another user than channels.matrix.userId", "userId", c.cfg.UserID, "token_user", who.UserID)
	}
	if c.cfg.Password == "" && c.cfg.DeviceID != "" && who.DeviceID != id.DeviceID(c.cfg.DeviceID) {
		c.Log.Warn("matrix token belongs to another device than channels.matrix.deviceId; the token's device is used", "deviceId", c.cfg.DeviceID, "token_device", who.DeviceID)
	}
	client.UserID, client.DeviceID = who.UserID, who.DeviceID
	if err := c.setUpE2EE(ctx, client); err != nil {
		return err
	}
	name := ""
	if dn, err := client.GetOwnDisplayName(ctx); err == nil {
		name = dn.DisplayName
	}
	limit := c.cfg.MaxMediaBytes
	if mc, err := client.GetMediaConfig(ctx); err == nil && mc.UploadSize > 0 {
		limit = min(limit, mc.UploadSize)
	}
	c.mu.Lock()
	c.me, c.displayName, c.uploadLimit = who.UserID, name, limit
	c.mu.Unlock()
	c.client.Store(client)
	c.Log.Info("matrix connected", "user", who.UserID, "device", who.DeviceID, "display_name", name)
	return nil
}

func (c *Channel) loadSession() (session, bool) {
	var s session
	if !c.loadState(sessionFile, &s) || s.AccessToken == "" {
		return session{}, false
	}
	if s.Homeserver != c.base || s.UserID != c.cfg.UserID {
		return session{}, false // another account's: the config changed
	}
	return s, true
}

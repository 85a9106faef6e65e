// Package matrix is the Matrix channel: the client-server API's /sync
// long poll in (DMs, and room messages as groupPolicy allows), events out
// (replies to the user's event, HTML from Markdown, streaming by m.replace
// edits, typing, media through the content repository), with nanobot's
// channels.matrix config, and end-to-end encryption in encrypted rooms
// (e2eeEnabled; mautrix's pure-Go Olm/Megolm under the goolm build tag).
package matrix

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pairing"
)

// Name is the channel's name in config, routes and session keys.
const Name = "matrix"

// callTimeout bounds one API call made outside the sync long poll.
const callTimeout = 30 * time.Second

// Channel is one Matrix account's connection to its homeserver.
type Channel struct {
	channels.Base
	cfg       Config
	full      *config.Config // for the allow list invites are checked against
	pairing   *pairing.Store
	workspace string
	stateDir  string          // <nanobot home>/channels ("" = keep nothing across restarts)
	cursor    channels.Cursor // the sync token: in the database's state when there is one
	log       *slog.Logger
	base      string // the homeserver's URL
	// client is swapped whole at login, so calls in flight keep the
	// credentials they started with.
	client atomic.Pointer[mautrix.Client]
	// crypto is the device's end-to-end encryption (nil: off, or not up).
	crypto atomic.Pointer[e2ee]

	// seen are event ids already handed over: a re-sync after a crash
	// between an event and the saved token does not answer it twice.
	// warned are rooms whose encrypted events were already logged.
	warned *channels.RecentKeys
	// backlog are rooms invited to before the first start, not joined in
	// a sync yet: their history ends at the join, not the invite.
	backlog *channels.RecentKeys
	members *memberCounts

	mu          sync.Mutex
	me          id.UserID
	displayName string
	uploadLimit int64
	failing     struct {
		id    string
		since time.Time
	} // the message the agent last refused, and since when
}

// New builds the channel from config; Start logs in and syncs.
func New(deps channels.Deps) (*Channel, error) {
	cfg, err := channels.Block(deps.Config, Name, defaults)
	if err != nil {
		return nil, err
	}
	if keys := missing(cfg); len(keys) > 0 {
		return nil, fmt.Errorf("channels.matrix lacks %s", strings.Join(keys, " and "))
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.Homeserver), "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("channels.matrix.homeserver %q is not an http(s) URL", cfg.Homeserver)
	}
	log := deps.Log
	if log == nil {
		log = slog.Default()
	}
	c := &Channel{
		cfg: cfg, full: deps.Config, pairing: deps.Pairing, workspace: deps.Workspace,
		base:   base,
		warned: channels.NewRecentKeys(256), backlog: channels.NewRecentKeys(256),
		members: newMemberCounts(), me: id.UserID(cfg.UserID), uploadLimit: cfg.MaxMediaBytes,
	}
	if deps.Config != nil && deps.Config.Path != "" {
		c.stateDir = filepath.Join(config.ConfigDir(deps.Config.Path), "channels")
	}
	c.Init(Name, log.With("channel", Name), deps.SeenSet("matrix-events", 4096, c.statePath(eventsFile)))
	c.cursor = channels.Cursor{State: deps.ChannelState(Name, c.statePath(stateFile)), Key: "next_batch:" + cfg.UserID, Log: c.Log}
	client, err := c.newClient(id.UserID(cfg.UserID), "")
	if err != nil {
		return nil, fmt.Errorf("channels.matrix.homeserver: %w", err)
	}
	c.client.Store(client)
	return c, nil
}

// newClient is a client of the homeserver with one set of credentials.
func (c *Channel) newClient(user id.UserID, token string) (*mautrix.Client, error) {
	client, err := mautrix.NewClient(c.base, user, token)
	if err != nil {
		return nil, err
	}
	client.DefaultHTTPRetries = 0 // a 429 comes back to delivery, which waits its retry_after_ms
	client.Client = &http.Client{Timeout: syncTimeout + callTimeout}
	return client, nil
}

// api is the client with the current credentials.
func (c *Channel) api() *mautrix.Client { return c.client.Load() }

// Describe tells the gateway banner which account this is.
func (c *Channel) Describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s on %s (sync)", c.me, c.base)
}

// Start implements channels.Channel: it logs in (access token, or
// password with the session kept under the nanobot home) and runs the
// sync loop until ctx ends or Stop is called. Credentials the homeserver
// refuses fail the start; a homeserver not answering yet only delays it.
func (c *Channel) Start(ctx context.Context, publish channels.Publish) error {
	if c.cfg.E2EEEnabled && !e2eeBuilt {
		c.Log.Warn("matrix encrypted rooms are skipped: " + c.noE2EE())
	}
	loginCtx, cancel := context.WithTimeout(ctx, callTimeout)
	err := c.login(loginCtx)
	cancel()
	if err != nil {
		if isAuthError(err) {
			return fmt.Errorf("matrix homeserver %s refused the credentials of %s: %w", c.base, c.cfg.UserID, err)
		}
		c.Log.Warn("matrix login failed; retrying in the sync loop", "error", err)
	}
	loggedIn := err == nil
	c.Receive(ctx, publish, "matrix sync loop", func(ctx context.Context) { c.syncLoop(ctx, loggedIn) })
	return nil
}

// Stop implements channels.Channel: the long poll is cancelled and the
// loop waited for, up to syncStopGraceSeconds.
func (c *Channel) Stop(ctx context.Context) error {
	grace := time.Duration(max(c.cfg.SyncStopGraceSeconds, 1)) * time.Second
	err := c.StopLoop(ctx, grace)
	if e := c.crypto.Load(); e != nil {
		e.close() // kept, closed: a send after Stop fails rather than going out in the clear
	}
	return err
}

// callCtx bounds an API call made on the channel's own behalf.
func callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// identity is the bot's user id and display name, for mentions and echoes.
func (c *Channel) identity() (id.UserID, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.me, c.displayName
}

package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// CredentialsFile is where OAuth credentials of remote MCP servers live,
// relative to nanobot's home (~/.nanobot), as nanobot keeps them.
const CredentialsFile = "auth/mcp.json"

// credentialsMu serializes reads and updates of the credentials file within a
// process; lockCredentials serializes updates across processes.
var credentialsMu sync.Mutex

// credentialStore is the file's shape: one entry per configured server name.
type credentialStore struct {
	Version int                          `json:"version"`
	Servers map[string]*storedCredential `json:"servers"`
}

// storedCredential is what one server's login left: bound to the server's
// URL by a fingerprint, so pointing the name at another server asks again.
type storedCredential struct {
	ServerFingerprint string           `json:"server_fingerprint"`
	Tokens            *transport.Token `json:"tokens,omitempty"`
	ClientInfo        *clientInfoJSON  `json:"client_info,omitempty"`
	RedirectURI       string           `json:"redirect_uri,omitempty"`
	// Pending is a login whose browser returns to the gateway.
	Pending *pendingLogin `json:"pending,omitempty"`
}

// clientInfoJSON is the client a dynamic registration created.
type clientInfoJSON struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret,omitempty"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
}

func serverFingerprint(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:])
}

// oauthTokens is one server's token store in the credentials file; mcp-go's
// OAuth handler reads it before each request and saves refreshed tokens.
type oauthTokens struct {
	path, server, url string
	// refresher renews an expired token under the file's lock, so processes
	// sharing the file never spend one rotating refresh token twice.
	refresher *transport.OAuthHandler
	// held is set while this store refreshes under the lock: the save the
	// refresh makes writes without taking the lock again.
	held atomic.Bool
}

var _ transport.TokenStore = (*oauthTokens)(nil)

func newOAuthTokens(home, server, url string) *oauthTokens {
	return &oauthTokens{path: filepath.Join(home, CredentialsFile), server: server, url: url}
}

func (s *oauthTokens) GetToken(ctx context.Context) (*transport.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := s.entry()
	if err != nil {
		return nil, err
	}
	if e == nil || e.Tokens == nil || e.Tokens.AccessToken == "" {
		return nil, transport.ErrNoToken
	}
	if s.refresher == nil || !e.Tokens.IsExpired() || e.Tokens.RefreshToken == "" {
		return e.Tokens, nil
	}
	fresh, err := s.refreshShared(ctx)
	if err != nil {
		// mcp-go tries once more and, failing, says to log in again.
		slog.Warn("MCP OAuth token refresh failed", "server", s.server, "error", err)
		return e.Tokens, nil
	}
	return fresh, nil
}

// refreshRun bounds a token refresh, which outlives the request that needed it.
const refreshRun = 30 * time.Second

// refreshShared renews the token holding the credentials lock, unless a
// process that held it first already did: mcp-go shares one refresh per
// process only, and a rotated refresh token spent twice forces a new login.
func (s *oauthTokens) refreshShared(ctx context.Context) (*transport.Token, error) {
	credentialsMu.Lock()
	defer credentialsMu.Unlock()
	unlock, err := lockCredentials(s.path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := readCredentials(s.path)
	if err != nil {
		return nil, err
	}
	e := st.Servers[s.server]
	if e == nil || e.ServerFingerprint != serverFingerprint(s.url) || e.Tokens == nil || e.Tokens.RefreshToken == "" {
		return nil, transport.ErrNoToken
	}
	if !e.Tokens.IsExpired() {
		return e.Tokens, nil // renewed meanwhile
	}
	s.held.Store(true)
	defer s.held.Store(false)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshRun)
	defer cancel()
	return s.refresher.RefreshToken(ctx, e.Tokens.RefreshToken)
}

func (s *oauthTokens) SaveToken(ctx context.Context, token *transport.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.held.Load() {
		return s.updateHeld(func(e *storedCredential) { e.Tokens = token })
	}
	return s.update(func(e *storedCredential) { e.Tokens = token })
}

// entry is the server's credentials, nil when there are none for its URL.
func (s *oauthTokens) entry() (*storedCredential, error) {
	credentialsMu.Lock()
	defer credentialsMu.Unlock()
	st, err := readCredentials(s.path)
	if err != nil {
		return nil, err
	}
	e := st.Servers[s.server]
	if e == nil || e.ServerFingerprint != serverFingerprint(s.url) {
		return nil, nil
	}
	return e, nil
}

// update changes the server's entry, starting it afresh when it belonged to
// another URL.
func (s *oauthTokens) update(change func(*storedCredential)) error {
	credentialsMu.Lock()
	defer credentialsMu.Unlock()
	unlock, err := lockCredentials(s.path)
	if err != nil {
		return err
	}
	defer unlock()
	return s.updateHeld(change)
}

// updateHeld is update for a caller that holds both locks.
func (s *oauthTokens) updateHeld(change func(*storedCredential)) error {
	st, err := readCredentials(s.path)
	if err != nil {
		return err
	}
	fp := serverFingerprint(s.url)
	e := st.Servers[s.server]
	if e == nil || e.ServerFingerprint != fp {
		e = &storedCredential{ServerFingerprint: fp}
		st.Servers[s.server] = e
	}
	change(e)
	return writeCredentials(s.path, st)
}

// lockCredentials holds the file's lock across processes (the gateway, a
// worker and the login command may write it), so no update is lost.
func lockCredentials(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	lf, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("MCP credentials lock: %w", err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		lf.Close()
		return nil, fmt.Errorf("MCP credentials lock: %w", err)
	}
	return func() { lf.Close() }, nil // closing releases the lock
}

func readCredentials(path string) (*credentialStore, error) {
	st := &credentialStore{Version: 1, Servers: map[string]*storedCredential{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MCP credentials: %w", err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("MCP credentials %s are not valid JSON (remove the file and log in again): %w", path, err)
	}
	if st.Servers == nil {
		st.Servers = map[string]*storedCredential{}
	}
	return st, nil
}

// writeCredentials replaces the file atomically, readable by its owner only
// (0600 in a 0700 folder): it holds tokens.
func writeCredentials(path string, st *credentialStore) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode MCP credentials: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("restrict %s: %w", dir, err)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write MCP credentials: %w", err)
	}
	return nil
}

// LoggedIn reports whether a login left tokens for this server name and URL.
func LoggedIn(home, server, url string) bool {
	e, err := newOAuthTokens(home, server, url).entry()
	return err == nil && e != nil && e.Tokens != nil && e.Tokens.AccessToken != ""
}

// Package teamspeer is a fake Microsoft Teams for tests, at the wire: the
// Bot Connector's OpenID metadata and signing keys (JWKS), an AAD token
// endpoint for the bot's client credentials, and the connector's REST API
// (POST and PUT of activities in a conversation). It plays the user side
// too: it signs activities with its key, as the connector does, and POSTs
// them to the bot's endpoint — or signs them wrongly (another key, expired,
// for another app) to see them refused.
package teamspeer

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

// The bot the peer knows.
const (
	AppID       = "7e5a0000-0000-4000-8000-00000000b07"
	AppPassword = "peer-app-password"
	BotID       = "28:" + AppID
	BotName     = "Nanobot"
	keyID       = "peer-key-1"
	issuer      = "https://api.botframework.com"
)

// User is someone in Teams.
type User struct{ ID, AADObjectID, Name string }

// Activity is one the bot sent, as it shows now.
type Activity struct {
	ID           string
	Conversation string
	Type         string
	Text         string
	// Posted is the text it was posted with, before any edit.
	Posted    string
	ReplyToID string
	// Attachments are its attachments as JSON ("" when none).
	Attachments string
	// Edits counts the PUTs it got.
	Edits int
}

// Peer is the fake.
type Peer struct {
	t      testing.TB
	srv    *httptest.Server
	key    *rsa.PrivateKey
	forger *rsa.PrivateKey

	tokens *peerkit.Tokens // the AAD tokens issued

	mu       sync.Mutex
	endpoint string
	sent     []*Activity
	seq      int
}

// New starts the fake on 127.0.0.1; it stops with the test.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, tokens: peerkit.NewTokens("aad-token", time.Hour), key: newKey(t), forger: newKey(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openid", p.openID)
	mux.HandleFunc("GET /keys", p.keys)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("POST /v3/conversations/{conv}/activities", p.post)
	mux.HandleFunc("PUT /v3/conversations/{conv}/activities/{id}", p.put)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func newKey(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("teamspeer: %v", err)
	}
	return k
}

// URL is the connector's serviceUrl.
func (p *Peer) URL() string { return p.srv.URL + "/" }

// OpenIDMetadata is channels.msteams.openIdMetadata.
func (p *Peer) OpenIDMetadata() string { return p.srv.URL + "/openid" }

// TokenEndpoint is channels.msteams.tokenEndpoint.
func (p *Peer) TokenEndpoint() string { return p.srv.URL + "/token" }

// SetEndpoint is where the bot takes activities (http://host:port/api/messages).
func (p *Peer) SetEndpoint(url string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endpoint = url
}

func (p *Peer) openID(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"issuer": issuer, "jwks_uri": p.srv.URL + "/keys", "id_token_signing_alg_values_supported": []string{"RS256"}})
}

func (p *Peer) keys(w http.ResponseWriter, _ *http.Request) {
	pub := p.key.PublicKey
	writeJSON(w, map[string]any{"keys": []any{map[string]any{
		"kty": "RSA", "use": "sig", "kid": keyID, "endorsements": []string{"msteams"},
		"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}

// token is AAD's client-credentials grant for the bot's app.
func (p *Peer) token(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") != AppID ||
		r.PostForm.Get("client_secret") != AppPassword || r.PostForm.Get("scope") != "https://api.botframework.com/.default" {
		peerkit.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	tok, ttl := p.tokens.Issue()
	writeJSON(w, map[string]any{"token_type": "Bearer", "expires_in": int(ttl.Seconds()), "access_token": tok})
}

// authorized: the call carries a token the peer issued.
func (p *Peer) authorized(w http.ResponseWriter, r *http.Request) bool {
	if !p.tokens.ValidBearer(r.Header.Get("Authorization"), "Bearer") {
		peerkit.WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "Unauthorized"}})
		return false
	}
	return true
}

type sentActivity struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	ReplyToID   string            `json:"replyToId"`
	Attachments []json.RawMessage `json:"attachments"`
}

func (p *Peer) post(w http.ResponseWriter, r *http.Request) {
	var a sentActivity
	if !p.authorized(w, r) || !decode(w, r, &a) {
		return
	}
	p.mu.Lock()
	p.seq++
	out := &Activity{ID: fmt.Sprintf("bot-%d", p.seq), Conversation: r.PathValue("conv"), Type: a.Type, Text: a.Text, Posted: a.Text, ReplyToID: a.ReplyToID, Attachments: attachments(a)}
	p.sent = append(p.sent, out)
	p.mu.Unlock()
	writeJSON(w, map[string]string{"id": out.ID})
}

func (p *Peer) put(w http.ResponseWriter, r *http.Request) {
	var a sentActivity
	if !p.authorized(w, r) || !decode(w, r, &a) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.sent {
		if s.ID == r.PathValue("id") && s.Conversation == r.PathValue("conv") {
			s.Text, s.Attachments = a.Text, attachments(a)
			s.Edits++
			writeJSON(w, map[string]string{"id": s.ID})
			return
		}
	}
	peerkit.WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "ActivityNotFound"}})
}

func attachments(a sentActivity) string {
	if len(a.Attachments) == 0 {
		return ""
	}
	b, _ := json.Marshal(a.Attachments)
	return string(b)
}

// Sent are the messages the bot sent to a conversation (typing left out).
func (p *Peer) Sent(conversation string) []Activity {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Activity
	for _, a := range p.sent {
		if a.Conversation == conversation && a.Type == "message" {
			out = append(out, *a)
		}
	}
	return out
}

// Typing counts the typing activities sent to a conversation.
func (p *Peer) Typing(conversation string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.sent {
		if a.Conversation == conversation && a.Type == "typing" {
			n++
		}
	}
	return n
}

// TokensIssued counts the AAD tokens the bot fetched.
func (p *Peer) TokensIssued() int { return len(p.tokens.Issued()) }

// RevokeTokens ends the AAD tokens issued so far: the connector refuses them.
func (p *Peer) RevokeTokens() { p.tokens.Revoke() }

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) { peerkit.WriteJSON(w, http.StatusOK, v) }

// Signing is how an inbound activity's token is made.
type Signing int

// The tokens the peer can sign.
const (
	Valid         Signing = iota
	Forged                // signed with a key not in the JWKS, under its kid
	Expired               // an hour past its expiry
	WrongAudience         // issued for another app
)

// BearerFor is the Authorization header the connector would send with an
// activity of serviceURL, signed as s says.
func (p *Peer) BearerFor(serviceURL string, s Signing) string {
	now := time.Now()
	claims := jwt.MapClaims{"iss": issuer, "aud": AppID, "serviceurl": serviceURL,
		"nbf": now.Add(-time.Minute).Unix(), "iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}
	key := p.key
	switch s {
	case Forged:
		key = p.forger
	case Expired:
		claims["nbf"], claims["iat"], claims["exp"] = now.Add(-3*time.Hour).Unix(), now.Add(-3*time.Hour).Unix(), now.Add(-time.Hour).Unix()
	case WrongAudience:
		claims["aud"] = "another-app"
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = keyID
	signed, err := tok.SignedString(key)
	if err != nil {
		p.t.Fatalf("teamspeer: sign: %v", err)
	}
	return "Bearer " + signed
}

// Post sends an activity to the bot's endpoint with a token signed as s
// says and returns the HTTP status and body of its answer.
func (p *Peer) Post(a map[string]any, s Signing) (int, string) {
	p.mu.Lock()
	endpoint := p.endpoint
	p.mu.Unlock()
	body, _ := json.Marshal(a)
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		p.t.Fatalf("teamspeer: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", p.BearerFor(p.URL(), s))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}

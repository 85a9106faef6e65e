// Package oauthpeer is a test peer at the wire: an OAuth 2.1 authorization
// server (metadata, dynamic registration, authorization code with PKCE,
// refresh with rotation) and the MCP endpoint it protects, on 127.0.0.1.
// The MCP SDK's OAuth example server issues no refresh tokens; this one does,
// so token refresh can be tested.
package oauthpeer

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the authorization server and the protected MCP endpoint.
type Server struct {
	srv *httptest.Server
	// AccessTTL is the lifetime of the access tokens it issues.
	AccessTTL time.Duration
	// Refreshes counts refresh_token grants served.
	Refreshes atomic.Int32

	mu      sync.Mutex
	clients map[string][]string // client_id → redirect URIs
	codes   map[string]code
	access  map[string]time.Time // access token → expiry
	refresh map[string]string    // refresh token → client_id
}

type code struct{ clientID, redirect, challenge string }

// New starts the server; mcp serves the MCP endpoint (/mcp) for requests
// that carry a valid bearer token.
func New(mcp http.Handler) *Server {
	s := &Server{AccessTTL: time.Hour, clients: map[string][]string{}, codes: map[string]code{},
		access: map[string]time.Time{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.Handle("/mcp", s.guard(mcp))
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.srv.URL + "/mcp" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// ExpireAccessTokens ends every access token issued so far; refresh tokens stay good.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for tok := range s.access {
		s.access[tok] = time.Time{}
	}
}

// RevokeRefreshTokens ends every refresh token issued so far, as when the
// user revokes the app's access.
func (s *Server) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL(), "authorization_servers": []string{s.srv.URL}})
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": s.srv.URL, "authorization_endpoint": s.srv.URL + "/authorize", "token_endpoint": s.srv.URL + "/token",
		"registration_endpoint": s.srv.URL + "/register", "response_types_supported": []string{"code"},
		"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := randomToken()
	s.mu.Lock()
	s.clients[id] = req.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize approves at once (the user said yes) and sends the browser back.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	redirects, ok := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if !ok || !slices.Contains(redirects, redirect) {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	}
	c := randomToken()
	s.mu.Lock()
	s.codes[c] = code{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	s.mu.Unlock()
	back, _ := url.Parse(redirect)
	v := url.Values{"code": {c}, "state": {q.Get("state")}}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	clientID := r.PostForm.Get("client_id")
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || c.clientID != clientID || c.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		old := r.PostForm.Get("refresh_token")
		if owner, ok := s.refresh[old]; !ok || owner != clientID {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, old) // rotation: a refresh token works once
		s.Refreshes.Add(1)
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := randomToken(), randomToken()
	s.access[access] = time.Now().Add(s.AccessTTL)
	s.refresh[refresh] = clientID
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(s.AccessTTL.Seconds()), "refresh_token": refresh})
}

func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := bearer(r.Header.Get("Authorization"))
		s.mu.Lock()
		exp, known := s.access[tok]
		s.mu.Unlock()
		if !ok || !known || time.Now().After(exp) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+s.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

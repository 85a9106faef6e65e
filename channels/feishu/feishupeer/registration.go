package feishupeer

import (
	"net/http"
)

// The accounts site's app registration (scan-to-create onboarding): POST
// /oauth/v1/app/registration, form actions init, begin and poll.

// Registered are the app id and secret a scanned registration hands out.
const (
	RegisteredAppID  = "cli_registered_app"
	RegisteredSecret = "registered-app-secret"
	RegistrationURL  = "https://accounts.example.invalid/qr?code=dev-1"
)

// ScanAfter makes the registration succeed after n polls answered
// authorization_pending; brand is the scanner's tenant ("feishu", "lark").
func (p *Peer) ScanAfter(n int, brand string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scanAfter, p.brand = n, brand
}

// RegistrationPolls counts the bot's polls.
func (p *Peer) RegistrationPolls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls
}

func (p *Peer) registration(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	p.record(r, r.Form.Encode())
	switch r.Form.Get("action") {
	case "init":
		writeJSON(w, http.StatusOK, map[string]any{"supported_auth_methods": []string{"client_secret"}})
	case "begin":
		if r.Form.Get("auth_method") != "client_secret" || r.Form.Get("archetype") == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"device_code": "dev-1", "verification_uri_complete": RegistrationURL,
			"interval": 0, "expire_in": 30})
	case "poll":
		p.mu.Lock()
		p.polls++
		done := r.Form.Get("device_code") == "dev-1" && p.polls > p.scanAfter
		brand := p.brand
		p.mu.Unlock()
		if !done {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "authorization_pending"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"client_id": RegisteredAppID, "client_secret": RegisteredSecret,
			"user_info": map[string]any{"open_id": "ou_owner", "tenant_brand": brand}})
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_action"})
	}
}

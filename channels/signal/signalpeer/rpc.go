package signalpeer

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      any             `json:"id"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// serveRPC is POST /api/v1/rpc: one JSON-RPC request, one response.
func (p *Peer) serveRPC(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method != http.MethodPost:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.JSONRPC != "2.0" || req.Method == "" {
		answer(w, nil, nil, &rpcError{-32600, "invalid request"})
		return
	}
	p.mu.Lock()
	p.methods = append(p.methods, req.Method)
	p.mu.Unlock()
	var params struct {
		Recipient   json.RawMessage `json:"recipient"`
		GroupID     string          `json:"groupId"`
		Message     *string         `json:"message"`
		Attachments []string        `json:"attachments"`
		TextStyle   []string        `json:"textStyle"`
		Stop        bool            `json:"stop"`
	}
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &params) != nil {
		answer(w, req.ID, nil, &rpcError{-32602, "invalid params"})
		return
	}
	recipients := oneOrMany(params.Recipient)
	target := len(recipients) > 0 || params.GroupID != ""
	switch req.Method {
	case "updateConfiguration":
		answer(w, req.ID, map[string]any{}, nil)
	case "sendTyping":
		if !target {
			answer(w, req.ID, nil, &rpcError{-32602, "no recipient or groupId"})
			return
		}
		p.mu.Lock()
		t := Typing{GroupID: params.GroupID, Stop: params.Stop}
		if len(recipients) > 0 {
			t.Recipient = recipients[0]
		}
		p.typing = append(p.typing, t)
		p.mu.Unlock()
		answer(w, req.ID, map[string]any{}, nil)
	case "send":
		p.send(w, req.ID, Sent{Recipients: recipients, GroupID: params.GroupID, Attachments: params.Attachments,
			TextStyle: params.TextStyle}, params.Message, target)
	default:
		answer(w, req.ID, nil, &rpcError{-32601, "Method not implemented"})
	}
}

func (p *Peer) send(w http.ResponseWriter, id any, s Sent, message *string, target bool) {
	switch {
	case !target:
		answer(w, id, nil, &rpcError{-32602, "no recipient or groupId"})
		return
	case message == nil && len(s.Attachments) == 0:
		answer(w, id, nil, &rpcError{-32602, "no message or attachment"})
		return
	case s.GroupID != "" && s.GroupID != GroupID:
		answer(w, id, nil, &rpcError{-1, "Invalid group id"})
		return
	}
	p.mu.Lock()
	refused := p.refuseFiles && len(s.Attachments) > 0
	p.mu.Unlock()
	if refused {
		answer(w, id, nil, &rpcError{-32602, "attachment refused"})
		return
	}
	if message != nil {
		s.Message = *message
	}
	for _, path := range s.Attachments {
		data, err := os.ReadFile(path) // the daemon reads the file the bot names
		if err != nil {
			answer(w, id, nil, &rpcError{-1, "Failed to read attachment: " + err.Error()})
			return
		}
		p.mu.Lock()
		p.files[path] = data
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.clock++
	s.Timestamp = p.clock
	p.sent = append(p.sent, s)
	p.mu.Unlock()
	answer(w, id, map[string]any{"timestamp": s.Timestamp, "results": []map[string]any{{"type": "SUCCESS"}}}, nil)
}

// oneOrMany reads a parameter given as one value or an array, as signal-cli takes both.
func oneOrMany(raw json.RawMessage) []string {
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}

func answer(w http.ResponseWriter, id, result any, err *rpcError) {
	body := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		body["error"] = err
	} else {
		body["result"] = result
	}
	peerkit.WriteJSON(w, http.StatusOK, body)
}

package api

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is an error answered in OpenAI's shape:
// {"error":{"message":…,"type":…,"code":<HTTP status>}} (code as nanobot sends it).
type apiError struct {
	Status  int
	Message string
	Type    string
}

// Error types as OpenAI names them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
)

func (e apiError) Error() string { return e.Message }

// badRequest is a 4xx the client can fix.
func badRequest(status int, msg string) apiError {
	return apiError{Status: status, Message: msg, Type: typeInvalidRequest}
}

// serverError is a 5xx: the request was fine, the agent could not answer it.
func serverError(status int, msg string) apiError {
	return apiError{Status: status, Message: msg, Type: typeServer}
}

func (e apiError) body() []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": e.Type, "code": e.Status}})
	return b
}

func writeError(w http.ResponseWriter, e apiError) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="nanobot"`)
	}
	writeJSON(w, e.Status, e.body())
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// pySeconds formats seconds as nanobot's messages do (Python's float repr:
// 120 → "120.0", 0.5 → "0.5").
func pySeconds(s float64) string {
	if s == float64(int64(s)) {
		return strconv.FormatFloat(s, 'f', 1, 64)
	}
	return strconv.FormatFloat(s, 'f', -1, 64)
}

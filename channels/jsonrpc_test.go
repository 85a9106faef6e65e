package channels

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJSONRPCCallsAndJudgesRefusals: a result is decoded; a refusal by
// JSON-RPC itself is permanent for delivery, the server's own error is not.
func TestJSONRPCCallsAndJudgesRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Version string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			ID      int64           `json:"id"`
			Params  json.RawMessage `json:"params"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		require.Equal(t, "/rpc", r.URL.Path)
		answer := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "echo":
			answer["result"] = map[string]any{"params": req.Params, "id": req.ID}
		case "busy":
			answer["error"] = map[string]any{"code": -1, "message": "try later"}
		default:
			answer["error"] = map[string]any{"code": -32601, "message": "Method not implemented"}
		}
		_ = json.NewEncoder(w).Encode(answer)
	}))
	defer srv.Close()
	rpc := &JSONRPC{API: &API{Name: "daemon", Base: srv.URL, HTTP: srv.Client()}, Path: "/rpc"}
	ctx := context.Background()

	var out struct {
		Params map[string]string `json:"params"`
		ID     int64             `json:"id"`
	}
	require.NoError(t, rpc.Call(ctx, "echo", map[string]string{"a": "b"}, &out))
	require.Equal(t, map[string]string{"a": "b"}, out.Params)
	require.NoError(t, rpc.Call(ctx, "echo", nil, &out))
	require.Equal(t, int64(2), out.ID, "each call has its own id")

	err := rpc.Call(ctx, "nope", nil, nil)
	require.True(t, IsPermanent(err))
	require.ErrorContains(t, err, "daemon nope: error -32601: Method not implemented")
	var refused *RPCError
	require.ErrorAs(t, err, &refused)

	err = rpc.Call(ctx, "busy", nil, nil)
	require.False(t, IsPermanent(err), "the server's own error may pass")
	require.ErrorContains(t, err, "try later")
}

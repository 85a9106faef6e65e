package signal

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/nanobot-durable/nanobot/channels"
)

// rpcClient calls the daemon's JSON-RPC endpoint, POST /api/v1/rpc.
type rpcClient struct {
	api *channels.API
	ids atomic.Int64
}

// rpcError is the daemon's answer to a call it refused.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("signal-cli error %d: %s", e.Code, e.Message) }

// call runs one method and decodes its result into out (nil: ignored).
func (r *rpcClient) call(ctx context.Context, method string, params, out any) error {
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	request := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": r.ids.Add(1)}
	if err := r.api.Call(ctx, http.MethodPost, "/api/v1/rpc", request, &answer); err != nil {
		return fmt.Errorf("signal-cli %s: %w", method, err)
	}
	if answer.Error != nil {
		return fmt.Errorf("signal-cli %s: %w", method, answer.Error)
	}
	if out == nil || len(answer.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer.Result, out); err != nil {
		return fmt.Errorf("signal-cli %s: bad result: %w", method, err)
	}
	return nil
}

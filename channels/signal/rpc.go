package signal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// rpcClient calls the daemon's JSON-RPC endpoint, POST /api/v1/rpc.
type rpcClient struct {
	base string
	http *http.Client
	ids  atomic.Int64
}

// rpcError is the daemon's answer to a call it refused.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("signal-cli error %d: %s", e.Code, e.Message) }

// call runs one method and decodes its result into out (nil: ignored).
func (r *rpcClient) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": r.ids.Add(1)})
	if err != nil {
		return fmt.Errorf("signal-cli %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/api/v1/rpc", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("signal-cli %s: %w", method, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("signal-cli %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("signal-cli %s: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("signal-cli %s: HTTP %s", method, resp.Status)
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("signal-cli %s: bad answer: %w", method, err)
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

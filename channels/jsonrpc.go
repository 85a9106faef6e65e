package channels

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// JSONRPC calls a JSON-RPC 2.0 endpoint over HTTP (signal-cli's daemon):
// each call a POST of one request to Path on API, whose transport errors
// and refusals it keeps.
type JSONRPC struct {
	API  *API
	Path string
	ids  atomic.Int64
}

// RPCError is the endpoint's answer to a call it refused.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// Call runs one method and decodes its result into out (nil: ignored). A
// refusal by JSON-RPC itself (bad params, no such method) is permanent
// for delivery: it will not change on a retry; the server's own errors
// and the network's may.
func (r *JSONRPC) Call(ctx context.Context, method string, params, out any) error {
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	request := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": r.ids.Add(1)}
	if err := r.API.Call(ctx, http.MethodPost, r.Path, request, &answer); err != nil {
		return fmt.Errorf("%s %s: %w", r.API.Name, method, err)
	}
	if e := answer.Error; e != nil {
		err := fmt.Errorf("%s %s: %w", r.API.Name, method, e)
		if e.Code <= -32600 && e.Code > -32700 { // invalid request, method not found, invalid params, internal error
			return &SendError{Err: err, Permanent: true}
		}
		return err
	}
	if out == nil || len(answer.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(answer.Result, out); err != nil {
		return fmt.Errorf("%s %s: bad result: %w", r.API.Name, method, err)
	}
	return nil
}

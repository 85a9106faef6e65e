package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// maxListPages bounds a lenient listing against a server whose cursors never end.
const maxListPages = 100

// lenientIDs numbers the lenient listings' requests apart from the SDK's own (integers).
var lenientIDs atomic.Int64

// skippedToolsError reports tool definitions a server listed that could
// not be read; the server's other tools are still offered.
type skippedToolsError struct{ skipped []string }

func (e *skippedToolsError) Error() string {
	return fmt.Sprintf("%d tool definition(s) skipped: %s", len(e.skipped), strings.Join(e.skipped, "; "))
}

// isDecodeFailure tells a reply the SDK could not read from a failed exchange.
func isDecodeFailure(err error) bool {
	return err != nil && !isTransportFailure(err) && strings.Contains(err.Error(), "failed to unmarshal response")
}

// listToolsLenient lists a server's tools one definition at a time, for a
// listing the SDK rejected as a whole: one broken definition (a schema that
// is a string, a type that is a number) must not hide the server's other
// tools. The definitions that cannot be read are returned in a
// *skippedToolsError beside the ones that can.
func listToolsLenient(ctx context.Context, cl *mcpclient.Client) ([]mcpgo.Tool, error) {
	var defs []mcpgo.Tool
	var skipped []string
	cursor, position := "", 0
	for range maxListPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		req := transport.JSONRPCRequest{
			JSONRPC: mcpgo.JSONRPC_VERSION, Method: string(mcpgo.MethodToolsList), Params: params,
			ID: mcpgo.NewRequestId(fmt.Sprintf("nanobot-tools-list-%d", lenientIDs.Add(1))),
		}
		resp, err := cl.GetTransport().SendRequest(ctx, req)
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("tools/list: %s", resp.Error.Message)
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &page); err != nil {
			return nil, fmt.Errorf("tools/list result is not a list of tools: %s", describeDecodeError(err))
		}
		for _, raw := range page.Tools {
			position++
			var def mcpgo.Tool
			if err := json.Unmarshal(raw, &def); err != nil {
				skipped = append(skipped, fmt.Sprintf("tool %s: %s", definitionName(raw, position), describeDecodeError(err)))
				continue
			}
			defs = append(defs, def)
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			break
		}
		cursor = page.NextCursor
	}
	if len(skipped) > 0 {
		return defs, &skippedToolsError{skipped: skipped}
	}
	return defs, nil
}

// definitionName names a definition that could not be read: its name if it
// has one, else its position (from 1) in the listing.
func definitionName(raw json.RawMessage, position int) string {
	var named struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &named) == nil && named.Name != "" {
		return fmt.Sprintf("%q", shorten(named.Name, 80))
	}
	return fmt.Sprintf("#%d", position)
}

// describeDecodeError says what was wrong with a reply in the server's
// terms ("inputSchema.type is a JSON number") instead of naming Go types.
func describeDecodeError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := strings.TrimPrefix(strings.ReplaceAll(typeErr.Field, "Alias.", ""), "result.")
		if field == "" {
			return fmt.Sprintf("the reply is a JSON %s", typeErr.Value)
		}
		return fmt.Sprintf("%s is a JSON %s", field, typeErr.Value)
	}
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "failed to unmarshal response: "); ok {
		msg = rest
	}
	return shorten(msg, 200)
}

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

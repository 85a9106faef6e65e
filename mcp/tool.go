package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/nanobot-durable/nanobot/tools"
)

// Tool is one MCP server tool offered to the model as mcp_<server>_<tool>.
// It holds no connection: each call asks the pool for the server's current
// client, so a reconnect never leaves a registered tool stale.
type Tool struct {
	pool   *Pool
	server string
	kind   string // kindTool, kindResource or kindPrompt
	raw    string // the tool's or prompt's name, or the resource's URI, on the server
	name   string
	desc   string
	params json.RawMessage
	flags  tools.Flags
}

var _ tools.Tool = (*Tool)(nil)

func (t *Tool) Name() string                { return t.name }
func (t *Tool) Description() string         { return t.desc }
func (t *Tool) Parameters() json.RawMessage { return t.params }
func (t *Tool) Flags() tools.Flags          { return t.flags }

// Server is the configured name of the server the tool comes from.
func (t *Tool) Server() string { return t.server }

// RawName is the tool's or prompt's name, or the resource's URI, on its server.
func (t *Tool) RawName() string { return t.raw }

// Run calls the tool on its server; every failure is an error result.
func (t *Tool) Run(ctx context.Context, _ tools.Env, args map[string]any) tools.Result {
	return t.pool.call(ctx, t, args)
}

// fingerprint changes whenever what the registry holds for the tool would.
func (t *Tool) fingerprint() string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%+v", t.server, t.kind, t.raw, t.desc, t.params, t.flags)
}

// newTool wraps a server's tool definition.
func newTool(p *Pool, server, name string, def mcpgo.Tool) (*Tool, error) {
	params, err := inputSchema(def)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", def.Name, err)
	}
	desc := def.Description
	if desc == "" {
		desc = def.Name
	}
	return &Tool{pool: p, server: server, kind: kindTool, raw: def.Name, name: name, desc: desc, params: params, flags: flagsFor(def)}, nil
}

// flagsFor trusts only an explicit readOnlyHint; anything else may change
// the world and gets a journaled claim before it runs.
func flagsFor(def mcpgo.Tool) tools.Flags {
	if h := def.Annotations.ReadOnlyHint; h != nil && *h {
		return tools.Flags{ReadOnly: true}
	}
	return tools.Flags{SideEffects: true}
}

// inputSchema is the server's inputSchema as a JSON Schema object; a missing
// type becomes "object" since the registry and providers require one.
func inputSchema(def mcpgo.Tool) (json.RawMessage, error) {
	if len(def.RawInputSchema) > 0 {
		var m map[string]any
		if err := json.Unmarshal(def.RawInputSchema, &m); err != nil {
			return nil, fmt.Errorf("inputSchema is not a JSON object: %w", err)
		}
		if m == nil {
			m = map[string]any{}
		}
		if _, ok := m["type"]; !ok {
			m["type"] = "object"
		}
		return marshalSchema(m)
	}
	s := def.InputSchema
	if s.Type == "" {
		s.Type = "object"
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("inputSchema type is %q, want \"object\"", s.Type)
	}
	return marshalSchema(s)
}

func marshalSchema(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode inputSchema: %w", err)
	}
	return b, nil
}

// runServerTool runs one tools/call.
func runServerTool(ctx context.Context, c *conn, name string, args map[string]any) (tools.Result, error) {
	if args == nil {
		args = map[string]any{} // some servers reject "arguments": null
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.client.CallTool(ctx, req)
	if err != nil {
		return tools.Result{}, err
	}
	return ConvertResult(res), nil
}

// ConvertResult turns a tools/call result into what the model sees: text
// joined by newlines, other content summarized (base64 would only burn
// context), isError kept as an error result.
func ConvertResult(res *mcpgo.CallToolResult) tools.Result {
	if res == nil {
		return tools.ErrorResult("Error: MCP server returned no result")
	}
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		if s := renderContent(c); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "MCP tool reported an error without a message"
		}
		return tools.ErrorResult("%s", text)
	}
	return tools.TextResult(text)
}

func renderContent(c mcpgo.Content) string {
	switch c := c.(type) {
	case mcpgo.TextContent:
		return c.Text
	case mcpgo.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), base64Len(c.Data))
	case mcpgo.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), base64Len(c.Data))
	case mcpgo.ResourceLink:
		return fmt.Sprintf("[resource link: %s <%s>]", c.Name, c.URI)
	case mcpgo.EmbeddedResource:
		switch r := c.Resource.(type) {
		case mcpgo.TextResourceContents:
			return fmt.Sprintf("[resource: %s]\n%s", r.URI, r.Text)
		case mcpgo.BlobResourceContents:
			return fmt.Sprintf("[resource: %s, %s, %d bytes]", r.URI, orUnknown(r.MIMEType), base64Len(r.Blob))
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Sprintf("[%T content]", c)
	}
	return string(b)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// base64Len is the decoded size of data, estimated when it is not valid base64.
func base64Len(data string) int {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(data); err == nil {
			return len(b)
		}
	}
	return len(data) * 3 / 4
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/nanobot-durable/nanobot/tools"
)

// What a wrapped Tool stands for on its server: a tool, a resource (read by
// URI) or a prompt (rendered with arguments), as nanobot offers all three.
const (
	kindTool     = "tool"
	kindResource = "resource"
	kindPrompt   = "prompt"
)

// emptyObjectSchema is the parameters of a resource: it takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{},"required":[]}`)

// extrasEnabled says whether a server's resources and prompts are offered:
// as in nanobot, only when enabledTools restricts nothing, since they have no
// name filter of their own and a restricted list means "only these tools".
func extrasEnabled(enabled []string) bool {
	return enabled == nil || slices.Contains(enabled, "*")
}

// offersTools is false only for a server that declares resources or prompts
// but no tools: asking it for tools fails and would hide the rest. A server
// that declares nothing is asked anyway, as before.
func offersTools(caps mcpgo.ServerCapabilities) bool {
	return caps.Tools != nil || (caps.Resources == nil && caps.Prompts == nil)
}

// listExtras lists the server's resources and prompts when it advertises
// them: their first page, as nanobot does, so a server with thousands of
// resources does not flood the model's tool list. Like nanobot, a server
// that fails to list them still offers its tools; the failure is only logged.
func listExtras(ctx context.Context, c *conn, log *slog.Logger) ([]mcpgo.Resource, []mcpgo.Prompt) {
	caps := c.client.GetServerCapabilities()
	var resources []mcpgo.Resource
	var prompts []mcpgo.Prompt
	if caps.Resources != nil {
		if res, err := c.client.ListResourcesByPage(ctx, mcpgo.ListResourcesRequest{}); err != nil {
			log.Debug("mcp: resources not supported or failed", "err", err)
		} else {
			resources = res.Resources
		}
	}
	if caps.Prompts != nil {
		if res, err := c.client.ListPromptsByPage(ctx, mcpgo.ListPromptsRequest{}); err != nil {
			log.Debug("mcp: prompts not supported or failed", "err", err)
		} else {
			prompts = res.Prompts
		}
	}
	return resources, prompts
}

// newResourceTool wraps a resource as nanobot's read-only
// mcp_<server>_resource_<name> tool with nanobot's description.
func newResourceTool(p *Pool, server, name string, r mcpgo.Resource) *Tool {
	desc := r.Description
	if desc == "" {
		desc = r.Name
	}
	return &Tool{
		pool: p, server: server, kind: kindResource, raw: r.URI, name: name,
		desc:   fmt.Sprintf("[MCP Resource] %s\nURI: %s", desc, r.URI),
		params: emptyObjectSchema, flags: tools.Flags{ReadOnly: true},
	}
}

// newPromptTool wraps a prompt as nanobot's read-only
// mcp_<server>_prompt_<name> tool: its arguments become string parameters.
func newPromptTool(p *Pool, server, name string, pr mcpgo.Prompt) (*Tool, error) {
	desc := pr.Description
	if desc == "" {
		desc = pr.Name
	}
	props := map[string]any{}
	required := []string{}
	for _, a := range pr.Arguments {
		prop := map[string]any{"type": "string"}
		if a.Description != "" {
			prop["description"] = a.Description
		}
		props[a.Name] = prop
		if a.Required {
			required = append(required, a.Name)
		}
	}
	params, err := marshalSchema(map[string]any{"type": "object", "properties": props, "required": required})
	if err != nil {
		return nil, fmt.Errorf("prompt %q: %w", pr.Name, err)
	}
	return &Tool{
		pool: p, server: server, kind: kindPrompt, raw: pr.Name, name: name,
		desc:   fmt.Sprintf("[MCP Prompt] %s\nReturns a filled prompt template that can be used as a workflow guide.", desc),
		params: params, flags: tools.Flags{ReadOnly: true},
	}, nil
}

// readResource reads a resource and renders it as nanobot does.
func readResource(ctx context.Context, c *conn, uri string) (tools.Result, error) {
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.client.ReadResource(ctx, req)
	if err != nil {
		return tools.Result{}, err
	}
	parts := make([]string, 0, len(res.Contents))
	for _, rc := range res.Contents {
		switch rc := rc.(type) {
		case mcpgo.TextResourceContents:
			parts = append(parts, rc.Text)
		case mcpgo.BlobResourceContents:
			parts = append(parts, fmt.Sprintf("[Binary resource: %d bytes]", base64Len(rc.Blob)))
		default:
			parts = append(parts, fmt.Sprintf("%v", rc))
		}
	}
	return orNoOutput(parts), nil
}

// getPrompt renders a prompt with the model's arguments (all strings, as the
// protocol wants) and joins its messages' content as nanobot does.
func getPrompt(ctx context.Context, c *conn, name string, args map[string]any) (tools.Result, error) {
	req := mcpgo.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = make(map[string]string, len(args))
	for k, v := range args {
		if s, ok := v.(string); ok {
			req.Params.Arguments[k] = s
		} else {
			req.Params.Arguments[k] = fmt.Sprint(v)
		}
	}
	res, err := c.client.GetPrompt(ctx, req)
	if err != nil {
		return tools.Result{}, err
	}
	parts := make([]string, 0, len(res.Messages))
	for _, m := range res.Messages {
		if s := renderContent(m.Content); s != "" {
			parts = append(parts, s)
		}
	}
	return orNoOutput(parts), nil
}

func orNoOutput(parts []string) tools.Result {
	text := strings.Join(parts, "\n")
	if text == "" {
		text = "(no output)"
	}
	return tools.TextResult(text)
}

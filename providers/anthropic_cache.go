package providers

import (
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// markCacheBreakpoints puts Anthropic's cache_control breakpoints where
// nanobot's _apply_cache_control does: the end of the system prompt, the
// last built-in tool and the last tool, and the last block of the turn
// before the newest one. The newest turn (the user's message with its
// runtime context, or the latest tool results) stays after every
// breakpoint, so what is cached is what the next call sends again.
// At most four breakpoints result, Anthropic's limit.
func markCacheBreakpoints(p *anthropicPrompt) {
	if n := len(p.system); n > 0 {
		p.system[n-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	for _, i := range toolBreakpoints(p.tools) {
		if t := p.tools[i].OfTool; t != nil {
			t.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
	}
	if n := len(p.turns); n >= 3 {
		blocks := p.turns[n-2].blocks
		for i := len(blocks) - 1; i >= 0; i-- {
			if markBlock(&blocks[i]) {
				break
			}
		}
	}
}

// toolBreakpoints are the last tool that is not an MCP tool (the built-in
// set changes less often) and the last tool, as nanobot's
// _tool_cache_marker_indices.
func toolBreakpoints(tools []anthropic.ToolUnionParam) []int {
	names := make([]string, len(tools))
	for i, t := range tools {
		if t.OfTool != nil {
			names[i] = t.OfTool.Name
		}
	}
	return toolCacheIndices(names)
}

// toolCacheIndices picks the tools that carry a breakpoint, by name.
func toolCacheIndices(names []string) []int {
	if len(names) == 0 {
		return nil
	}
	tail := len(names) - 1
	var out []int
	for i := tail; i >= 0; i-- {
		if names[i] != "" && !strings.HasPrefix(names[i], "mcp_") {
			if i != tail {
				out = append(out, i)
			}
			break
		}
	}
	return append(out, tail)
}

// markBlock sets cache_control on a block that can carry one; thinking
// blocks cannot, so the caller tries the block before.
func markBlock(b *anthropic.ContentBlockParamUnion) bool {
	cc := anthropic.NewCacheControlEphemeralParam()
	switch {
	case b.OfText != nil:
		b.OfText.CacheControl = cc
	case b.OfImage != nil:
		b.OfImage.CacheControl = cc
	case b.OfToolUse != nil:
		b.OfToolUse.CacheControl = cc
	case b.OfToolResult != nil:
		b.OfToolResult.CacheControl = cc
	default:
		return false
	}
	return true
}

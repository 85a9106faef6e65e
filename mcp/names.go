package mcp

import (
	"crypto/sha1" //nolint:gosec // a name suffix, not security; sha1 matches nanobot's names
	"encoding/hex"
	"regexp"
	"slices"
)

// MaxToolNameLen is the longest tool name model providers accept.
const MaxToolNameLen = 64

const hashSuffixLen = 8

var (
	invalidNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)
	underscoreRuns   = regexp.MustCompile(`_+`)
)

// ToolName is the registry name of an MCP tool, mcp_<server>_<tool>,
// sanitized and limited exactly as nanobot does (so configs naming wrapped
// tools in enabledTools keep working).
func ToolName(server, tool string) string {
	return limitName(sanitizeName("mcp_" + server + "_" + tool))
}

// sanitizeName replaces characters providers reject with _ and collapses runs.
func sanitizeName(s string) string {
	return underscoreRuns.ReplaceAllString(invalidNameChars.ReplaceAllString(s, "_"), "_")
}

// limitName keeps short names as they are and cuts long ones to 64 bytes,
// ending in a hash of the full name so different long names stay different.
func limitName(name string) string {
	if len(name) <= MaxToolNameLen {
		return name
	}
	return name[:MaxToolNameLen-hashSuffixLen-1] + "_" + shortHash(name)
}

// disambiguate gives a colliding tool a name derived from its server and raw
// name, which two distinct tools never share.
func disambiguate(base, server, tool string) string {
	if keep := MaxToolNameLen - hashSuffixLen - 1; len(base) > keep {
		base = base[:keep]
	}
	return base + "_" + shortHash(server+"\x00"+tool)
}

func shortHash(s string) string {
	sum := sha1.Sum([]byte(s)) //nolint:gosec // see import
	return hex.EncodeToString(sum[:])[:hashSuffixLen]
}

// toolEnabled applies enabledTools: nil or "*" allows all, otherwise the raw
// MCP name or the wrapped name must be listed (an empty list allows none).
func toolEnabled(enabled []string, raw, wrapped string) bool {
	if enabled == nil {
		return true
	}
	return slices.Contains(enabled, "*") || slices.Contains(enabled, raw) || slices.Contains(enabled, wrapped)
}

// unmatchedEnabled lists enabledTools entries that name no tool, so a typo
// in the config is logged rather than silently hiding a tool.
func unmatchedEnabled(enabled []string, raw, wrapped []string) []string {
	var out []string
	for _, e := range enabled {
		if e != "*" && !slices.Contains(raw, e) && !slices.Contains(wrapped, e) {
			out = append(out, e)
		}
	}
	return out
}

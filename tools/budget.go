package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// nanobot's tool-result budget.
const (
	DefaultMaxToolResultChars = 16_000
	toolResultPreviewChars    = 1_200
	toolResultsDir            = ".nanobot/tool-results"
	truncatedSuffix           = "\n... (truncated)"
	safeNameMaxBytes          = 128
)

// budgetExempt are tools whose full output the model is meant to keep:
// read_file pages itself (2000 lines / 128000 chars), and persisting its
// output would only send the model back to read_file (nanobot's
// TOOL_RESULT_OFFLOAD_EXEMPT_TOOLS).
var budgetExempt = map[string]bool{"read_file": true}

// ApplyResultBudget keeps one tool result within maxChars characters
// (<= 0 means DefaultMaxToolResultChars). A larger result is saved to
// <workspace>/.nanobot/tool-results/<session>/<call id>.txt and the model
// sees "[tool output persisted]" with the path and a 1200-character
// preview. If it cannot be saved, or no workspace is set, it is truncated
// with "\n... (truncated)". read_file results pass unchanged. The file is
// written once per call id, so a replayed call yields the same text.
func ApplyResultBudget(env Env, toolName, text string, maxChars int) string {
	if maxChars <= 0 {
		maxChars = DefaultMaxToolResultChars
	}
	if budgetExempt[toolName] {
		return text
	}
	size := utf8.RuneCountInString(text)
	if size <= maxChars {
		return text
	}
	if env.Workspace != "" {
		if path, err := persistToolResult(env, text); err == nil {
			out := renderPersisted(path, text, size)
			if utf8.RuneCountInString(out) <= maxChars {
				return out
			}
			return truncateRunes(out, maxChars) + truncatedSuffix
		}
	}
	return truncateRunes(text, maxChars) + truncatedSuffix
}

// persistToolResult writes text under the workspace unless an earlier
// attempt of the same call already did.
func persistToolResult(env Env, text string) (string, error) {
	session := env.SessionKey
	if session == "" {
		session = "default"
	}
	name := env.CallID
	if name == "" {
		sum := sha256.Sum256([]byte(text))
		name = "result-" + hex.EncodeToString(sum[:8])
	}
	dir := filepath.Join(env.Workspace, filepath.FromSlash(toolResultsDir), safeFilename(session))
	path := filepath.Join(dir, safeFilename(name)+".txt")
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return path, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := atomicWrite(path, []byte(text)); err != nil {
		return "", err
	}
	return path, nil
}

// renderPersisted is nanobot's reference to a persisted result.
func renderPersisted(path, text string, size int) string {
	out := fmt.Sprintf("[tool output persisted]\nFull output saved to: %s\nOriginal size: %d chars\nPreview:\n%s",
		path, size, truncateRunes(text, toolResultPreviewChars))
	if size > toolResultPreviewChars {
		out += "\n...\n(Read the saved file if you need the full output.)"
	}
	return out
}

// safeFilename makes a session key or call id usable as one path element:
// nanobot's unsafe characters (<>:"/\|?*) and control characters become
// "_", names that would mean "here" or "up" are replaced, and long names
// are shortened with a hash so distinct keys stay distinct.
func safeFilename(name string) string {
	var sb strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f || strings.ContainsRune(`<>:"/\|?*`, r):
			sb.WriteByte('_')
		default:
			sb.WriteRune(r)
		}
	}
	s := strings.TrimSpace(sb.String())
	if s == "" || strings.Trim(s, ".") == "" {
		s = strings.Repeat("_", max(len(s), 1))
	}
	if len(s) > safeNameMaxBytes {
		sum := sha256.Sum256([]byte(name))
		s = strings.ToValidUTF8(s[:safeNameMaxBytes-17], "") + "-" + hex.EncodeToString(sum[:8])
	}
	return s
}

package prompt

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WorkspacePromptMaxChars caps a workspace prompt override (nanobot's 32 000).
const WorkspacePromptMaxChars = 32_000

// WorkspacePromptFile is where a workspace overrides one of nanobot's
// built-in prompts: <workspace>/prompts/<name>.md ("dream", "evaluator").
func WorkspacePromptFile(workspace, name string) string {
	return filepath.Join(workspace, "prompts", name+".md")
}

// WorkspacePrompt is the override at path when it holds text (capped),
// else def: a missing, empty or unreadable file means nanobot's default.
func WorkspacePrompt(path, def string) (text string, custom bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return def, false
	}
	text = strings.TrimRight(string(data), " \t\r\n")
	if strings.TrimSpace(text) == "" {
		return def, false
	}
	if r := []rune(text); len(r) > WorkspacePromptMaxChars {
		text = string(r[:WorkspacePromptMaxChars])
	}
	return text, true
}

// InitWorkspacePrompt writes def to path when the file is missing or
// empty; it reports false, writing nothing, when the file has text or is
// no regular file.
func InitWorkspacePrompt(path, def string) (bool, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, nil
	case !fi.Mode().IsRegular():
		return false, nil
	default:
		data, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(data)) != "" {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, []byte(def+"\n"), 0o644)
}

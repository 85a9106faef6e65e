package cliapps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// skillNoteMarker keeps the run_cli_app note from being added twice.
const skillNoteMarker = "<!-- nanobot-cli-app-note -->"

var endorsement = regexp.MustCompile(`(?i)\bofficial\s+`)

// writeSkill writes skills/cli-app-<name>/SKILL.md in the workspace: the
// registry's skill when it has one we may fetch, else nanobot's fallback,
// with nanobot's note that the app runs through run_cli_app.
func (m *Manager) writeSkill(ctx context.Context, a App) error {
	content := m.fetchSkill(ctx, a)
	if content == "" {
		content = fallbackSkill(a)
	}
	content = withRunNote(content, a.Name)
	path := filepath.Join(m.Workspace, "skills", SkillName(a.Name), "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("the skill of %s: %w", a.Name, err)
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// fetchSkill reads the entry's skill_md: a "skills/…/SKILL.md" path under
// its registry's raw base, or a URL under that base; anything else is not fetched.
func (m *Manager) fetchSkill(ctx context.Context, a App) string {
	rel := strings.TrimPrefix(a.SkillMD, strings.TrimRight(a.rawBase, "/")+"/")
	parts := strings.Split(rel, "/")
	if a.rawBase == "" || !strings.HasPrefix(rel, "skills/") || parts[len(parts)-1] != "SKILL.md" {
		return ""
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return ""
		}
	}
	body, err := m.get(ctx, strings.TrimRight(a.rawBase, "/")+"/"+rel, 250_000)
	if err != nil {
		return ""
	}
	return string(body)
}

// fallbackSkill is nanobot's skill for an app whose registry has none.
func fallbackSkill(a App) string {
	entry := a.EntryPoint
	if entry == "" {
		entry = "cli-anything-" + a.Name
	}
	desc := strings.TrimSpace(endorsement.ReplaceAllString(a.Description, ""))
	if desc == "" {
		desc = "Use " + a.Title() + " from nanobot."
	}
	return fmt.Sprintf(`---
name: %s
description: >-
  %s
---

# %s

Use this skill when the user asks nanobot to operate %s through its installed CLI app.

If the user attached `+"`@%s`"+` in chat, treat that as the selected app for the current turn.

## Commands

`+"```bash\n%s --help\n%s --json --help\n```"+`

Prefer machine-readable output when the CLI supports `+"`--json`"+`.
`, SkillName(a.Name), desc, a.Title(), a.Title(), a.Name, entry, entry)
}

// withRunNote puts nanobot's execution note after the skill's front matter.
func withRunNote(content, name string) string {
	if strings.Contains(content, skillNoteMarker) {
		return content
	}
	note := fmt.Sprintf("%s\n## Nanobot execution\n\nUse the `run_cli_app` tool with `name=%q` for command execution. "+
		"Do not invoke this CLI through shell unless the user explicitly asks. Prefer this skill when Runtime Context "+
		"mentions `@%s` as a CLI App Attachment.\n", skillNoteMarker, name, name)
	lines := strings.SplitAfter(content, "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "---" {
				return strings.Join(lines[:i+1], "") + "\n" + note + "\n" + strings.Join(lines[i+1:], "")
			}
		}
	}
	return note + "\n" + content
}

// Package prompt builds what the model sees besides the conversation: the
// system prompt from the workspace files and the runtime-context block.
package prompt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/nanobot-durable/nanobot/templates"
)

// BootstrapFiles are read from the workspace root, in this order (nanobot's list).
var BootstrapFiles = []string{"AGENTS.md", "SOUL.md", "USER.md"}

// sectionSeparator joins the system prompt's sections, as nanobot does.
const sectionSeparator = "\n\n---\n\n"

// Builder assembles system prompts for one workspace.
type Builder struct {
	Workspace string
	BotName   string
}

// SystemPrompt reads the workspace and returns the system prompt.
func (b Builder) SystemPrompt(channel string) (string, error) {
	sections := []string{b.identity(channel)}
	for _, name := range BootstrapFiles {
		text, err := b.readIfCustom(name)
		if err != nil {
			return "", err
		}
		if text != "" {
			sections = append(sections, "## "+name+"\n\n"+text)
		}
	}
	memory, err := readOptional(filepath.Join(b.Workspace, "memory", "MEMORY.md"))
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(memory) != "" {
		sections = append(sections, "# Memory\n\n## Long-term Memory\n"+strings.TrimSpace(memory))
	}
	return strings.Join(sections, sectionSeparator), nil
}

func (b Builder) identity(channel string) string {
	name := b.BotName
	if name == "" {
		name = "nanobot"
	}
	var s strings.Builder
	fmt.Fprintf(&s, "# %s 🐈\n\nYou are %s, a helpful AI assistant.\n\n", name, name)
	fmt.Fprintf(&s, "## Runtime\n%s %s, Go %s\n\n", runtime.GOOS, runtime.GOARCH, strings.TrimPrefix(runtime.Version(), "go"))
	fmt.Fprintf(&s, "## Workspace\nYour workspace is at: %s\n", b.Workspace)
	fmt.Fprintf(&s, "- Long-term memory: %s\n", filepath.Join(b.Workspace, "memory", "MEMORY.md"))
	fmt.Fprintf(&s, "- Custom skills: %s/{skill-name}/SKILL.md\n", filepath.Join(b.Workspace, "skills"))
	if hint := formatHint(channel); hint != "" {
		fmt.Fprintf(&s, "\n## Output format\n%s\n", hint)
	}
	return strings.TrimRight(s.String(), "\n")
}

func formatHint(channel string) string {
	switch channel {
	case "cli":
		return "Your reply is shown in a terminal: plain text or light Markdown."
	case "telegram", "slack":
		return "Your reply is shown in a chat app: keep it short; Markdown is converted."
	}
	return ""
}

// readIfCustom returns a bootstrap file's text, or "" when it is missing or
// still identical to the template (nanobot skips untouched templates).
func (b Builder) readIfCustom(name string) (string, error) {
	text, err := readOptional(filepath.Join(b.Workspace, name))
	if err != nil || text == "" {
		return "", err
	}
	if tpl, err := templates.Read(name); err == nil && strings.TrimSpace(tpl) == strings.TrimSpace(text) {
		return "", nil
	}
	return strings.TrimSpace(text), nil
}

func readOptional(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(data), nil
}

// RuntimeContext is the metadata block appended after the user's text.
func RuntimeContext(channel, chatID string) string {
	return "[Runtime Context — metadata only, not instructions]\nChannel: " + channel +
		"\nChat ID: " + chatID + "\n[/Runtime Context]"
}

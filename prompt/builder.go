// Package prompt builds what the model sees besides the conversation: the
// system prompt, an ordered list of sections in nanobot's order, and the
// runtime-context block appended to the user's message.
//
// The system prompt is byte-identical across turns while its sources do not
// change (providers cache prompts by prefix); facts that change every turn
// go into the runtime context, which is never journaled.
package prompt

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/skills"
)

// sectionSeparator joins the system prompt's sections, as nanobot does.
const sectionSeparator = "\n\n---\n\n"

// Builder assembles system prompts for one workspace.
type Builder struct {
	Workspace string
	BotName   string
	// DisabledSkills returns agents.defaults.disabledSkills (the config may be reloaded).
	DisabledSkills func() []string
	// Archive is the memory history (nil: the workspace's memory/history.jsonl).
	Archive memory.Archive
}

// archive is the history the prompt reads.
func (b Builder) archive() memory.Archive {
	if b.Archive != nil {
		return b.Archive
	}
	return memory.Files{Workspace: b.Workspace}
}

// Request is what a system prompt depends on besides the workspace files.
type Request struct {
	Channel    string
	SessionKey string
	// Message is the user's text: "$skill-name" in it activates that skill for the turn.
	Message string
	// Budget is the turn's input budget; Recent History takes at most a quarter of it.
	Budget int
	// Summary is the session's archived summary (from consolidation or idle
	// compaction); SummaryCursor is its history entry, left out of Recent History.
	Summary       string
	SummaryCursor int
	// Count counts tokens (nil: four bytes a token).
	Count func(string) int
}

func (r Request) count(s string) int {
	if r.Count == nil {
		return len(s)/4 + 1
	}
	return r.Count(s)
}

// env is what the sections of one build share.
type env struct {
	b      Builder
	r      Request
	skills []skills.Skill
}

// section renders one part of the system prompt; "" leaves it out.
type section struct {
	name   string
	render func(e *env) (string, error)
}

// sections is the system prompt, in nanobot's order.
var sections = []section{
	{"identity", identity},
	{"bootstrap", bootstrap},
	{"tool contract", toolContract},
	{"memory", longTermMemory},
	{"active skills", activeSkills},
	{"skills", skillsSummary},
	{"recent history", recentHistory},
	{"archived summary", archivedSummary},
}

// SystemPrompt reads the workspace and returns the system prompt.
func (b Builder) SystemPrompt(r Request) (string, error) {
	var disabled []string
	if b.DisabledSkills != nil {
		disabled = b.DisabledSkills()
	}
	list, err := skills.Loader{Workspace: b.Workspace, Disabled: disabled}.List()
	if err != nil {
		return "", fmt.Errorf("system prompt: %w", err)
	}
	e := &env{b: b, r: r, skills: list}
	var parts []string
	for _, s := range sections {
		text, err := s.render(e)
		if err != nil {
			return "", fmt.Errorf("system prompt section %s: %w", s.name, err)
		}
		if text = strings.TrimSpace(text); text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, sectionSeparator), nil
}

// Skills lists the workspace's skills as the prompt sees them (for /skill).
func (b Builder) Skills() ([]skills.Skill, error) {
	var disabled []string
	if b.DisabledSkills != nil {
		disabled = b.DisabledSkills()
	}
	return skills.Loader{Workspace: b.Workspace, Disabled: disabled}.List()
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

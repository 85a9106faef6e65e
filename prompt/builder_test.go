package prompt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/templates"
	"github.com/nanobot-durable/nanobot/tokens"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func write(t *testing.T, ws, rel, text string) {
	t.Helper()
	p := filepath.Join(ws, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

// fullWorkspace has a source for every section.
func fullWorkspace(t *testing.T) string {
	ws := t.TempDir()
	_, err := templates.WriteWorkspace(ws)
	require.NoError(t, err)
	write(t, ws, "AGENTS.md", "# Agent Instructions\n\nAnswer in the user's language.\n")
	write(t, ws, "SOUL.md", "# Soul\n\nCalm and precise.\n")
	// USER.md stays the template: skipped.
	write(t, ws, "memory/MEMORY.md", "# Long-term Memory\n\n- The user's name is Mei.\n- Prefers tea over coffee.\n")
	write(t, ws, "skills/weather/SKILL.md", "---\nname: weather\ndescription: Look up the weather.\nmetadata: {\"nanobot\": {\"requires\": {\"bins\": [\"definitely-not-installed-xyz\"]}}}\n---\nUse wttr.in.\n")
	write(t, ws, "skills/tone/SKILL.md", "---\nname: tone\ndescription: House style.\nmetadata: {\"nanobot\": {\"always\": true}}\n---\nNo exclamation marks.\n")
	write(t, ws, "skills/haiku/SKILL.md", "---\nname: haiku\ndescription: Answer in haiku.\n---\nThree lines: 5, 7, 5 syllables.\n")
	for i, c := range []struct{ key, text string }{
		{"cli:direct", "Dreamt already: Mei moved to Berlin."},
		{"cli:direct", "Mei asked about train tickets to Prague."},
		{"telegram:42", "Another chat's entry."},
		{"cli:direct", "Mei booked the 9:00 train; seat 42."},
	} {
		_, err := memory.Append(ws, memory.Entry{Content: c.text, SessionKey: c.key, Timestamp: fmt.Sprintf("2026-01-0%d 10:00", i+1)})
		require.NoError(t, err)
	}
	_, err = memory.AdvanceCursor(ws, 0, 1)
	require.NoError(t, err)
	return ws
}

func fullRequest() Request {
	return Request{Channel: "cli", SessionKey: "cli:direct", Message: "write me a $haiku about trains",
		Budget: 100000, Summary: "Mei is planning a trip to Prague.", SummaryCursor: 4, Count: tokens.For("").Text}
}

var runtimeLine = regexp.MustCompile(`(?m)^\w+ \w+, Go [0-9.]+\S*$`)

func normalize(ws, prompt string) string {
	return runtimeLine.ReplaceAllString(strings.ReplaceAll(prompt, ws, "<WORKSPACE>"), "<GOOS> <GOARCH>, Go <VERSION>")
}

func TestSystemPromptGolden(t *testing.T) {
	ws := fullWorkspace(t)
	b := Builder{Workspace: ws, BotName: "nanobot"}
	got, err := b.SystemPrompt(fullRequest())
	require.NoError(t, err)
	golden := filepath.Join("testdata", "system_prompt.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(normalize(ws, got)), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), normalize(ws, got))

	again, err := Builder{Workspace: ws, BotName: "nanobot"}.SystemPrompt(fullRequest())
	require.NoError(t, err)
	require.Equal(t, got, again, "byte-identical across builds when nothing changed")
}

func TestSectionsInNanobotOrder(t *testing.T) {
	ws := fullWorkspace(t)
	got, err := Builder{Workspace: ws}.SystemPrompt(fullRequest())
	require.NoError(t, err)
	heads := []string{"# nanobot 🐈", "## AGENTS.md", "## SOUL.md", "## Working with tools", "# Memory\n\n## Long-term Memory",
		"# Active Skills", "# Skills", "# Recent History", "[Archived Context Summary]"}
	last := -1
	for _, h := range heads {
		i := strings.Index(got, h)
		require.Greater(t, i, last, "%q comes after the previous section", h)
		last = i
	}
	require.NotContains(t, got, "## USER.md", "an untouched template is skipped")
	require.Contains(t, got, "### Skill: tone", "always-on skill")
	require.Contains(t, got, "### Skill: haiku", "$haiku activates it for this turn")
	require.Contains(t, got, "### Skill: memory", "the built-in memory skill is always on")
	require.Contains(t, got, "- **weather** — Look up the weather. [skills/weather/SKILL.md] (unavailable: CLI: definitely-not-installed-xyz)")
	require.Contains(t, got, "- **summarize** — ")
	require.Contains(t, got, "[.nanobot/skills/summarize/SKILL.md]")
	require.Contains(t, got, "Mei asked about train tickets to Prague.")
	require.NotContains(t, got, "Dreamt already", "entries Dream absorbed are not repeated")
	require.NotContains(t, got, "Another chat's entry.", "this session only")
	require.NotContains(t, got, "seat 42", "the entry shown as the archived summary is not shown twice")
	require.Contains(t, got, "Mei is planning a trip to Prague.")
	require.Contains(t, got, memory.MemoryPath(ws))
}

func TestEmptyWorkspaceHasOnlyWhatExists(t *testing.T) {
	ws := t.TempDir()
	got, err := Builder{Workspace: ws}.SystemPrompt(Request{Channel: "telegram", SessionKey: "telegram:1"})
	require.NoError(t, err)
	for _, absent := range []string{"## AGENTS.md", "## Long-term Memory", "# Recent History", "[Archived Context Summary]", "### Skill: haiku"} {
		require.NotContains(t, got, absent)
	}
	require.Contains(t, got, "Your reply is shown in a chat app")
	require.Contains(t, got, "## Untrusted content")
}

func TestDisabledSkillsLeaveThePrompt(t *testing.T) {
	ws := fullWorkspace(t)
	got, err := Builder{Workspace: ws, DisabledSkills: func() []string { return []string{"memory", "haiku"} }}.SystemPrompt(fullRequest())
	require.NoError(t, err)
	require.NotContains(t, got, "### Skill: memory")
	require.NotContains(t, got, "haiku")
}

func TestRecentHistoryKeepsTheNewestWithinItsCaps(t *testing.T) {
	ws := t.TempDir()
	for i := 1; i <= 70; i++ {
		_, err := memory.Append(ws, memory.Entry{Content: fmt.Sprintf("entry number %d %s", i, strings.Repeat("word ", 20)), SessionKey: "cli:x"})
		require.NoError(t, err)
	}
	count := tokens.For("").Text
	got, err := Builder{Workspace: ws}.SystemPrompt(Request{SessionKey: "cli:x", Count: count})
	require.NoError(t, err)
	require.Equal(t, 50, strings.Count(got, "entry number "), "the last 50")
	require.Contains(t, got, "entry number 70 ")
	require.NotContains(t, got, "entry number 20 ")

	small, err := Builder{Workspace: ws}.SystemPrompt(Request{SessionKey: "cli:x", Budget: 1200, Count: count})
	require.NoError(t, err)
	_, section, _ := strings.Cut(small, "# Recent History\n\n")
	section, _, _ = strings.Cut(section, sectionSeparator)
	require.LessOrEqual(t, count(section), 300, "a quarter of a small budget")
	require.Contains(t, section, "entry number 70 ")
}

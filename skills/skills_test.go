package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeSkill(t *testing.T, ws, name, text string) {
	t.Helper()
	dir := filepath.Join(Dir(ws), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(text), 0o644))
}

func byName(list []Skill) map[string]Skill {
	out := map[string]Skill{}
	for _, s := range list {
		out[s.Name] = s
	}
	return out
}

func TestBuiltinsShipAndAreReadableFiles(t *testing.T) {
	ws := t.TempDir()
	list, err := Loader{Workspace: ws}.List()
	require.NoError(t, err)
	got := byName(list)
	for _, name := range []string{"memory", "cron", "skill-creator", "summarize"} {
		s, ok := got[name]
		require.True(t, ok, name)
		require.Equal(t, SourceBuiltin, s.Source)
		require.True(t, s.Available(), "%s: %s %v", name, s.Invalid, s.Missing)
		data, err := os.ReadFile(s.Path)
		require.NoError(t, err, "built-ins are written out for read_file")
		require.Contains(t, string(data), "name: "+name)
	}
	require.True(t, got["memory"].Always)
	require.False(t, got["cron"].Always)
}

func TestWorkspaceSkillShadowsBuiltin(t *testing.T) {
	ws := t.TempDir()
	writeSkill(t, ws, "summarize", "---\nname: summarize\ndescription: my own summaries\n---\nDo it my way.\n")
	got := byName(must(Loader{Workspace: ws}.List()))
	require.Equal(t, SourceWorkspace, got["summarize"].Source)
	require.Equal(t, "my own summaries", got["summarize"].Description)
	require.Equal(t, "Do it my way.", got["summarize"].Body)
}

func TestFrontmatterValidation(t *testing.T) {
	ws := t.TempDir()
	writeSkill(t, ws, "no-front", "just text\n")
	writeSkill(t, ws, "wrong-name", "---\nname: other\ndescription: d\n---\n")
	writeSkill(t, ws, "Bad_Name", "---\nname: Bad_Name\ndescription: d\n---\n")
	writeSkill(t, ws, "no-desc", "---\nname: no-desc\n---\n")
	writeSkill(t, ws, "long-desc", "---\nname: long-desc\ndescription: "+string(make([]byte, 0))+strings.Repeat("x", 1025)+"\n---\n")
	writeSkill(t, ws, "bad-yaml", "---\nname: [unclosed\n---\n")
	writeSkill(t, ws, "ok", "---\nname: ok\ndescription: fine\n---\nbody\n")
	got := byName(must(Loader{Workspace: ws}.List()))
	require.Contains(t, got["no-front"].Invalid, "frontmatter is missing")
	require.Contains(t, got["wrong-name"].Invalid, `does not match its folder "wrong-name"`)
	require.Contains(t, got["Bad_Name"].Invalid, "must be 1-64 of a-z")
	require.Equal(t, "description is missing", got["no-desc"].Invalid)
	require.Equal(t, "description is longer than 1024 characters", got["long-desc"].Invalid)
	require.Contains(t, got["bad-yaml"].Invalid, "not valid YAML")
	require.Empty(t, got["ok"].Invalid)
	require.False(t, got["no-front"].Available())
}

func TestRequirementsMakeASkillUnavailable(t *testing.T) {
	ws := t.TempDir()
	writeSkill(t, ws, "gh", "---\nname: gh\ndescription: GitHub\nmetadata: {\"nanobot\": {\"requires\": {\"bins\": [\"gh\", \"git\"], \"env\": [\"GITHUB_TOKEN\"]}}}\n---\n")
	writeSkill(t, ws, "claw", "---\nname: claw\ndescription: openclaw style\nmetadata:\n  openclaw:\n    always: true\n    requires:\n      env: [CLAW_KEY]\n---\n")
	l := Loader{Workspace: ws,
		LookPath: func(b string) (string, error) {
			if b == "git" {
				return "/usr/bin/git", nil
			}
			return "", errors.New("not found")
		},
		Getenv: func(k string) string { return map[string]string{"CLAW_KEY": "x"}[k] },
	}
	got := byName(must(l.List()))
	require.Equal(t, []string{"CLI: gh", "ENV: GITHUB_TOKEN"}, got["gh"].Missing)
	require.False(t, got["gh"].Available())
	require.True(t, got["claw"].Always)
	require.True(t, got["claw"].Available())
}

func TestDisabledSkillsAreLeftOut(t *testing.T) {
	got := byName(must(Loader{Workspace: t.TempDir(), Disabled: []string{"cron"}}.List()))
	require.NotContains(t, got, "cron")
	require.Contains(t, got, "memory")
}

func TestMentioned(t *testing.T) {
	require.Equal(t, []string{"summarize", "gh"}, Mentioned("please $summarize this and ($gh) then $summarize again; costs $5, a$b"))
	require.Empty(t, Mentioned("no skills here, just $ signs"))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

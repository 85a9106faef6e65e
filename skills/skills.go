// Package skills finds the agent's skills: workspace skills/<name>/SKILL.md
// over the built-in ones embedded in the binary. Each SKILL.md starts with
// YAML frontmatter (name, description, metadata.nanobot|openclaw) that is
// validated; a skill whose programs or environment variables are missing is
// listed as unavailable with the reason.
package skills

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

//go:embed builtin
var builtin embed.FS

// Sources of a skill.
const (
	SourceWorkspace = "workspace"
	SourceBuiltin   = "builtin"
)

// Dir is the workspace's skills folder.
func Dir(workspace string) string { return filepath.Join(workspace, "skills") }

// BuiltinDir is where the built-in skills are written out so read_file can
// open them like any workspace file.
func BuiltinDir(workspace string) string { return filepath.Join(workspace, ".nanobot", "skills") }

// Skill is one skill as found on disk.
type Skill struct {
	Name        string
	Description string
	Source      string
	// Path is the absolute SKILL.md.
	Path string
	// Always skills are loaded into every prompt.
	Always bool
	// Missing lists unmet requirements ("CLI: git", "ENV: GITHUB_TOKEN").
	Missing []string
	// Invalid says why the frontmatter was rejected ("" = valid).
	Invalid string
	// Body is SKILL.md without its frontmatter.
	Body string
}

// Available reports whether the skill is valid and its requirements are met.
func (s Skill) Available() bool { return s.Invalid == "" && len(s.Missing) == 0 }

// Loader lists the skills of one workspace.
type Loader struct {
	Workspace string
	// Disabled names skills left out everywhere (agents.defaults.disabledSkills).
	Disabled []string
	// LookPath and Getenv check requirements; nil uses the process's.
	LookPath func(string) (string, error)
	Getenv   func(string) string
}

// List returns every skill, workspace ones shadowing built-ins of the same
// name, sorted by name; disabled skills are left out.
func (l Loader) List() ([]Skill, error) {
	found := map[string]Skill{}
	if err := l.builtins(found); err != nil {
		return nil, err
	}
	if err := l.workspace(found); err != nil {
		return nil, err
	}
	for _, d := range l.Disabled {
		delete(found, d)
	}
	out := make([]Skill, 0, len(found))
	for _, s := range found {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (l Loader) workspace(found map[string]Skill) error {
	entries, err := os.ReadDir(Dir(l.Workspace))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list skills: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(Dir(l.Workspace), e.Name(), "SKILL.md")
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read skill %s: %w", e.Name(), err)
		}
		found[e.Name()] = l.parse(e.Name(), SourceWorkspace, path, string(data))
	}
	return nil
}

// builtins lists the embedded skills and keeps their copies on disk current.
func (l Loader) builtins(found map[string]Skill) error {
	entries, err := builtin.ReadDir("builtin")
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := builtin.ReadFile("builtin/" + e.Name() + "/SKILL.md")
		if err != nil {
			return err
		}
		path := filepath.Join(BuiltinDir(l.Workspace), e.Name(), "SKILL.md")
		if l.Workspace != "" {
			if err := writeIfChanged(path, data); err != nil {
				return fmt.Errorf("write built-in skill %s: %w", e.Name(), err)
			}
		}
		found[e.Name()] = l.parse(e.Name(), SourceBuiltin, path, string(data))
	}
	return nil
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

var validName = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// parse reads and validates one SKILL.md.
func (l Loader) parse(dir, source, path, text string) Skill {
	s := Skill{Name: dir, Source: source, Path: path}
	fm, body, err := splitFrontmatterOf(source, text)
	s.Body = strings.TrimSpace(body)
	if err != nil {
		s.Invalid = err.Error()
		return s
	}
	s.Description = strings.TrimSpace(fm.Description)
	switch {
	case fm.Name != dir:
		s.Invalid = fmt.Sprintf("name %q does not match its folder %q", fm.Name, dir)
	case !validName.MatchString(fm.Name):
		s.Invalid = fmt.Sprintf("name %q must be 1-64 of a-z, 0-9 and -", fm.Name)
	case s.Description == "":
		s.Invalid = "description is missing"
	case utf8.RuneCountInString(s.Description) > 1024:
		s.Invalid = "description is longer than 1024 characters"
	}
	if s.Invalid != "" {
		return s
	}
	s.Always = fm.Meta.Always
	s.Missing = l.missing(fm.Meta.Requires)
	return s
}

func (l Loader) missing(r Requires) []string {
	look, getenv := l.LookPath, l.Getenv
	if look == nil {
		look = exec.LookPath
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []string
	for _, b := range r.Bins {
		if _, err := look(b); err != nil {
			out = append(out, "CLI: "+b)
		}
	}
	for _, e := range r.Env {
		if getenv(e) == "" {
			out = append(out, "ENV: "+e)
		}
	}
	return out
}

var mention = regexp.MustCompile(`(?:^|[\s(])\$([a-z][a-z0-9-]{0,63})\b`)

// Mentioned returns the skill names a message invokes with $name, in order, once each.
func Mentioned(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mention.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

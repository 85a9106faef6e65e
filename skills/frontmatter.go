package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// frontmatter is the YAML head of a SKILL.md.
type frontmatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Metadata    any    `yaml:"metadata"`
	Meta        meta   `yaml:"-"`
}

// meta is metadata.nanobot (or openclaw's, which nanobot also reads).
type meta struct {
	Always   bool     `json:"always"`
	Requires Requires `json:"requires"`
}

// Requires lists what a skill needs to run.
type Requires struct {
	Bins []string `json:"bins"`
	Env  []string `json:"env"`
}

// splitText is one SKILL.md's text parsed.
type splitText struct {
	fm   frontmatter
	body string
	err  error
}

// builtinSplits remembers the embedded skills' parsed text, by the text: it never changes, and
// every turn lists the skills twice (the token estimate and BUILD), YAML parsing each time.
var builtinSplits sync.Map

// splitFrontmatterOf is splitFrontmatter, parsed once per process for the embedded skills.
func splitFrontmatterOf(source, text string) (frontmatter, string, error) {
	if source != SourceBuiltin {
		return splitFrontmatter(text)
	}
	if v, ok := builtinSplits.Load(text); ok {
		s := v.(splitText)
		return s.fm, s.body, s.err
	}
	fm, body, err := splitFrontmatter(text)
	builtinSplits.Store(text, splitText{fm, body, err})
	return fm, body, err
}

// splitFrontmatter parses the "---" block at the top and returns the rest.
func splitFrontmatter(text string) (frontmatter, string, error) {
	var fm frontmatter
	text = strings.TrimPrefix(text, "\ufeff")
	rest, ok := strings.CutPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "---\n")
	if !ok {
		return fm, text, errors.New("frontmatter is missing (SKILL.md must start with ---)")
	}
	head, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return fm, text, errors.New("frontmatter is not closed with ---")
	}
	body = strings.TrimPrefix(strings.TrimPrefix(body, "-"), "\n")
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return fm, body, fmt.Errorf("frontmatter is not valid YAML: %v", err)
	}
	m, err := readMeta(fm.Metadata)
	if err != nil {
		return fm, body, err
	}
	fm.Meta = m
	return fm, body, nil
}

// readMeta accepts metadata as a YAML mapping or as a JSON string (the
// one-line form nanobot's and openclaw's skills use).
func readMeta(v any) (meta, error) {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return meta{}, nil
	case string:
		raw = []byte(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return meta{}, fmt.Errorf("metadata: %v", err)
		}
		raw = b
	}
	var wrap map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wrap); err != nil {
		return meta{}, fmt.Errorf("metadata must be an object: %v", err)
	}
	for _, key := range []string{"nanobot", "openclaw"} {
		if m, ok := wrap[key]; ok {
			var out meta
			if err := json.Unmarshal(m, &out); err != nil {
				return meta{}, fmt.Errorf("metadata.%s: %v", key, err)
			}
			return out, nil
		}
	}
	return meta{}, nil
}

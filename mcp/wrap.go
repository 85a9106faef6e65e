package mcp

import (
	"fmt"
	"sort"
	"strings"
)

// wrap names and wraps the listed tools. Names are assigned over all
// servers in (server, tool) order so a collision resolves the same way
// every time: the first keeps the plain name, the others get a hash suffix.
func (p *Pool) wrap(listed map[string]listing) ([]*Tool, []error) {
	// candidate is one definition to wrap; make builds the wrapper once its
	// name is settled.
	type candidate struct {
		server, base, kind, defName string
		make                        func(name string) (*Tool, error)
	}
	var cands []candidate
	for _, name := range p.names {
		defs, ok := listed[name]
		if !ok {
			continue
		}
		s := p.servers[name]
		var raws, bases []string
		for _, d := range defs.tools {
			base := ToolName(name, d.Name)
			raws, bases = append(raws, d.Name), append(bases, base)
			if toolEnabled(s.cfg.EnabledTools, d.Name, base) {
				cands = append(cands, candidate{name, base, kindTool, d.Name, func(n string) (*Tool, error) { return newTool(p, name, n, d) }})
			}
		}
		for _, r := range defs.resources {
			cands = append(cands, candidate{name, ToolName(name, "resource_"+r.Name), kindResource, r.Name,
				func(n string) (*Tool, error) { return newResourceTool(p, name, n, r), nil }})
		}
		for _, pr := range defs.prompts {
			cands = append(cands, candidate{name, ToolName(name, "prompt_"+pr.Name), kindPrompt, pr.Name,
				func(n string) (*Tool, error) { return newPromptTool(p, name, n, pr) }})
		}
		if miss := unmatchedEnabled(s.cfg.EnabledTools, raws, bases); len(miss) > 0 {
			s.log.Warn("mcp: enabledTools entries match no tool", "entries", miss, "raw_names", raws, "wrapped_names", bases)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].server != cands[j].server {
			return cands[i].server < cands[j].server
		}
		if cands[i].defName != cands[j].defName {
			return cands[i].defName < cands[j].defName
		}
		return cands[i].kind < cands[j].kind
	})
	used := map[string]bool{}
	var out []*Tool
	var errs []error
	for _, c := range cands {
		if strings.TrimSpace(c.defName) == "" {
			errs = append(errs, fmt.Errorf("mcp server %q: a %s without a name was skipped", c.server, c.kind))
			continue
		}
		name := c.base
		if used[name] {
			id := c.defName
			if c.kind != kindTool {
				id = c.kind + "\x00" + c.defName
			}
			name = disambiguate(c.base, c.server, id)
		}
		t, err := c.make(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp server %q: %w", c.server, err))
			continue
		}
		used[name] = true
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, errs
}

package tools

import (
	"context"
	"path/filepath"
	"strings"
)

// confined is a file-writing tool that may write only some workspace paths
// (Dream's: skills/, SOUL.md, USER.md and memory/MEMORY.md).
type confined struct {
	Tool
	allowed []string // slash paths relative to the workspace; a trailing "/" allows a folder
}

// Confine wraps a tool whose "path" argument (or edits[].path, for
// apply_patch) names what it writes, refusing every other path.
func Confine(t Tool, allowed []string) Tool { return confined{Tool: t, allowed: allowed} }

func (c confined) Run(ctx context.Context, env Env, args map[string]any) Result {
	env.RestrictToWorkspace = true
	paths := []string{StringArg(args, "path")}
	if edits, ok := args["edits"].([]any); ok {
		paths = paths[:0]
		for _, e := range edits {
			if m, ok := e.(map[string]any); ok {
				paths = append(paths, StringArg(m, "path"))
			}
		}
	}
	for _, p := range paths {
		if res := c.check(env, p); res != nil {
			return *res
		}
	}
	return c.Tool.Run(ctx, env, args)
}

func (c confined) check(env Env, p string) *Result {
	resolved, errRes := resolveForTool(env, p)
	if errRes != nil {
		return errRes
	}
	ws, err := workspaceDir(env)
	if err == nil {
		ws, err = resolveSymlinks(ws)
	}
	if err == nil {
		if rel, err := filepath.Rel(ws, resolved); err == nil {
			rel = filepath.ToSlash(rel)
			for _, a := range c.allowed {
				if rel == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a)) {
					return nil
				}
			}
		}
	}
	res := ErrorResult("Error: %s may only change %s; %q is not one of them", c.Name(), strings.Join(c.allowed, ", "), p)
	return &res
}

// DreamWritable are the paths Dream may change.
var DreamWritable = []string{"skills/", "SOUL.md", "USER.md", "memory/MEMORY.md"}

// NewDreamRegistry is Dream's tool set: read_file, and edit_file,
// apply_patch and write_file confined to DreamWritable. No shell, no web.
func NewDreamRegistry() *Registry {
	r := NewRegistry()
	r.Register(readFile{})
	for _, t := range []Tool{editFile{}, applyPatch{}, writeFile{}} {
		r.Register(Confine(t, DreamWritable))
	}
	return r
}

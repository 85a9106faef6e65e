package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const listDirDefaultMax = 200

// listDirCountMax stops counting entries past the cap in huge trees.
const listDirCountMax = 100_000

// listDirIgnored are the noise directories nanobot's list_dir skips.
var listDirIgnored = map[string]bool{
	".git": true, "node_modules": true, "__pycache__": true, ".venv": true, "venv": true,
	"dist": true, "build": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true,
	".ruff_cache": true, ".coverage": true, "htmlcov": true,
}

const listDirDescription = "List the contents of a directory, sorted by name; directories end with `/`. " +
	"Set recursive=true to list nested entries as paths relative to the directory. " +
	"Shows at most max_entries entries (default 200) and says how many were left out. " +
	"Common noise directories (.git, node_modules, __pycache__, .venv, venv, dist, build and tool caches) are skipped."

const listDirParameters = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The directory path to list"},
    "recursive": {"type": "boolean", "description": "Recursively list all files (default false)"},
    "max_entries": {"type": "integer", "minimum": 1, "description": "Maximum entries to return (default 200)"}
  },
  "required": ["path"]
}`

type listDir struct{}

func (listDir) Name() string                { return "list_dir" }
func (listDir) Description() string         { return listDirDescription }
func (listDir) Parameters() json.RawMessage { return json.RawMessage(listDirParameters) }
func (listDir) Flags() Flags                { return Flags{ReadOnly: true} }

func (listDir) Run(ctx context.Context, env Env, args map[string]any) Result {
	p := StringArg(args, "path")
	resolved, fi, errRes := statForTool(env, p, "Directory", "listing directory")
	if errRes != nil {
		return *errRes
	}
	switch {
	case !fi.IsDir():
		return ErrorResult("Error: Not a directory: %s", p)
	}
	limit := IntArg(args, "max_entries", listDirDefaultMax)
	if limit < 1 {
		limit = listDirDefaultMax
	}

	var items []string
	total := 0
	add := func(rel string, isDir bool) {
		total++
		if len(items) < limit {
			if isDir {
				rel += "/"
			}
			items = append(items, rel)
		}
	}
	var err error
	if BoolArg(args, "recursive", false) {
		err = walkSorted(ctx, env, resolved, func(rel string, d fs.DirEntry) error {
			add(filepath.ToSlash(rel), isDirEntry(resolved, rel, d))
			if total >= listDirCountMax {
				return errStopWalk
			}
			return nil
		})
	} else {
		var entries []fs.DirEntry
		entries, err = os.ReadDir(resolved)
		pv := newPrivacy(env)
		for _, e := range entries {
			if full := filepath.Join(resolved, e.Name()); pv.hides(full) != "" && !pv.leadsToWorkspace(full) {
				continue
			}
			if !listDirIgnored[e.Name()] {
				add(e.Name(), isDirEntry(resolved, e.Name(), e))
			}
		}
	}
	if err != nil && !errors.Is(err, errStopWalk) {
		return ErrorResult("Error listing directory: %v", err)
	}
	if total == 0 {
		return TextResult(fmt.Sprintf("Directory %s is empty", p))
	}
	out := strings.Join(items, "\n")
	switch {
	case total >= listDirCountMax:
		out += fmt.Sprintf("\n\n(truncated, showing first %d of more than %d entries)", len(items), listDirCountMax)
	case total > limit:
		out += fmt.Sprintf("\n\n(truncated, showing first %d of %d entries)", len(items), total)
	}
	return TextResult(out)
}

var errStopWalk = errors.New("stop walk")

// walkSorted visits everything below root depth-first in name order, skipping
// ignored directories, without following symlinks (no loops, no escapes).
func walkSorted(ctx context.Context, env Env, root string, visit func(rel string, d fs.DirEntry) error) error {
	pv := newPrivacy(env)
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // unreadable subdirectory: list what we can
		}
		if path == root {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if listDirIgnored[d.Name()] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if skip, skipDir := pv.skip(path, d.IsDir()); skipDir {
			return filepath.SkipDir
		} else if skip && !pv.leadsToWorkspace(path) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return visit(rel, d)
	})
}

// isDirEntry reports whether an entry is a directory, following a symlink
// only to decide the trailing "/".
func isDirEntry(dir, rel string, d fs.DirEntry) bool {
	if d.IsDir() {
		return true
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, rel))
	return err == nil && fi.IsDir()
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// nanobot's find_files limits.
const (
	findDefaultHeadLimit = 200
	findMaxHeadLimit     = 1000
)

const findFilesDescription = "Find files by glob pattern. Patterns without '/' match file names anywhere below path " +
	"('*.go', 'README*'); patterns with '/' match the path relative to path, where '**' matches any number of " +
	"directories ('cmd/**/*.go', '**/test_*.py'). Returns workspace-relative paths sorted by path, at most head_limit " +
	"(default 200, max 1000, 0 = no cap; offset pages further). Skips symlinks and noise directories " +
	"(.git, node_modules, __pycache__, .venv, dist, build, …). Prefer this over shell find/ls."

const findFilesParameters = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern, e.g. '*.py' or 'src/**/*.ts'"},
    "path": {"type": "string", "description": "Directory to search in (default '.')"},
    "head_limit": {"type": "integer", "minimum": 0, "maximum": 1000, "description": "Maximum number of paths to return (default 200, 0 for no cap)"},
    "offset": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Skip the first N results before applying head_limit"}
  },
  "required": ["pattern"]
}`

type findFiles struct{}

func (findFiles) Name() string                { return "find_files" }
func (findFiles) Description() string         { return findFilesDescription }
func (findFiles) Parameters() json.RawMessage { return json.RawMessage(findFilesParameters) }
func (findFiles) Flags() Flags                { return Flags{ReadOnly: true} }

func (findFiles) Run(ctx context.Context, env Env, args map[string]any) Result {
	glob, err := compileGlob(StringArg(args, "pattern"))
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	p := StringArg(args, "path")
	if p == "" {
		p = "."
	}
	limit := IntArg(args, "head_limit", findDefaultHeadLimit)
	switch {
	case limit == 0:
		limit = -1
	case limit < 0:
		limit = findDefaultHeadLimit
	case limit > findMaxHeadLimit:
		limit = findMaxHeadLimit
	}
	offset := max(IntArg(args, "offset", 0), 0)

	root, fi, errRes := statForTool(env, p, "Path", "finding files")
	if errRes != nil {
		return *errRes
	}
	switch {
	case !fi.IsDir():
		return ErrorResult("Error: Not a directory: %s", p)
	}

	show := pathDisplayer(env, root)
	var matches []string
	err = walkFiles(ctx, env, root, func(path, rel string, _ fs.DirEntry) error {
		if glob.match(rel) {
			matches = append(matches, show(path))
		}
		return nil
	})
	walkCapped := errors.Is(err, errWalkLimit)
	if err != nil && !walkCapped {
		return ErrorResult("Error finding files: %v", err)
	}
	sort.Strings(matches)
	page, truncated := paginate(matches, limit, offset)
	if len(page) == 0 {
		if offset > 0 && len(matches) > 0 {
			return TextResult(fmt.Sprintf("No files found past offset %d (%d matches in total)", offset, len(matches)))
		}
		return TextResult("No files found")
	}
	out := strings.Join(page, "\n")
	var notes []string
	switch {
	case truncated:
		notes = append(notes, fmt.Sprintf("(pagination: limit=%d, offset=%d; %d matches in total, use offset=%d to continue)",
			limit, offset, len(matches), offset+len(page)))
	case offset > 0:
		notes = append(notes, fmt.Sprintf("(pagination: offset=%d)", offset))
	}
	if walkCapped {
		notes = append(notes, fmt.Sprintf("(search stopped after visiting %d entries; narrow path or pattern)", searchWalkMax))
	}
	if len(notes) > 0 {
		out += "\n\n" + strings.Join(notes, "\n")
	}
	return TextResult(out)
}

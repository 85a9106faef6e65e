package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// nanobot's grep limits.
const (
	grepDefaultHeadLimit = 250
	grepMaxHeadLimit     = 1000
	grepDefaultContext   = 5
	grepMaxContext       = 20
	grepMaxResultChars   = 128_000
	grepMaxLineChars     = 2_000
	grepMaxFileBytes     = 2_000_000   // per file in directory searches
	grepMaxExplicitBytes = 100_000_000 // a file named directly
	grepClipMarker       = "..."
)

// grep output modes.
const (
	grepOutputContent = "content"
	grepOutputFiles   = "files_with_matches"
	grepOutputCount   = "count"
)

const grepDescription = "Search file contents with a regular expression (RE2 syntax: no look-around or backreferences). " +
	"output_mode=content (default) returns each match with context lines (context_before/context_after, default 5 each; " +
	"`context` sets both) as `path:LINE` followed by lines `> N| text` for the match and `  N| text` around it; " +
	"files_with_matches returns matching file paths, most recently modified first; count returns `path: N` per file. " +
	"head_limit caps results (default 250, max 1000, 0 = no cap) and offset skips the first N for paging. " +
	"Filter files with glob ('*.go', 'cmd/**/*.go'). Binary files, files over 2 MB (100 MB when path names a file), " +
	"symlinks and noise directories (.git, node_modules, …) are skipped. Prefer this over shell grep."

const grepParameters = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Regex or plain text pattern to search for"},
    "path": {"type": "string", "description": "File or directory to search in (default '.')"},
    "glob": {"type": "string", "description": "Optional file filter, e.g. '*.py' or 'tests/**/test_*.py'"},
    "case_insensitive": {"type": "boolean", "description": "Case-insensitive search (default false)"},
    "fixed_strings": {"type": "boolean", "description": "Treat pattern as plain text instead of regex (default false)"},
    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "content: matching lines with context; files_with_matches: only file paths; count: matching line counts per file. Default: content"},
    "context_before": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Lines of context before each match (default 5)"},
    "context_after": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Lines of context after each match (default 5)"},
    "context": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Lines of context before and after each match (like grep -C)"},
    "head_limit": {"type": "integer", "minimum": 0, "maximum": 1000, "description": "Maximum results: match blocks in content mode, files otherwise (default 250, 0 = no cap)"},
    "offset": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Skip the first N results before applying head_limit"}
  },
  "required": ["pattern"]
}`

type grepTool struct{}

func (grepTool) Name() string                { return "grep" }
func (grepTool) Description() string         { return grepDescription }
func (grepTool) Parameters() json.RawMessage { return json.RawMessage(grepParameters) }
func (grepTool) Flags() Flags                { return Flags{ReadOnly: true} }

// grepRun carries one search's settings and accumulates its results.
type grepRun struct {
	re            *regexp.Regexp
	mode          string
	before, after int
	limit, offset int // limit < 0 means no cap

	blocks         []string
	resultChars    int
	seenBlocks     int
	truncated      bool
	sizeTruncated  bool
	files          []string
	counts         map[string]int
	mtimes         map[string]int64
	skippedBinary  int
	skippedLarge   int
	stopWalkReason string
}

func (grepTool) Run(ctx context.Context, env Env, args map[string]any) Result {
	pattern := StringArg(args, "pattern")
	p := StringArg(args, "path")
	if p == "" {
		p = "."
	}
	mode := StringArg(args, "output_mode")
	if mode == "" {
		mode = grepOutputContent
	}
	expr := pattern
	if BoolArg(args, "fixed_strings", false) {
		expr = regexp.QuoteMeta(pattern)
	}
	if BoolArg(args, "case_insensitive", false) {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return ErrorResult("Error: invalid regex pattern: %v", err)
	}
	var glob *globPattern
	if g := StringArg(args, "glob"); g != "" {
		if glob, err = compileGlob(g); err != nil {
			return ErrorResult("Error: %v", err)
		}
	}
	ctxLines := IntArg(args, "context", grepDefaultContext)
	run := &grepRun{
		re: re, mode: mode,
		before: clampRange(IntArg(args, "context_before", ctxLines), 0, grepMaxContext),
		after:  clampRange(IntArg(args, "context_after", ctxLines), 0, grepMaxContext),
		limit:  IntArg(args, "head_limit", grepDefaultHeadLimit),
		offset: max(IntArg(args, "offset", 0), 0),
		counts: map[string]int{}, mtimes: map[string]int64{},
	}
	switch {
	case run.limit == 0:
		run.limit = -1
	case run.limit < 0:
		run.limit = grepDefaultHeadLimit
	case run.limit > grepMaxHeadLimit:
		run.limit = grepMaxHeadLimit
	}

	target, fi, errRes := statForTool(env, p, "Path", "searching files")
	if errRes != nil {
		return *errRes
	}
	switch {
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return ErrorResult("Error: Unsupported path: %s", p)
	}

	if fi.IsDir() {
		show := pathDisplayer(env, target)
		err = walkFiles(ctx, env, target, func(path, rel string, d fs.DirEntry) error {
			if glob != nil && !glob.match(rel) {
				return nil
			}
			if run.searchFile(path, show(path), grepMaxFileBytes) {
				return errStopWalk
			}
			return nil
		})
	} else {
		show := pathDisplayer(env, target)
		run.searchFile(target, show(target), grepMaxExplicitBytes)
	}
	switch {
	case errors.Is(err, errWalkLimit):
		run.stopWalkReason = fmt.Sprintf("(search stopped after visiting %d entries; narrow path or glob)", searchWalkMax)
	case err != nil && !errors.Is(err, errStopWalk):
		return ErrorResult("Error searching files: %v", err)
	}
	return TextResult(run.render(pattern, p))
}

// searchFile greps one file and reports whether the search is full.
func (g *grepRun) searchFile(path, shown string, maxBytes int64) (stop bool) {
	fi, err := os.Stat(path)
	if err != nil {
		g.skippedBinary++
		return false
	}
	if fi.Size() > maxBytes {
		g.skippedLarge++
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		g.skippedBinary++
		return false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	f.Close()
	if err != nil || looksBinary(data) || !utf8.Valid(data) {
		g.skippedBinary++
		return false
	}
	lines := splitLines(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if len(data) == 0 {
		lines = nil
	}
	if g.mode != grepOutputContent {
		n := 0
		for _, l := range lines {
			if g.re.MatchString(l) {
				n++
				if g.mode == grepOutputFiles {
					break
				}
			}
		}
		if n > 0 {
			g.files = append(g.files, shown)
			g.counts[shown] = n
			g.mtimes[shown] = fi.ModTime().UnixNano()
		}
		return false
	}
	for i, l := range lines {
		loc := g.re.FindStringIndex(l)
		if loc == nil {
			continue
		}
		g.seenBlocks++
		if g.seenBlocks <= g.offset {
			continue
		}
		if g.limit >= 0 && len(g.blocks) >= g.limit {
			g.truncated = true
			return true
		}
		block := formatGrepBlock(shown, lines, i, loc[0], g.before, g.after)
		sep := 0
		if len(g.blocks) > 0 {
			sep = 2
		}
		if g.resultChars+sep+utf8.RuneCountInString(block) > grepMaxResultChars {
			g.sizeTruncated = true
			return true
		}
		g.blocks = append(g.blocks, block)
		g.resultChars += sep + utf8.RuneCountInString(block)
	}
	return false
}

// formatGrepBlock renders one match with its context in nanobot's shape.
func formatGrepBlock(shown string, lines []string, idx, matchStart, before, after int) string {
	from, to := max(idx-before, 0), min(idx+after, len(lines)-1)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s:%d", shown, idx+1)
	for i := from; i <= to; i++ {
		marker, start := " ", -1
		if i == idx {
			marker, start = ">", matchStart
		}
		fmt.Fprintf(&sb, "\n%s %d| %s", marker, i+1, clipLine(lines[i], start))
	}
	return sb.String()
}

// clipLine shortens a long line to grepMaxLineChars, keeping the match
// (byte offset matchStart, or -1 for context lines) in view.
func clipLine(text string, matchStart int) string {
	n := utf8.RuneCountInString(text)
	if n <= grepMaxLineChars {
		return text
	}
	r := []rune(text)
	avail := grepMaxLineChars - len(grepClipMarker)
	if matchStart < 0 {
		return string(r[:avail]) + grepClipMarker
	}
	startRune := utf8.RuneCountInString(text[:min(matchStart, len(text))])
	start := max(0, startRune-avail/3)
	start = min(start, n-avail)
	end := start + avail
	prefix, suffix := "", ""
	if start > 0 {
		prefix = grepClipMarker
	}
	if end < n {
		suffix = grepClipMarker
	}
	visible := r[start:end]
	if prefix != "" && suffix != "" {
		visible = visible[:avail-len(grepClipMarker)]
	}
	return prefix + string(visible) + suffix
}

func (g *grepRun) render(pattern, p string) string {
	var out string
	var notes []string
	switch g.mode {
	case grepOutputContent:
		out = strings.Join(g.blocks, "\n\n")
		switch {
		case g.truncated:
			notes = append(notes, fmt.Sprintf("(pagination: limit=%d, offset=%d; use offset=%d to continue)",
				g.limit, g.offset, g.offset+len(g.blocks)))
		case g.sizeTruncated:
			notes = append(notes, fmt.Sprintf("(output truncated due to size; use offset=%d to continue)", g.offset+len(g.blocks)))
		case g.offset > 0 && len(g.blocks) > 0:
			notes = append(notes, fmt.Sprintf("(pagination: offset=%d)", g.offset))
		}
	default:
		sort.SliceStable(g.files, func(i, j int) bool {
			a, b := g.files[i], g.files[j]
			if g.mtimes[a] != g.mtimes[b] {
				return g.mtimes[a] > g.mtimes[b]
			}
			return a < b
		})
		page, truncated := paginate(g.files, g.limit, g.offset)
		lines := make([]string, len(page))
		for i, f := range page {
			lines[i] = f
			if g.mode == grepOutputCount {
				lines[i] = fmt.Sprintf("%s: %d", f, g.counts[f])
			}
		}
		out = strings.Join(lines, "\n")
		switch {
		case truncated:
			notes = append(notes, fmt.Sprintf("(pagination: limit=%d, offset=%d)", g.limit, g.offset))
		case g.offset > 0:
			notes = append(notes, fmt.Sprintf("(pagination: offset=%d)", g.offset))
		}
	}
	if out == "" {
		out = fmt.Sprintf("No matches found for pattern '%s' in %s", pattern, p)
	}
	if g.skippedBinary > 0 {
		notes = append(notes, fmt.Sprintf("(skipped %d binary/unreadable files)", g.skippedBinary))
	}
	if g.skippedLarge > 0 {
		notes = append(notes, fmt.Sprintf("(skipped %d large files)", g.skippedLarge))
	}
	if g.stopWalkReason != "" {
		notes = append(notes, g.stopWalkReason)
	}
	if g.mode == grepOutputCount && len(g.counts) > 0 {
		total := 0
		for _, c := range g.counts {
			total += c
		}
		notes = append(notes, fmt.Sprintf("(total matches: %d in %d files)", total, len(g.counts)))
	}
	if len(notes) > 0 {
		out += "\n\n" + strings.Join(notes, "\n")
	}
	return out
}

// paginate applies offset then limit (< 0 = no cap) and reports whether
// items remain past the page.
func paginate(items []string, limit, offset int) ([]string, bool) {
	if offset >= len(items) {
		return nil, false
	}
	items = items[offset:]
	if limit < 0 || len(items) <= limit {
		return items, false
	}
	return items[:limit], true
}

// clampRange bounds v to [lo, hi].
func clampRange(v, lo, hi int) int { return min(max(v, lo), hi) }

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// nanobot's read_file limits.
const (
	readDefaultLimit = 2000
	readMaxChars     = 128_000
	readMaxBytes     = 100 << 20
)

const readFileDescription = "Read a UTF-8 text file. Returns its lines numbered like `cat -n`: " +
	"each line is prefixed with its 1-based line number right-aligned in 6 columns and a tab " +
	"(the prefix is not part of the file; leave it out when quoting text for edit_file). " +
	"Returns at most `limit` lines (default 2000) starting at line `offset` (1-based, default 1), " +
	"and at most 128000 characters; a note at the end says whether the file continues and which offset to read next. " +
	"Binary files and files over 100 MB are refused. Relative paths are relative to the workspace."

const readFileParameters = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file path to read"},
    "offset": {"type": "integer", "minimum": 1, "description": "Line number to start reading from (1-indexed, default 1)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read (default 2000)"}
  },
  "required": ["path"]
}`

type readFile struct{}

func (readFile) Name() string                { return "read_file" }
func (readFile) Description() string         { return readFileDescription }
func (readFile) Parameters() json.RawMessage { return json.RawMessage(readFileParameters) }
func (readFile) Flags() Flags                { return Flags{ReadOnly: true} }

func (readFile) Run(_ context.Context, env Env, args map[string]any) Result {
	p := StringArg(args, "path")
	resolved, fi, errRes := statForTool(env, p, "File", "reading file")
	if errRes != nil {
		return *errRes
	}
	switch {
	case fi.IsDir():
		return ErrorResult("Error: Not a file: %s is a directory; use list_dir to see its contents", p)
	case !fi.Mode().IsRegular():
		return ErrorResult("Error: Not a regular file: %s (%s)", p, fi.Mode().Type())
	case fi.Size() > readMaxBytes:
		return ErrorResult("Error: File too large: %s is %d bytes; read_file reads files up to 100 MB", p, fi.Size())
	}
	data, err := os.ReadFile(resolved)
	if err != nil {
		return ErrorResult("Error reading file: %v", err)
	}
	if looksBinary(data) {
		return ErrorResult("Error: Cannot read binary file %s (%d bytes): read_file only reads UTF-8 text", p, len(data))
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if text == "" {
		return TextResult(fmt.Sprintf("(Empty file: %s)", p))
	}
	out, err := renderLines(text, IntArg(args, "offset", 1), IntArg(args, "limit", readDefaultLimit))
	if err != nil {
		return ErrorResult("Error: %v", err)
	}
	return TextResult(out)
}

// renderLines numbers lines offset..offset+limit-1 of text within the
// character cap and appends a note telling the model where it stands.
func renderLines(text string, offset, limit int) (string, error) {
	total := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		total++
	}
	offset = max(offset, 1)
	if limit < 1 {
		limit = readDefaultLimit
	}
	limit = min(limit, total) // a huge limit must not overflow offset+limit
	if offset > total {
		return "", fmt.Errorf("offset %d is beyond end of file (%d lines)", offset, total)
	}
	rest := text
	for i := 1; i < offset; i++ {
		rest = rest[strings.IndexByte(rest, '\n')+1:]
	}

	var sb strings.Builder
	chars, end, capped := 0, offset-1, false
	cutNote := ""
	for n := offset; n <= total && n < offset+limit; n++ {
		line, tail, _ := strings.Cut(rest, "\n")
		rest = tail
		numbered := numberLine(n, strings.TrimSuffix(line, "\r"))
		cost := utf8.RuneCountInString(numbered) + 1
		if chars+cost > readMaxChars {
			capped = true
			if n == offset {
				// A single line over the cap: show its head rather than nothing.
				numbered = truncateRunes(numbered, readMaxChars)
				sb.WriteString(numbered)
				end = n
				cutNote = fmt.Sprintf("Line %d is longer than %d characters and was cut. ", n, readMaxChars)
			}
			break
		}
		if n > offset {
			sb.WriteByte('\n')
		}
		sb.WriteString(numbered)
		chars += cost
		end = n
	}

	switch {
	case capped && end < total:
		fmt.Fprintf(&sb, "\n\n(%sOutput truncated at %d characters: showing lines %d-%d of %d. Use offset=%d to continue.)",
			cutNote, readMaxChars, offset, end, total, end+1)
	case capped:
		fmt.Fprintf(&sb, "\n\n(%sOutput truncated at %d characters. End of file — %d lines total)", cutNote, readMaxChars, total)
	case end < total:
		fmt.Fprintf(&sb, "\n\n(Showing lines %d-%d of %d. Use offset=%d to continue.)", offset, end, total, end+1)
	default:
		fmt.Fprintf(&sb, "\n\n(End of file — %d lines total)", total)
	}
	return sb.String(), nil
}

// truncateRunes keeps the first n runes of s.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

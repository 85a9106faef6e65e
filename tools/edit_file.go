package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

const editFileDescription = "Edit a file by replacing old_text with new_text. old_text must match the file exactly " +
	"(copy it from read_file output without the line-number prefix); if no exact match exists, a match that differs " +
	"only in leading/trailing whitespace on each line is accepted. Line endings (LF/CRLF) are handled. " +
	"If old_text occurs more than once, the edit is refused unless replace_all=true (replace every occurrence) " +
	"or occurrence=N (replace only the N-th occurrence, 1-based, in file order)."

const editFileParameters = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file path to edit"},
    "old_text": {"type": "string", "description": "The text to find and replace"},
    "new_text": {"type": "string", "description": "The text to replace with"},
    "replace_all": {"type": "boolean", "description": "Replace all occurrences (default false)"},
    "occurrence": {"type": "integer", "minimum": 1, "description": "Replace only the N-th occurrence (1-based) when old_text appears more than once"}
  },
  "required": ["path", "old_text", "new_text"]
}`

// Bounds on the "best match" search shown when old_text is not found.
const (
	editSuggestMaxPairs   = 200_000
	editSuggestMinSimilar = 0.5
	editSuggestLineRunes  = 200
	editListMatchLinesMax = 10
	editFileMaxBytes      = readMaxBytes
)

type editFile struct{}

func (editFile) Name() string                { return "edit_file" }
func (editFile) Description() string         { return editFileDescription }
func (editFile) Parameters() json.RawMessage { return json.RawMessage(editFileParameters) }
func (editFile) Flags() Flags                { return Flags{SideEffects: true} }

func (editFile) Run(_ context.Context, env Env, args map[string]any) Result {
	p := StringArg(args, "path")
	oldText := strings.ReplaceAll(StringArg(args, "old_text"), "\r\n", "\n")
	newText := strings.ReplaceAll(StringArg(args, "new_text"), "\r\n", "\n")
	replaceAll := BoolArg(args, "replace_all", false)
	occurrence := IntArg(args, "occurrence", 0)
	switch {
	case oldText == "":
		return ErrorResult("Error: old_text is empty; use write_file to create or overwrite a whole file")
	case oldText == newText:
		return ErrorResult("Error: old_text and new_text are identical; the file was not changed")
	case replaceAll && occurrence > 0:
		return ErrorResult("Error: set either replace_all or occurrence, not both")
	}
	resolved, fi, errRes := statForTool(env, p, "File", "editing file")
	if errRes != nil {
		return *errRes
	}
	switch {
	case !fi.Mode().IsRegular():
		return ErrorResult("Error: Not a regular file: %s", p)
	case fi.Size() > editFileMaxBytes:
		return ErrorResult("Error: File too large: %s is %d bytes; edit_file edits files up to 100 MB", p, fi.Size())
	}
	data, err := os.ReadFile(resolved)
	if err != nil {
		return ErrorResult("Error editing file: %v", err)
	}
	if looksBinary(data) {
		return ErrorResult("Error: Cannot edit binary file %s", p)
	}
	usesCRLF := strings.Contains(string(data), "\r\n")
	content := strings.ReplaceAll(string(data), "\r\n", "\n")

	spans, fuzzy := findMatches(content, oldText)
	if len(spans) == 0 {
		return ErrorResult("%s", notFoundMessage(p, content, oldText))
	}
	chosen := spans
	switch {
	case replaceAll:
	case occurrence > len(spans):
		return ErrorResult("Error: occurrence=%d requested but old_text appears %d time(s) in %s", occurrence, len(spans), p)
	case occurrence > 0:
		chosen = spans[occurrence-1 : occurrence]
	case len(spans) > 1:
		return ErrorResult("Error: old_text appears %d times in %s (at lines %s). Provide more surrounding context to make it unique, "+
			"set occurrence=N (1-based, in file order) to replace only one of them, or set replace_all=true to replace every occurrence.",
			len(spans), p, matchLines(content, spans))
	}

	var sb strings.Builder
	last := 0
	for _, s := range chosen {
		sb.WriteString(content[last:s.start])
		sb.WriteString(newText)
		last = s.end
	}
	sb.WriteString(content[last:])
	updated := sb.String()
	if usesCRLF {
		updated = strings.ReplaceAll(updated, "\n", "\r\n")
	}
	if err := atomicWrite(resolved, []byte(updated)); err != nil {
		return ErrorResult("Error editing file: %v", err)
	}
	msg := fmt.Sprintf("Successfully edited %s (replaced %d occurrence(s))", resolved, len(chosen))
	if fuzzy {
		msg += "; old_text matched after ignoring leading/trailing whitespace on each line"
	}
	return TextResult(msg)
}

type span struct{ start, end int }

// findMatches returns the non-overlapping places old occurs in content:
// exact matches, or failing those, line windows equal after trimming each
// line (nanobot's fallback for models that mangle indentation).
func findMatches(content, old string) ([]span, bool) {
	var spans []span
	for pos := 0; ; {
		i := strings.Index(content[pos:], old)
		if i < 0 {
			break
		}
		spans = append(spans, span{pos + i, pos + i + len(old)})
		pos += i + len(old)
	}
	if len(spans) > 0 {
		return spans, false
	}

	want := splitLines(old)
	nonBlank := false
	for i, l := range want {
		want[i] = strings.TrimSpace(l)
		nonBlank = nonBlank || want[i] != ""
	}
	if !nonBlank {
		return nil, false
	}
	lines, starts := linesWithOffsets(content)
	for i := 0; i+len(want) <= len(lines); i++ {
		ok := true
		for j, w := range want {
			if strings.TrimSpace(lines[i+j]) != w {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		lastLine := i + len(want) - 1
		spans = append(spans, span{starts[i], starts[lastLine] + len(lines[lastLine])})
		i = lastLine // no overlapping windows
	}
	return spans, true
}

// splitLines splits on \n without a trailing empty line (Python's splitlines).
func splitLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// linesWithOffsets splits content into lines and their byte offsets.
func linesWithOffsets(content string) ([]string, []int) {
	lines := splitLines(content)
	starts := make([]int, len(lines))
	off := 0
	for i, l := range lines {
		starts[i] = off
		off += len(l) + 1
	}
	return lines, starts
}

func matchLines(content string, spans []span) string {
	var nums []string
	for i, s := range spans {
		if i == editListMatchLinesMax {
			nums = append(nums, "…")
			break
		}
		nums = append(nums, strconv.Itoa(strings.Count(content[:s.start], "\n")+1))
	}
	return strings.Join(nums, ", ")
}

// notFoundMessage points the model at the most similar region of the file,
// so it can copy the real text instead of guessing again.
func notFoundMessage(p, content, old string) string {
	lines := splitLines(content)
	want := splitLines(old)
	k := len(want)
	if k > len(lines) || len(lines)*k > editSuggestMaxPairs {
		return fmt.Sprintf("Error: old_text not found in %s. Verify the file content with read_file and copy the text exactly.", p)
	}
	wantGrams := make([]map[string]bool, k)
	for i, w := range want {
		wantGrams[i] = lineBigrams(w)
	}
	gramCache := make([]map[string]bool, len(lines))
	best, bestAt := 0.0, 0
	for i := 0; i+k <= len(lines); i++ {
		score := 0.0
		for j := range k {
			if gramCache[i+j] == nil {
				gramCache[i+j] = lineBigrams(lines[i+j])
			}
			score += dice(wantGrams[j], gramCache[i+j])
		}
		if score /= float64(k); score > best {
			best, bestAt = score, i
		}
	}
	if best <= editSuggestMinSimilar {
		return fmt.Sprintf("Error: old_text not found in %s. No similar text found. Verify the file content with read_file.", p)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Error: old_text not found in %s.\nBest match (%.0f%% similar) at line %d:\n", p, best*100, bestAt+1)
	for j := range k {
		sb.WriteString(numberLine(bestAt+j+1, lines[bestAt+j]))
		sb.WriteByte('\n')
	}
	sb.WriteString("Copy the text exactly as in the file (without the line-number prefix) and try again.")
	return sb.String()
}

// lineBigrams is the set of character pairs of a trimmed, shortened line.
func lineBigrams(line string) map[string]bool {
	r := []rune(strings.TrimSpace(line))
	if len(r) > editSuggestLineRunes {
		r = r[:editSuggestLineRunes]
	}
	out := make(map[string]bool, len(r))
	if len(r) == 1 {
		out[string(r)] = true
	}
	for i := 0; i+1 < len(r); i++ {
		out[string(r[i:i+2])] = true
	}
	return out
}

// dice is the Sørensen–Dice coefficient of two bigram sets; two blank lines match.
func dice(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	shared := 0
	for g := range a {
		if b[g] {
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(a)+len(b))
}

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

// nanobot caps one apply_patch call at 20 edits.
const applyPatchMaxEdits = 20

const applyPatchDescription = "Default tool for code edits. Applies a list of structured edits, possibly to several files, " +
	"all-or-nothing: if any edit fails, no file is changed. Each edit names a path and an action: " +
	"replace (default) swaps old_text, which must occur exactly once in the file (after earlier edits in the same call), " +
	"for new_text; add appends new_text to the file, creating it if needed. Line endings (LF/CRLF) are kept. " +
	"Each file is written atomically. Set dry_run=true to validate and preview without writing. " +
	"Use edit_file for a single replacement with fuzzy whitespace matching or replace_all."

const applyPatchParameters = `{
  "type": "object",
  "properties": {
    "edits": {
      "type": "array",
      "minItems": 1,
      "maxItems": 20,
      "description": "List of edits to apply in order. Each edit specifies a file and the change to make.",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "Path to the file to edit. Relative paths resolve against the workspace."},
          "action": {"type": "string", "enum": ["replace", "add"], "description": "replace (default) or add (append / create)"},
          "old_text": {"type": ["string", "null"], "description": "Exact text to find; required for replace"},
          "new_text": {"type": ["string", "null"], "description": "Replacement text, or the text to append for add"}
        },
        "required": ["path"]
      }
    },
    "dry_run": {"type": "boolean", "description": "Validate and summarize the patch without writing files (default false)"}
  },
  "required": ["edits"]
}`

type applyPatch struct{}

func (applyPatch) Name() string                { return "apply_patch" }
func (applyPatch) Description() string         { return applyPatchDescription }
func (applyPatch) Parameters() json.RawMessage { return json.RawMessage(applyPatchParameters) }
func (applyPatch) Flags() Flags                { return Flags{SideEffects: true} }

// patchFile is one file's state while a patch is being planned.
type patchFile struct {
	path     string // resolved
	original []byte // nil when the file did not exist
	existed  bool
	content  string // LF-normalized pending content
	crlf     bool
}

// patchSummary is one line of the result.
type patchSummary struct {
	action, path   string
	added, deleted int
}

func (applyPatch) Run(_ context.Context, env Env, args map[string]any) Result {
	rawEdits, _ := args["edits"].([]any)
	if len(rawEdits) == 0 {
		return ErrorResult("Error applying patch: must provide edits")
	}
	if len(rawEdits) > applyPatchMaxEdits {
		return ErrorResult("Error applying patch: at most %d edits per call, got %d", applyPatchMaxEdits, len(rawEdits))
	}
	files := map[string]*patchFile{}
	var order []*patchFile
	var summaries []patchSummary
	for i, raw := range rawEdits {
		edit, ok := raw.(map[string]any)
		if !ok {
			return ErrorResult("Error applying patch: edit %d is not an object", i+1)
		}
		s, err := planEdit(env, edit, files, &order)
		if err != nil {
			return ErrorResult("Error applying patch (edit %d of %d): %v; no files were changed", i+1, len(rawEdits), err)
		}
		summaries = append(summaries, s)
	}
	if BoolArg(args, "dry_run", false) {
		return TextResult("Patch dry-run succeeded (no files written):\n" + formatSummaries(summaries))
	}
	if err := writePatch(order); err != nil {
		return ErrorResult("Error applying patch: %v", err)
	}
	return TextResult("Patch applied:\n" + formatSummaries(summaries))
}

// planEdit applies one edit to the in-memory state of its file.
func planEdit(env Env, edit map[string]any, files map[string]*patchFile, order *[]*patchFile) (patchSummary, error) {
	p := strings.TrimSpace(StringArg(edit, "path"))
	if p == "" {
		return patchSummary{}, errors.New("path is required for every edit")
	}
	action := StringArg(edit, "action")
	if action == "" {
		action = "replace"
	}
	if action != "replace" && action != "add" {
		return patchSummary{}, fmt.Errorf("unknown action %q for %s (use replace or add)", action, p)
	}
	newText, hasNew := edit["new_text"].(string)
	if !hasNew {
		return patchSummary{}, fmt.Errorf("new_text is required for %s: %s", action, p)
	}
	newText = strings.ReplaceAll(newText, "\r\n", "\n")
	resolved, err := ResolvePath(env, p)
	if err != nil {
		return patchSummary{}, err
	}
	f, err := loadPatchFile(resolved, p, files, order)
	if err != nil {
		return patchSummary{}, err
	}
	before := f.content

	switch action {
	case "add":
		if f.existed || f.content != "" {
			f.content = appendText(f.content, newText)
		} else {
			f.content = withFinalNewline(newText)
		}
	case "replace":
		oldText := strings.ReplaceAll(StringArg(edit, "old_text"), "\r\n", "\n")
		if oldText == "" {
			return patchSummary{}, fmt.Errorf("old_text is required for replace: %s", p)
		}
		if !f.existed && before == "" {
			return patchSummary{}, fmt.Errorf("file to update does not exist: %s (use action=add to create it)", p)
		}
		pos := strings.Index(before, oldText)
		if pos < 0 {
			return patchSummary{}, errors.New(strings.TrimPrefix(notFoundMessage(p, before, oldText), "Error: "))
		}
		if n := strings.Count(before, oldText); n > 1 {
			return patchSummary{}, fmt.Errorf("old_text appears %d times in %s; include more surrounding context to make it unique", n, p)
		}
		f.content = withFinalNewline(before[:pos] + newText + before[pos+len(oldText):])
	}
	added, deleted := lineDiffStats(before, f.content)
	kind := "update"
	if !f.existed && before == "" {
		kind = "add"
	}
	return patchSummary{action: kind, path: p, added: added, deleted: deleted}, nil
}

// loadPatchFile returns the pending state of resolved, reading it on first use.
func loadPatchFile(resolved, shown string, files map[string]*patchFile, order *[]*patchFile) (*patchFile, error) {
	if f, ok := files[resolved]; ok {
		return f, nil
	}
	f := &patchFile{path: resolved}
	fi, err := os.Stat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("path to update is not a regular file: %s", shown)
	case fi.Size() > editFileMaxBytes:
		return nil, fmt.Errorf("file too large: %s is %d bytes (limit 100 MB)", shown, fi.Size())
	default:
		data, err := os.ReadFile(resolved)
		if err != nil {
			return nil, err
		}
		if looksBinary(data) || !utf8.Valid(data) {
			return nil, fmt.Errorf("file is not UTF-8 text: %s", shown)
		}
		f.original, f.existed = data, true
		f.crlf = strings.Contains(string(data), "\r\n")
		f.content = strings.ReplaceAll(string(data), "\r\n", "\n")
	}
	files[resolved] = f
	*order = append(*order, f)
	return f, nil
}

// writePatch writes every planned file atomically and, if one write fails,
// puts back the files already written so the batch stays all-or-nothing.
func writePatch(order []*patchFile) error {
	var done []*patchFile
	for _, f := range order {
		out := f.content
		if f.crlf {
			out = strings.ReplaceAll(out, "\n", "\r\n")
		}
		if err := atomicWrite(f.path, []byte(out)); err != nil {
			rollback := restorePatch(done)
			if rollback != nil {
				return fmt.Errorf("writing %s: %v; restoring earlier files also failed: %v", f.path, err, rollback)
			}
			return fmt.Errorf("writing %s: %v; no files were changed", f.path, err)
		}
		done = append(done, f)
	}
	return nil
}

func restorePatch(done []*patchFile) error {
	var errs []error
	for _, f := range done {
		if f.existed {
			errs = append(errs, atomicWrite(f.path, f.original))
		} else {
			errs = append(errs, os.Remove(f.path))
		}
	}
	return errors.Join(errs...)
}

// appendText appends without merging into an unterminated last line, and
// ends the file with a newline (nanobot's _append_text).
func appendText(base, extra string) string {
	if base != "" && extra != "" && !strings.HasSuffix(base, "\n") && !strings.HasPrefix(extra, "\n") {
		base += "\n"
	}
	return withFinalNewline(base + extra)
}

func withFinalNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// lineDiffStats counts added and deleted lines between two versions by
// trimming their common leading and trailing lines; one edit changes one
// contiguous region, so this equals a real diff's counts for it.
func lineDiffStats(before, after string) (added, deleted int) {
	a, b := statLines(before), statLines(after)
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return len(b) - i - j, len(a) - i - j
}

func statLines(s string) []string {
	if s == "" {
		return nil
	}
	return splitLines(s)
}

func formatSummaries(ss []patchSummary) string {
	lines := make([]string, len(ss))
	for i, s := range ss {
		lines[i] = fmt.Sprintf("- %s %s", s.action, s.path)
		if s.added > 0 || s.deleted > 0 {
			lines[i] += fmt.Sprintf(" (+%d/-%d)", s.added, s.deleted)
		}
	}
	return strings.Join(lines, "\n")
}

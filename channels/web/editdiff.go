package web

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffMarks are a unified diff's line prefixes by operation.
var diffMarks = map[diffmatchpatch.Operation]string{diffmatchpatch.DiffEqual: " ", diffmatchpatch.DiffDelete: "-", diffmatchpatch.DiffInsert: "+"}

// fileEditDiff is an edit_file or write_file call as a unified diff, from
// its arguments: edit_file's old_text against new_text, write_file's
// content as added lines (the file before it is not kept). "" for any
// other call, or arguments that do not parse.
func fileEditDiff(name, args string) string {
	var a struct {
		Path    string `json:"path"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
		Content string `json:"content"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || a.Path == "" {
		return ""
	}
	before, after := a.OldText, a.NewText
	switch name {
	case "edit_file":
	case "write_file":
		before, after = "", a.Content
	default:
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ %s @@\n", a.Path, a.Path, name)
	for _, d := range diff.Do(before, after) {
		for _, line := range strings.SplitAfter(d.Text, "\n") {
			if line != "" {
				b.WriteString(diffMarks[d.Type] + strings.TrimSuffix(line, "\n") + "\n")
			}
		}
	}
	return b.String()
}

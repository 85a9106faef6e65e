// Package heartbeat reads HEARTBEAT.md: the heartbeat runs a turn only when
// the "## Active Tasks" section has content (nanobot's rule).
package heartbeat

import (
	"regexp"
	"strings"
)

// comments are HTML comments, which templates use as placeholders.
var comments = regexp.MustCompile(`(?s)<!--.*?-->`)

// ActiveTasks is the content of the "## Active Tasks" section, without
// comments and blank lines; "" means there is nothing to do.
func ActiveTasks(markdown string) string {
	var out []string
	in := false
	for _, line := range strings.Split(comments.ReplaceAllString(markdown, ""), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			title := strings.TrimSpace(trimmed[level:])
			switch {
			case strings.EqualFold(title, "Active Tasks"):
				in = true
				continue
			case in && level <= 2:
				in = false
			}
		}
		if in && trimmed != "" {
			out = append(out, strings.TrimRight(line, " \t\r"))
		}
	}
	return strings.Join(out, "\n")
}

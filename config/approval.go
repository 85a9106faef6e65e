package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// ApprovalModes are tools.approval.mode's values.
var ApprovalModes = []string{"off", "risky", "all"}

// Asks reports whether any call may wait for a person.
func (a Approval) Asks() bool { return a.Mode == "risky" || a.Mode == "all" }

func (a Approval) check(src string) error {
	if !slices.Contains(ApprovalModes, a.Mode) {
		return &Error{Source: src, Key: "tools.approval.mode", Msg: fmt.Sprintf("%q is not one of %s", a.Mode, strings.Join(ApprovalModes, ", "))}
	}
	for i, g := range a.Tools {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			return &Error{Source: src, Key: fmt.Sprintf("tools.approval.tools[%d]", i), Msg: fmt.Sprintf("%q is not a tool-name glob", g)}
		}
	}
	for i, re := range a.Commands {
		if _, err := regexp.Compile(re); err != nil {
			return &Error{Source: src, Key: fmt.Sprintf("tools.approval.commands[%d]", i), Msg: fmt.Sprintf("%q is not a regular expression: %v", re, err)}
		}
	}
	if a.TimeoutS < 0 {
		return &Error{Source: src, Key: "tools.approval.timeoutS", Msg: fmt.Sprintf("%d: want seconds > 0 (default 86400, a day)", a.TimeoutS)}
	}
	return nil
}

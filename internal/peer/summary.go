package peer

import (
	"fmt"
	"slices"
	"strings"
)

// Names lists every peer, in the order the summary prints them.
var Names = []string{PostgreSQL, Dovecot, Dendrite, Chromium, Bwrap, Aimock, TelegramAPI, MCPServers, NPM}

// tally is what the tests of one run said about one peer: the tests by
// verdict (a test that asks twice counts once) and the distinct reasons.
type tally struct {
	used, skipped, missing map[string]bool
	why                    []string // first seen first
}

// Summary reads a report (the lines record appends) and returns one line
// per peer: used, skipped or missing (with why), or "not asked" when no
// test of the run needed it. Peers the report names beyond Names follow.
func Summary(report string) []string {
	tallies := map[string]*tally{}
	names := slices.Clone(Names)
	for _, line := range strings.Split(report, "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) < 3 {
			continue
		}
		name, verdict, test := f[0], f[1], f[2]
		tl := tallies[name]
		if tl == nil {
			tl = &tally{used: map[string]bool{}, skipped: map[string]bool{}, missing: map[string]bool{}}
			tallies[name] = tl
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		switch verdict {
		case "used":
			tl.used[test] = true
		case "skipped":
			tl.skipped[test] = true
		case "missing":
			tl.missing[test] = true
		}
		if len(f) == 4 && f[3] != "" && !slices.Contains(tl.why, f[3]) {
			tl.why = append(tl.why, f[3])
		}
	}
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, fmt.Sprintf("peer %-*s  %s", width, n, tallies[n].String()))
	}
	return out
}

// String is the verdict on one peer: a missing peer outranks a skip,
// which outranks use (a peer used by one test but missing for another
// was not fully had).
func (tl *tally) String() string {
	if tl == nil {
		return "not asked"
	}
	why := ""
	if len(tl.why) > 0 {
		why = ": " + strings.Join(tl.why, "; ")
	}
	also := ""
	if len(tl.used) > 0 {
		also = fmt.Sprintf(" (used by %s)", tests(len(tl.used)))
	}
	switch {
	case len(tl.missing) > 0:
		return fmt.Sprintf("MISSING: failed %s%s%s", tests(len(tl.missing)), also, why)
	case len(tl.skipped) > 0:
		return fmt.Sprintf("skipped by %s%s%s", tests(len(tl.skipped)), also, why)
	}
	return "used by " + tests(len(tl.used))
}

func tests(n int) string {
	if n == 1 {
		return "1 test"
	}
	return fmt.Sprintf("%d tests", n)
}

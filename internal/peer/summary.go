package peer

import (
	"fmt"
	"slices"
	"strings"
)

// Names lists every peer, in the order the summary prints them.
var Names = []string{PostgreSQL, Dovecot, Dendrite, Chromium, Bwrap, Aimock, TelegramAPI, MCPServers}

// tally is what the tests of one run said about one peer.
type tally struct {
	used, skipped, missing int
	why                    []string // distinct reasons, first seen first
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
		name, verdict := f[0], f[1]
		tl := tallies[name]
		if tl == nil {
			tl = &tally{}
			tallies[name] = tl
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		switch verdict {
		case "used":
			tl.used++
		case "skipped":
			tl.skipped++
		case "missing":
			tl.missing++
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
	if tl.used > 0 {
		also = fmt.Sprintf(" (used by %s)", tests(tl.used))
	}
	switch {
	case tl.missing > 0:
		return fmt.Sprintf("MISSING: failed %s%s%s", tests(tl.missing), also, why)
	case tl.skipped > 0:
		return fmt.Sprintf("skipped by %s%s%s", tests(tl.skipped), also, why)
	}
	return "used by " + tests(tl.used)
}

func tests(n int) string {
	if n == 1 {
		return "1 test"
	}
	return fmt.Sprintf("%d tests", n)
}

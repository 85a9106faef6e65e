package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	tokenusage "github.com/nanobot-durable/nanobot/usage"
)

// usageCmd prints token usage by day and model, and by session, from the usage file.
func (a *app) usageCmd(ctx context.Context, args []string) error {
	fs := a.flags("usage")
	days := fs.Int("days", 7, "how many days back, today included (0 = all)")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *days < 0 {
		return usageError{fmt.Errorf("usage: --days must be 0 or more, got %d", *days)}
	}
	_, st, err := a.openStores(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	store := st.Usage
	var since time.Time
	if *days > 0 {
		now := time.Now()
		since = time.Date(now.Year(), now.Month(), now.Day()-(*days-1), 0, 0, 0, 0, now.Location())
	}
	recs, bad, err := store.Since(since)
	if err != nil {
		return err
	}
	if bad > 0 {
		a.log.Warn("usage file has lines that do not parse; they are left out", "file", store.Where(), "lines", bad)
	}
	rep := tokenusage.Summarize(recs, since, time.Local)
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if rep.Total.Calls == 0 {
		fmt.Fprintf(a.stdout, "No model calls recorded%s (%s).\n", sinceText(since), store.Where())
		return nil
	}
	t := rep.Total
	err = table(a.stdout, "DAY\tMODEL\tTURNS\tCALLS\tPROMPT\tCOMPLETION\tCACHED\t", func(w io.Writer) {
		for _, r := range rep.ByDay {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", r.Day, r.Model, r.Turns, r.Calls, r.Prompt, r.Completion, r.Cached)
		}
		fmt.Fprintf(w, "total\t\t%d\t%d\t%d\t%d\t%d\t\n", t.Turns, t.Calls, t.Prompt, t.Completion, t.Cached)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	err = table(a.stdout, "SESSION\tTURNS\tCALLS\tPROMPT\tCOMPLETION\tCACHED\t", func(w io.Writer) {
		for _, r := range rep.Sessions {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", r.Session, r.Turns, r.Calls, r.Prompt, r.Completion, r.Cached)
		}
	})
	if err != nil {
		return err
	}
	// the split by kind shows only when some calls were not a turn's own
	if slices.ContainsFunc(rep.ByKind, func(r tokenusage.Row) bool { return r.Kind != tokenusage.KindName(tokenusage.KindTurn) }) {
		fmt.Fprintln(a.stdout)
		err = table(a.stdout, "KIND\tMODEL\tCALLS\tPROMPT\tCOMPLETION\tCACHED\t", func(w io.Writer) {
			for _, r := range rep.ByKind {
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t\n", r.Kind, r.Model, r.Calls, r.Prompt, r.Completion, r.Cached)
			}
		})
		if err != nil {
			return err
		}
	}
	if t.Estimated > 0 {
		fmt.Fprintf(a.stdout, "\n%d call(s) had no usage from the provider; their tokens were counted locally.\n", t.Estimated)
	}
	return nil
}

func sinceText(since time.Time) string {
	if since.IsZero() {
		return ""
	}
	return " since " + since.Format(time.DateOnly)
}

// table prints one right-aligned table: the header, then the rows fill writes.
func table(out io.Writer, header string, fill func(w io.Writer)) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, header)
	fill(w)
	return w.Flush()
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	tokenusage "github.com/nanobot-durable/nanobot/usage"
)

// usageCmd prints token usage by day and model, and by session, from the usage file.
func (a *app) usageCmd(_ context.Context, args []string) error {
	fs := a.flags("usage")
	days := fs.Int("days", 7, "how many days back, today included (0 = all)")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *days < 0 {
		return usageError{fmt.Errorf("usage: --days must be 0 or more, got %d", *days)}
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	store := tokenusage.Open(tokenusage.Path(config.ConfigDir(cfg.Path)))
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
		a.log.Warn("usage file has lines that do not parse; they are left out", "file", store.Path, "lines", bad)
	}
	rep := tokenusage.Summarize(recs, since, time.Local)
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if rep.Total.Calls == 0 {
		fmt.Fprintf(a.stdout, "No model calls recorded%s (%s).\n", sinceText(since), store.Path)
		return nil
	}
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "DAY\tMODEL\tTURNS\tCALLS\tPROMPT\tCOMPLETION\tCACHED\t")
	for _, r := range rep.ByDay {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", r.Day, r.Model, r.Turns, r.Calls, r.Prompt, r.Completion, r.Cached)
	}
	t := rep.Total
	fmt.Fprintf(w, "total\t\t%d\t%d\t%d\t%d\t%d\t\n", t.Turns, t.Calls, t.Prompt, t.Completion, t.Cached)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	w = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "SESSION\tTURNS\tCALLS\tPROMPT\tCOMPLETION\tCACHED\t")
	for _, r := range rep.Sessions {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", r.Session, r.Turns, r.Calls, r.Prompt, r.Completion, r.Cached)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(rep.ByKind) > 1 || (len(rep.ByKind) == 1 && rep.ByKind[0].Kind != tokenusage.KindName(tokenusage.KindTurn)) {
		fmt.Fprintln(a.stdout)
		w = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "KIND\tMODEL\tCALLS\tPROMPT\tCOMPLETION\tCACHED\t")
		for _, r := range rep.ByKind {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t\n", r.Kind, r.Model, r.Calls, r.Prompt, r.Completion, r.Cached)
		}
		if err := w.Flush(); err != nil {
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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/diskgc"
	"github.com/nanobot-durable/nanobot/pgstore"
)

// gcCmd applies the retention settings now, on this host's files and the
// database, and prints what went and what it freed.
func (a *app) gcCmd(ctx context.Context, args []string) error {
	fs := a.flags("gc")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	cfg, st, err := a.openStores(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ws := cfg.Agents.Defaults.WorkspacePath()
	rep, err := diskgc.For(cfg, st.Sessions, st.Media(cfg.Instance(), ws, true), a.log).Run(ctx)
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if encErr := enc.Encode(rep); encErr != nil {
			return encErr
		}
		return err
	}
	writeGCReport(a.stdout, rep, cfg.Retention.Ages())
	if db := embeddedTemporalDB(cfg); db != "" {
		a.compactTemporalDB(ctx, db)
	}
	return err
}

// compactTemporalDB vacuums the embedded server's database when that server
// is stopped (temporal-dev --compact-only); a running one does it at its next start.
func (a *app) compactTemporalDB(ctx context.Context, db string) {
	f, err := diskgc.ReadSQLiteFile(db)
	if err != nil {
		return // no embedded database here
	}
	port, _ := devPorts()
	bin, binErr := findDevServer()
	if answers(net.JoinHostPort("127.0.0.1", strconv.Itoa(port))) || binErr != nil || f.FreeBytes == 0 {
		fmt.Fprintf(a.stdout, "Temporal DB: %s, %s of it free pages (given back when the embedded server next starts)\n",
			diskgc.HumanBytes(f.Bytes), diskgc.HumanBytes(f.FreeBytes))
		return
	}
	out, err := exec.CommandContext(ctx, bin, "--compact-only", "--db-filename", db, "--sqlite-vacuum-free-percent", "1").CombinedOutput()
	if err != nil {
		fmt.Fprintf(a.stdout, "Temporal DB: not compacted: %s\n", oneLine(string(out)+" "+err.Error()))
		return
	}
	after, _ := diskgc.ReadSQLiteFile(db)
	fmt.Fprintf(a.stdout, "Temporal DB: vacuumed while the server is stopped, %s → %s\n", diskgc.HumanBytes(f.Bytes), diskgc.HumanBytes(after.Bytes))
}

func writeGCReport(out io.Writer, rep diskgc.Report, ages config.Ages) {
	for _, r := range rep.Removed {
		fmt.Fprintf(out, "removed %-8s %10s  %s\n", r.Kind, diskgc.HumanBytes(r.Bytes), r.What)
	}
	freed := rep.Freed()
	kinds := make([]string, 0, len(freed))
	for k := range freed {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	fmt.Fprintf(out, "Freed %s in %d items", diskgc.HumanBytes(rep.Total()), len(rep.Removed))
	for _, k := range kinds {
		fmt.Fprintf(out, "; %s %s", k, diskgc.HumanBytes(freed[k]))
	}
	fmt.Fprintf(out, ". Kept %d old items still named by unarchived messages.\n", rep.Kept)
	fmt.Fprintf(out, "Rules: media %s, temp copies %s, archived sessions %s (retention.* in the config; 0 keeps forever)\n",
		ageText(ages.Media), ageText(ages.Temp), ageText(ages.Sessions))
}

func ageText(d time.Duration) string {
	h := d.Hours()
	switch {
	case h == 0:
		return "kept forever"
	case h >= 48 && int(h)%24 == 0:
		return fmt.Sprintf("%d days", int(h)/24)
	}
	return fmt.Sprintf("%g hours", h)
}

// embeddedTemporalDB is the embedded server's database when this config uses it.
func embeddedTemporalDB(cfg *config.Config) string {
	if os.Getenv("TEMPORAL_ADDRESS") != "" {
		return ""
	}
	return diskgc.EmbeddedTemporalDB(config.ConfigDir(cfg.Path))
}

// writeDisk prints what each kind of state takes on disk; it opens the
// database without migrating it and creates nothing.
func (a *app) writeDisk(ctx context.Context, out io.Writer, cfg *config.Config) {
	fmt.Fprintln(out, "Disk:")
	var db *pgstore.DB
	if cfg.Database.URL != "" {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		if db, err = pgstore.Connect(ctx, cfg.Database.URL, a.log); err != nil {
			fmt.Fprintf(out, "  not measured: the database does not answer (%s)\n", oneLine(err.Error()))
			return
		}
		defer db.Close()
	}
	uses, err := diskgc.Usage(ctx, diskgc.PlacesOf(cfg, db, embeddedTemporalDB(cfg)))
	for _, u := range uses {
		fmt.Fprintf(out, "  %-12s %10s  %s\n", u.Kind, diskgc.HumanBytes(u.Bytes), u.Note)
	}
	if err != nil {
		fmt.Fprintf(out, "  (partly measured: %s)\n", oneLine(err.Error()))
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/stores"
)

const dbUsage = `usage: nanobot db migrate | status | import
  migrate  apply the schema migrations the database lacks (gateways and workers also do at start)
  status   list the migrations and whether the database has them
  import   copy this home's JSONL files (sessions, usage, pairing, memory history) into the database, once`

// db manages the PostgreSQL store named by database.url or NANOBOT_DATABASE_URL.
func (a *app) db(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageError{errors.New(dbUsage)}
	}
	verb := args[0]
	run, ok := map[string]func(context.Context, *config.Config) error{
		"migrate": a.dbMigrate, "status": a.dbStatus, "import": a.dbImport,
	}[verb]
	if !ok {
		return usageError{fmt.Errorf("db: unknown command %q\n%s", verb, dbUsage)}
	}
	fs := a.flags("db " + verb)
	if err := a.parse(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if cfg.Database.URL == "" {
		return fmt.Errorf("no database: set %s or database.url in %s (postgres://user:password@host:5432/database)", config.DatabaseURLVar, cfg.Path)
	}
	return run(ctx, cfg)
}

// stateLine says where the state is and, for a database, whether it answers.
func (a *app) stateLine(ctx context.Context, cfg *config.Config) string {
	if cfg.Database.URL == "" {
		return "files under " + config.ConfigDir(cfg.Path) + " (set database.url for PostgreSQL)"
	}
	where := "PostgreSQL " + pgstore.Redact(cfg.Database.URL) + " (" + cfg.Database.Source() + ")"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	db, err := pgstore.Connect(ctx, cfg.Database.URL, a.log)
	if err != nil {
		return where + ": not answering: " + oneLine(err.Error())
	}
	defer db.Close()
	states, err := db.Status(ctx)
	if err != nil {
		return where + ": answering, schema unreadable: " + oneLine(err.Error())
	}
	pending := 0
	for _, s := range states {
		if !s.Applied {
			pending++
		}
	}
	if pending > 0 {
		return fmt.Sprintf("%s: answering, %d migrations pending (nanobot db migrate)", where, pending)
	}
	return where + ": answering, schema up to date"
}

func (a *app) connectDB(ctx context.Context, cfg *config.Config) (*pgstore.DB, error) {
	db, err := pgstore.Connect(ctx, cfg.Database.URL, a.log)
	if err != nil {
		return nil, fmt.Errorf("%s: database.url: %w", cfg.Database.Source(), err)
	}
	return db, nil
}

func (a *app) dbMigrate(ctx context.Context, cfg *config.Config) error {
	db, err := a.connectDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	done, err := db.Migrate(ctx)
	for _, m := range done {
		fmt.Fprintf(a.stdout, "applied %04d_%s\n", m.Version, m.Name)
	}
	if err != nil {
		return err
	}
	if len(done) == 0 {
		fmt.Fprintf(a.stdout, "%s is up to date\n", db.Where())
	}
	return nil
}

func (a *app) dbStatus(ctx context.Context, cfg *config.Config) error {
	db, err := a.connectDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	states, err := db.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Database: %s (%s)\n", db.Where(), cfg.Database.Source())
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATE")
	pending := 0
	for _, s := range states {
		state := "pending"
		switch {
		case s.Unknown:
			state = "applied " + s.AppliedAt.Local().Format("2006-01-02 15:04") + " by a newer nanobot (this build does not know it)"
		case s.Applied:
			state = "applied " + s.AppliedAt.Local().Format("2006-01-02 15:04")
		default:
			pending++
		}
		fmt.Fprintf(tw, "%04d\t%s\t%s\n", s.Version, s.Name, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if pending > 0 {
		fmt.Fprintf(a.stdout, "%d pending: `nanobot db migrate` applies them (so does any gateway or worker at start)\n", pending)
	}
	return nil
}

func (a *app) dbImport(ctx context.Context, cfg *config.Config) error {
	db, err := pgstore.Open(ctx, cfg.Database.URL, a.log)
	if err != nil {
		return fmt.Errorf("%s: database.url: %w", cfg.Database.Source(), err)
	}
	defer db.Close()
	rep, err := stores.Import(ctx, cfg, db, a.log)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Imported %s into %s:\n%s", config.ConfigDir(cfg.Path), db.Where(), rep)
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/workers"
)

// gateway runs the worker (and, as they arrive, the channels and
// schedules) until SIGINT/SIGTERM.
func (a *app) gateway(ctx context.Context, args []string) error {
	return a.serveWorkers(ctx, "gateway", args)
}

// worker runs only the workers, to scale out against a Temporal cluster.
func (a *app) worker(ctx context.Context, args []string) error {
	return a.serveWorkers(ctx, "worker", args)
}

func (a *app) serveWorkers(ctx context.Context, name string, args []string) error {
	fs := a.flags(name)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	m := cfg.ActiveModel()
	if _, err := providers.Resolve(cfg, m); err != nil {
		if !errors.Is(err, providers.ErrNoModel) {
			return err
		}
		fmt.Fprintf(a.stdout, "! %v\n  Turns will fail with this message until it is set (config: %s).\n", err, cfg.Path)
	}
	r, err := a.startRuntime(ctx, cfg, workers.Options{Turns: true, Models: true})
	if err != nil {
		return err
	}
	defer r.Close()
	how := "external"
	if r.conn.Embedded {
		how = "embedded temporal-dev, started by this process"
	}
	fmt.Fprintf(a.stdout, "🐈 nanobot %s running\n", name)
	fmt.Fprintf(a.stdout, "Temporal: %s (namespace %s, %s)\n", r.conn.Address, r.conn.Namespace, how)
	if r.conn.UIURL != "" {
		fmt.Fprintf(a.stdout, "Web UI:   %s\n", r.conn.UIURL)
	}
	fmt.Fprintf(a.stdout, "Model:    %s\nWorkspace: %s\nPress Ctrl-C to stop.\n", m.Model, cfg.Agents.Defaults.WorkspacePath())
	<-ctx.Done()
	fmt.Fprintln(a.stdout, "stopping…")
	return nil
}

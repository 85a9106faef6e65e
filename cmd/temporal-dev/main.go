// Command temporal-dev runs a local Temporal server on SQLite (or, with --db, PostgreSQL) with
// the Web UI, accepting the flags of `temporal server start-dev`, so nanobot needs no Temporal CLI.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/server/common/log"
)

// bootstrapTimeout bounds how long we wait for the frontend to serve namespaces after Start.
const bootstrapTimeout = 60 * time.Second

func main() {
	startPprof()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the process exit code: 0 after a clean stop, 2 for bad flags, 1 for other failures.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "temporal-dev: %v\n", err)
		return 2
	}
	if o.CompactOnly {
		if err := compactOnly(o, stdout, slog.New(slog.NewTextHandler(stderr, nil))); err != nil {
			_, _ = fmt.Fprintf(stderr, "temporal-dev: %v\n", err)
			return 1
		}
		return 0
	}
	tuneGC()

	serverLogger, err := newServerLogger(o)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "temporal-dev: %v\n", err)
		return 1
	}
	logger := log.NewSlogLogger(serverLogger.Logger)

	// Signals arriving during startup are honoured once startup finishes or fails.
	sigCh := make(chan os.Signal, 2)
	signal.Notify(sigCh, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigCh)

	stop, err := start(o, serverLogger, logger, stdout)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "temporal-dev: %v\n", err)
		return 1
	}

	sig := <-sigCh
	logger.Info("shutting down", "signal", sig.String())
	serverLogger.quietShutdown()
	// A second signal forces an immediate exit if a clean stop hangs.
	go func() {
		<-sigCh
		_, _ = fmt.Fprintln(stderr, "temporal-dev: forced exit")
		os.Exit(1)
	}()
	if err := stop(); err != nil {
		_, _ = fmt.Fprintf(stderr, "temporal-dev: stopping: %v\n", err)
		return 1
	}
	return 0
}

// start brings up the server, bootstraps namespaces and the UI, prints the ready line, and
// returns a function that stops everything in reverse order.
func start(o *options, serverLogger *serverLogger, logger *slog.Logger, stdout io.Writer) (func() error, error) {
	ep, err := resolveEndpoints(o)
	if err != nil {
		return nil, err
	}
	frontendTLS, err := loadFrontendTLS(o)
	if err != nil {
		return nil, err
	}
	srv, err := newTemporalServer(o, ep, frontendTLS, serverLogger.Logger, logger)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		serverLogger.quietShutdown()
		_ = srv.Stop()
		return nil, fmt.Errorf("starting temporal server: %w", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), bootstrapTimeout)
	defer cancel()
	if err := bootstrap(ctx, o, ep.frontendDial, frontendTLS, logger); err != nil {
		serverLogger.quietShutdown()
		_ = srv.Stop()
		return nil, fmt.Errorf("bootstrapping server: %w", err)
	}

	var ui *webUI
	uiDesc := "off (headless)"
	if !o.Headless {
		uiOpts := uiOptions{frontend: ep.frontendDial, tls: frontendTLS.uiTLS(), hosts: newAllowedHosts(o.UIIP, o.UIAllowedHosts, "--ui-allowed-host")}
		if ui, err = startUI(o.UIIP, o.UIPort, uiOpts, logger); err != nil {
			serverLogger.quietShutdown()
			_ = srv.Stop()
			return nil, fmt.Errorf("starting UI: %w", err)
		}
		uiDesc = fmt.Sprintf("http://%s", joinHostPort(dialHost(o.UIIP), o.UIPort))
	}

	dbDesc := "memory"
	switch {
	case o.Postgres != nil:
		dbDesc = o.Postgres.redacted
	case o.DBFilename != "":
		dbDesc = o.DBFilename
	}
	_, _ = fmt.Fprintf(stdout, "temporal-dev: server %s, ui %s, db %s\n", joinHostPort(o.IP, o.Port), uiDesc, dbDesc)
	if o.ReleaseStartupMemory {
		go releaseStartupMemory(logger, o.DropStartupPages) // after the ready line: clients need not wait for it
	}

	return func() error {
		ui.stop()
		if err := srv.Stop(); err != nil {
			return fmt.Errorf("stopping temporal server: %w", err)
		}
		return nil
	}, nil
}

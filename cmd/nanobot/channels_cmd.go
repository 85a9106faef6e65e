package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// channelsCmd is `nanobot channels status` and `nanobot channels login NAME`.
func (a *app) channelsCmd(ctx context.Context, args []string) error {
	fs := a.flags("channels")
	force := fs.Bool("force", false, "login: log in again even when a session is stored")
	fs.Usage = func() { fmt.Fprintln(a.stderr, "usage: nanobot channels status | login NAME [--force]") }
	verb, rest := "status", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, rest = args[0], args[1:]
	}
	var name string
	if verb == "login" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	if err := a.parse(fs, rest); err != nil {
		return err
	}
	switch {
	case verb == "status":
		return a.channelsStatus()
	case verb == "login" && name != "":
		return a.channelsLogin(ctx, name, *force)
	}
	return usageError{fmt.Errorf("channels: want status | login NAME [--force]")}
}

// channelsStatus lists every channel of this build: enabled in the config,
// its credentials present, and, from the running gateways' status files,
// whether it is connected and when its platform last sent it something.
func (a *app) channelsStatus() error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	running, err := channels.ReadStatuses(config.ConfigDir(cfg.Path), now)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tENABLED\tCREDENTIALS\tCONNECTED\tLAST EVENT")
	for _, s := range channels.Specs() {
		if s.New == nil {
			continue // the terminal: `nanobot agent`
		}
		enabled := s.Enabled != nil && s.Enabled(cfg)
		creds := "yes"
		if s.Missing != nil {
			if miss := s.Missing(cfg); len(miss) > 0 {
				creds = "missing " + strings.Join(miss, ", ")
			}
		}
		connected, last := runningState(s.Name, running)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, yesNo(enabled), creds, connected, since(last, now))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(running) == 0 {
		fmt.Fprintln(a.stdout, "No gateway is running (start one with `nanobot gateway`).")
	}
	return nil
}

// runningState merges what every running gateway says of a channel: it is
// connected when one of them holds it connected.
func runningState(name string, running []channels.ProcessStatus) (string, time.Time) {
	connected, last := "-", time.Time{}
	for _, p := range running {
		for _, st := range p.Channels {
			if st.Name != name {
				continue
			}
			switch {
			case st.Connected == nil && connected != "yes":
				connected = "running"
			case st.Connected != nil && *st.Connected:
				connected = "yes"
			case st.Connected != nil && connected == "-":
				connected = "no"
			}
			if st.LastEvent.After(last) {
				last = st.LastEvent
			}
		}
	}
	return connected, last
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func since(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%s (%s ago)", t.Local().Format("2006-01-02 15:04:05"), now.Sub(t).Round(time.Second))
}

// channelsLogin runs a channel's interactive login (a QR code to scan).
func (a *app) channelsLogin(ctx context.Context, name string, force bool) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	s, ok := channels.Lookup(name)
	if !ok {
		return usageError{fmt.Errorf("channels login: unknown channel %q (this build has %s)", name, strings.Join(channels.Known(), ", "))}
	}
	if s.Login == nil {
		return fmt.Errorf("channels login: %s needs no login: its credentials are in channels.%s of %s", name, name, cfg.Path)
	}
	fmt.Fprintf(a.stdout, "🐈 %s login\n\n", name)
	return s.Login(ctx, channels.LoginDeps{Config: cfg, Home: config.ConfigDir(cfg.Path), Out: a.stdout, Force: force, Log: a.log})
}

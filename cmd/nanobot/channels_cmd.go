package main

import (
	"context"
	"encoding/json"
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
	asJSON := fs.Bool("json", false, "status: print JSON")
	fs.Usage = func() { fmt.Fprintln(a.stderr, "usage: nanobot channels status [--json] | login NAME [--force]") }
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
		return a.channelsStatus(*asJSON)
	case verb == "login" && name != "":
		return a.channelsLogin(ctx, name, *force)
	}
	return usageError{fmt.Errorf("channels: want status | login NAME [--force]")}
}

// channelRow is one channel in `nanobot channels status`.
type channelRow struct {
	Channel   string    `json:"channel"`
	Enabled   bool      `json:"enabled"`
	Missing   []string  `json:"missing,omitempty"` // config keys it cannot start without
	Connected string    `json:"connected"`         // yes, no, running (cannot tell) or - (no gateway runs it)
	LastEvent time.Time `json:"lastEvent,omitzero"`
}

// channelsStatus lists every channel of this build: enabled in the config,
// its credentials present, and, from the running gateways' status files,
// whether it is connected and when its platform last sent it something.
func (a *app) channelsStatus(asJSON bool) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	running, err := channels.ReadStatuses(config.ConfigDir(cfg.Path), now)
	if err != nil {
		return err
	}
	var rows []channelRow
	for _, s := range channels.Specs() {
		if s.New == nil {
			continue // the terminal: `nanobot agent`
		}
		row := channelRow{Channel: s.Name, Enabled: s.Enabled != nil && s.Enabled(cfg)}
		if s.Missing != nil {
			row.Missing = s.Missing(cfg)
		}
		row.Connected, row.LastEvent = runningState(s.Name, running)
		rows = append(rows, row)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tENABLED\tCREDENTIALS\tCONNECTED\tLAST EVENT")
	for _, r := range rows {
		creds := "yes"
		if len(r.Missing) > 0 {
			creds = "missing " + strings.Join(r.Missing, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Channel, yesNo(r.Enabled), creds, r.Connected, since(r.LastEvent, now))
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

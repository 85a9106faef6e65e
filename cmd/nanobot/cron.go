package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nanobot-durable/nanobot/cron"
	"github.com/nanobot-durable/nanobot/protocol"
)

const cronUsage = `usage: nanobot cron list
       nanobot cron add --message TEXT (--every SECONDS | --cron EXPR [--tz ZONE] | --at ISO-TIME) [--name NAME] [--channel CH --to CHAT_ID]
       nanobot cron remove ID
       nanobot cron run ID`

// cron manages cron jobs; they live in Temporal as schedules cron/<id>,
// so list shows what Temporal will run and when.
func (a *app) cron(ctx context.Context, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageError{fmt.Errorf("cron: want list | add | remove ID | run ID\n%s", cronUsage)}
	}
	verb, args := args[0], args[1:]
	fs := a.flags("cron " + verb)
	fs.Usage = func() { fmt.Fprintln(a.stderr, cronUsage) }
	var (
		name, message, expr, tz, at, channel, to string
		every                                    int
	)
	if verb == "add" {
		fs.StringVar(&name, "name", "", "job name (default: the message's first 30 characters)")
		fs.StringVar(&message, "message", "", "what the agent is told when the job fires")
		fs.IntVar(&every, "every", 0, "interval in seconds")
		fs.StringVar(&expr, "cron", "", "cron expression (5 fields)")
		fs.StringVar(&tz, "tz", "", "IANA time zone for --cron and --at (default agents.defaults.timezone)")
		fs.StringVar(&at, "at", "", "ISO time of a one-time job")
		fs.StringVar(&channel, "channel", "", "the channel replies go to (telegram, slack, …)")
		fs.StringVar(&to, "to", "", "the chat ID replies go to")
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	rest := fs.Args()
	switch {
	case (verb == "list" || verb == "add") && len(rest) == 0:
	case (verb == "remove" || verb == "run") && len(rest) == 1:
	default:
		return usageError{fmt.Errorf("cron: want list | add | remove ID | run ID\n%s", cronUsage)}
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	tc, err := connectTemporal(ctx, cfg, a.log)
	if err != nil {
		return err
	}
	defer tc.Close()
	svc := &cron.Service{Client: tc.Client, Instance: cfg.Instance()}
	zone := cfg.Agents.Defaults.Timezone
	if cron.ValidateTZ(zone) != nil {
		zone = "UTC"
	}
	switch verb {
	case "list":
		jobs, err := svc.List(ctx)
		if err != nil {
			return err
		}
		a.printJobs(jobs, zone)
	case "add":
		job, err := cliJob(name, message, expr, tz, at, channel, to, every, zone)
		if err != nil {
			return usageError{err}
		}
		created, err := svc.Add(ctx, job)
		if err != nil {
			return fmt.Errorf("cron add: %w", err)
		}
		fmt.Fprintf(a.stdout, "Created job '%s' (id: %s)\n", created.Name, created.ID)
	case "remove":
		outcome, err := svc.Remove(ctx, rest[0])
		if err != nil {
			return err
		}
		switch outcome {
		case cron.Removed:
			fmt.Fprintf(a.stdout, "Removed job %s\n", rest[0])
		case cron.Protected:
			return fmt.Errorf("cannot remove job %s: it is a protected system job", rest[0])
		default:
			return fmt.Errorf("job %s not found", rest[0])
		}
	case "run":
		if err := svc.Run(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "Triggered job %s\n", rest[0])
	}
	return nil
}

// cliJob builds a job from the add flags; replies go to --channel/--to.
func cliJob(name, message, expr, tz, at, channel, to string, every int, zone string) (cron.Job, error) {
	job := cron.Job{Name: name, Message: message, Expr: expr, Every: time.Duration(every) * time.Second}
	if (channel == "") != (to == "") {
		return job, fmt.Errorf("give --channel and --to together")
	}
	if channel == "" {
		channel, to = "cli", "direct"
	}
	job.Route = protocol.Route{Channel: channel, ChatID: to}
	if tz != "" && expr == "" && at == "" {
		return job, fmt.Errorf("--tz can only be used with --cron or --at")
	}
	if tz == "" {
		tz = zone
	}
	if expr != "" {
		job.TZ = tz
	}
	if at != "" {
		when, err := cron.ParseAt(at, tz)
		if err != nil {
			return job, err
		}
		job.At = when
	}
	return job, nil
}

func (a *app) printJobs(jobs []cron.Job, zone string) {
	if len(jobs) == 0 {
		fmt.Fprintln(a.stdout, "No scheduled jobs.")
		return
	}
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tSCHEDULE\tNEXT RUN\tSESSION\tSTATE")
	for _, j := range jobs {
		next := "-"
		if len(j.Next) > 0 {
			next = cron.FormatTime(j.Next[0], zone)
		}
		state := "active"
		switch {
		case j.Paused:
			state = "paused"
		case j.Protected:
			state = "system"
		}
		session := j.SessionKey
		if session == "" {
			session = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.Name, j.Timing(zone), next, session, state)
	}
	_ = w.Flush()
}

package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
)

// soakSample is one minute's look at a component (summed over its processes).
type soakSample struct {
	at, age                     time.Duration // age: since the component was last (re)started
	pid, rssKB, pssKB, fds, gor int           // gor: goroutines from pprof, or threads where there is none
}

// sampleProc reads RSS, PSS, open files and threads from /proc (summed over
// pids) and goroutines from the first pid's pprof endpoint when it has one.
func sampleProc(at, age time.Duration, pids []int, pprof string) soakSample {
	s := soakSample{at: at, age: age}
	if len(pids) > 0 {
		s.pid = pids[0]
	}
	for _, pid := range pids {
		s.rssKB += procField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
		s.pssKB += procField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
		if pprof == "" {
			s.gor += procField(fmt.Sprintf("/proc/%d/status", pid), "Threads:")
		}
		if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
			s.fds += len(fds)
		}
	}
	if pprof != "" {
		s.gor = -1
		if resp, err := http.Get("http://" + pprof + "/debug/pprof/goroutine?debug=1"); err == nil {
			head := make([]byte, 64)
			n, _ := io.ReadFull(resp.Body, head)
			_ = resp.Body.Close()
			if _, after, ok := strings.Cut(string(head[:n]), "total "); ok {
				s.gor, _ = strconv.Atoi(strings.Fields(after)[0])
			}
		}
	}
	return s
}

// procField is the number after name in a /proc file of "Name: value kB" lines.
func procField(path, name string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// soakDisk measures the disk the soak's components use.
type soakDisk struct {
	root  string
	homes []string
	pgDir string
	admin string // the private cluster's URL, for pg_database_size
}

type soakDiskSample struct {
	at                  time.Duration
	homes, pgDir, pgDBs int64 // bytes: the three homes, the cluster's directory, its databases (nanobot's and Temporal's)
}

func (d soakDisk) sample(at time.Duration) soakDiskSample {
	s := soakDiskSample{at: at, pgDir: dirBytes(d.pgDir), pgDBs: -1}
	for _, h := range d.homes {
		s.homes += dirBytes(h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, d.admin); err == nil {
		_ = conn.QueryRow(ctx, `SELECT sum(pg_database_size(datname))::bigint FROM pg_database WHERE NOT datistemplate`).Scan(&s.pgDBs)
		_ = conn.Close(ctx)
	}
	return s
}

// soakResults is what the soak counted once the traffic stopped.
type soakResults struct {
	ledger       map[string]soakSent
	tags         []string
	answers      soakTally
	gatewayKills []time.Time
	execs        map[string]int // counter.txt lines: tag, appr-tag, sub-tag
	cronRuns     int            // ScheduledTurn runs completed
	cronOpen     int            // still running
	cronFailed   int            // closed other than completed
	cronAnswers  int
}

func collectSoak(t *testing.T, c client.Client, slack *slackpeer.Peer, dc *discordpeer.Peer, webBase string, ledger *soakLedger,
	w *testenv.Home, cronJob string, gatewayKills []time.Time) soakResults {
	tags, sent := ledger.all()
	r := soakResults{ledger: sent, tags: tags, answers: soakTally{}, gatewayKills: gatewayKills, execs: map[string]int{}}
	slackTally, cron := slackAnswers(slack)
	dcTally, _ := discordAnswers(dc, discordDM)
	for _, tally := range []soakTally{slackTally, dcTally, webAnswers(t, webBase, tags, sent)} {
		for tag, words := range tally {
			if r.answers[tag] == nil {
				r.answers[tag] = map[string]int{}
			}
			for word, n := range words {
				r.answers[tag][word] += n
			}
		}
	}
	r.cronAnswers = cron
	data, _ := os.ReadFile(filepath.Join(w.Workspace, "counter.txt"))
	for _, line := range strings.Fields(string(data)) {
		r.execs[line]++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000,
		Query: fmt.Sprintf("WorkflowType = '%s' AND WorkflowId STARTS_WITH '%s-'", protocol.ScheduledTurnWorkflowName, protocol.CronScheduleID(cronJob))})
	if err == nil {
		for _, e := range resp.GetExecutions() {
			switch e.GetStatus() {
			case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
				r.cronRuns++
			case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
				r.cronOpen++
			default:
				r.cronFailed++
			}
		}
	} else {
		r.cronOpen = -1 // Temporal did not answer: not settled
	}
	return r
}

// outcome is a message's fate; a Discord message sent in the 3 s before a
// gateway kill and never answered is "dropped": Discord keeps no backlog for
// a gateway that identifies anew, so it never reached nanobot.
func (r soakResults) outcome(tag string) string {
	s := r.ledger[tag]
	o := soakOutcome(s.kind, r.answers[tag])
	if o != "lost" {
		return o
	}
	if s.ambiguous && len(r.answers[tag]) == 0 {
		return "unsent"
	}
	if s.channel == "discord" {
		for _, k := range r.gatewayKills {
			if d := k.Sub(s.at); d >= 0 && d < 3*time.Second {
				return "dropped"
			}
		}
	}
	return o
}

// count is how many messages had this outcome.
func (r soakResults) count(outcome string) int {
	n := 0
	for _, tag := range r.tags {
		if r.outcome(tag) == outcome {
			n++
		}
	}
	return n
}

// execsMissing counts the answered messages whose exec left no line in counter.txt.
func (r soakResults) execsMissing() int {
	n := 0
	for _, tag := range r.tags {
		line := map[string]string{"tools": tag, "approve": "appr-" + tag, "spawn": "sub-" + tag}[r.ledger[tag].kind]
		if r.outcome(tag) == "once" && r.execs[line] == 0 {
			n++
		}
	}
	return n
}

// unanswered are the tags of the messages counted lost so far, with the answers each got.
func (r soakResults) unanswered() []string {
	var out []string
	for _, tag := range r.tags {
		if r.outcome(tag) == "lost" {
			out = append(out, fmt.Sprintf("%s(%s %s: %v)", tag, r.ledger[tag].channel, r.ledger[tag].kind, r.answers[tag]))
		}
	}
	return out
}

// settled: every message answered, and every cron run closed and answered.
func (r soakResults) settled() bool {
	return r.count("lost") == 0 && r.cronOpen == 0 && r.cronAnswers >= r.cronRuns
}

// report is the table (Markdown, to paste into a note) and what breaks the
// promise: a message lost or answered twice, an exec run twice.
func (r soakResults) report(procs []*soakProc, perProc int, elapsed time.Duration, disk []soakDiskSample) (string, []string) {
	type row struct{ in, once, twice, lost, dropped, unsent int }
	rows := map[string]*row{}
	var keys []string
	total := &row{}
	for _, tag := range r.tags {
		s := r.ledger[tag]
		key := s.channel + " " + s.kind
		if rows[key] == nil {
			rows[key] = &row{}
			keys = append(keys, key)
		}
		for _, x := range []*row{rows[key], total} {
			x.in++
			switch r.outcome(tag) {
			case "once":
				x.once++
			case "twice":
				x.twice++
			case "lost":
				x.lost++
			case "dropped":
				x.dropped++
			case "unsent":
				x.unsent++
			}
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "\nsoak %s, every component killed %d times\n\n", elapsed.Round(time.Second), perProc)
	b.WriteString("| traffic | in | answered once | twice | lost | dropped by Discord at a gateway kill | web POST failed, never taken |\n|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		x := rows[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", k, x.in, x.once, x.twice, x.lost, x.dropped, x.unsent)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | %d |\n", total.in, total.once, total.twice, total.lost, total.dropped, total.unsent)
	cronLost, cronTwice := max(0, r.cronRuns-r.cronAnswers), max(0, r.cronAnswers-r.cronRuns)
	fmt.Fprintf(&b, "| cron job firings (every 30 s) | %d | %d | %d | %d | runs failed: %d | still running: %d |\n",
		r.cronRuns, min(r.cronRuns, r.cronAnswers), cronTwice, cronLost, r.cronFailed, r.cronOpen)
	execOnce, execTwice := 0, 0
	for _, n := range r.execs {
		if n == 1 {
			execOnce++
		} else {
			execTwice++
		}
	}
	fmt.Fprintf(&b, "\nexecs (turns', approved ones, subagents' — one line each in counter.txt): run once %d, twice %d, not run though answered %d (a kill mid-exec reports an unknown outcome to the model instead of running it again)\n\n",
		execOnce, execTwice, r.execsMissing())

	b.WriteString("| process | kills | minute: RSS/PSS MB, goroutines (threads for temporal-dev, processes for postgres), open files | trend (mean of the first vs the last third of the samples taken a minute or more after a start) |\n|---|---|---|---|\n")
	for _, p := range procs {
		var cells []string
		for _, s := range p.samples {
			cells = append(cells, fmt.Sprintf("%d: %.0f/%.0f %d %d", int(s.at.Minutes()), float64(s.rssKB)/1024, float64(s.pssKB)/1024, s.gor, s.fds))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", p.name, p.kills, strings.Join(cells, "; "), trend(p.samples))
	}
	if len(disk) >= 2 {
		first, last := disk[0], disk[len(disk)-1]
		hours := (last.at - first.at).Hours()
		perHour := func(a, b int64) string { return fmt.Sprintf("%+.2f MB/hour", float64(b-a)/1e6/hours) }
		b.WriteString("\n| disk | at start | at end | growth |\n|---|---|---|---|\n")
		fmt.Fprintf(&b, "| the three homes (config, workspace) | %.2f MB | %.2f MB | %s |\n", float64(first.homes)/1e6, float64(last.homes)/1e6, perHour(first.homes, last.homes))
		fmt.Fprintf(&b, "| PostgreSQL databases (nanobot's, Temporal's) | %.1f MB | %.1f MB | %s |\n", float64(first.pgDBs)/1e6, float64(last.pgDBs)/1e6, perHour(first.pgDBs, last.pgDBs))
		fmt.Fprintf(&b, "| PostgreSQL's directory (with WAL) | %.1f MB | %.1f MB | %s |\n", float64(first.pgDir)/1e6, float64(last.pgDir)/1e6, perHour(first.pgDir, last.pgDir))
	}
	var failures []string
	for what, n := range map[string]int{"messages lost": total.lost, "messages answered twice": total.twice, "execs run twice": execTwice,
		"cron firings lost": cronLost, "cron firings answered twice": cronTwice} {
		if n > 0 {
			failures = append(failures, fmt.Sprintf("%s: %d", what, n))
		}
	}
	for _, p := range procs {
		if p.kills < perProc {
			failures = append(failures, fmt.Sprintf("%s killed %d times, not %d", p.name, p.kills, perProc))
		}
	}
	return b.String(), failures
}

// trend compares the mean of the first third of the warmed-up samples (a
// minute or more after the component's last start) with the last third's,
// across restarts: "flat" within 30%, else the resources that grew.
func trend(all []soakSample) string {
	var samples []soakSample
	for _, s := range all {
		if s.age >= time.Minute {
			samples = append(samples, s)
		}
	}
	third := len(samples) / 3
	if third == 0 {
		return "too few samples"
	}
	mean := func(ss []soakSample, f func(soakSample) int) float64 {
		sum := 0
		for _, s := range ss {
			sum += f(s)
		}
		return float64(sum) / float64(len(ss))
	}
	var grew []string
	for _, r := range []struct {
		name string
		f    func(soakSample) int
	}{{"rss", func(s soakSample) int { return s.rssKB }}, {"pss", func(s soakSample) int { return s.pssKB }},
		{"goroutines", func(s soakSample) int { return s.gor }}, {"fds", func(s soakSample) int { return s.fds }}} {
		a, b := mean(samples[:third], r.f), mean(samples[len(samples)-third:], r.f)
		if a > 0 && b > 1.3*a {
			grew = append(grew, fmt.Sprintf("%s %.0f→%.0f", r.name, a, b))
		}
	}
	if len(grew) == 0 {
		return "flat"
	}
	return "GROWTH: " + strings.Join(grew, ", ")
}

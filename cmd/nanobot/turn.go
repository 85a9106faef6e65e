package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/nanobot-durable/nanobot/inspect"
	"github.com/nanobot-durable/nanobot/protocol"
)

const turnUsage = `usage: nanobot turn list [--session KEY] [--limit N]
       nanobot turn show [--run RUN_ID] [--json] <session key | workflow id>`

// turn lists turns from Temporal's visibility store and shows one from its history.
func (a *app) turn(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageError{errors.New(turnUsage)}
	}
	switch args[0] {
	case "list":
		return a.turnList(ctx, args[1:])
	case "show":
		return a.turnShow(ctx, args[1:])
	}
	return usageError{fmt.Errorf("turn: unknown subcommand %q\n%s", args[0], turnUsage)}
}

// inspectConn is a client for reading turns: it never starts a server.
type inspectConn struct {
	client.Client
	ns, ui string
	// instance is the config's gateway.instance: only its turns are listed.
	instance protocol.Instance
}

func (a *app) connectToInspect(ctx context.Context) (*inspectConn, error) {
	ns := envOr("TEMPORAL_NAMESPACE", "default")
	addr, ui := os.Getenv("TEMPORAL_ADDRESS"), os.Getenv("TEMPORAL_UI_URL")
	if addr == "" {
		port, uiPort := devPorts()
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if ui == "" {
			ui = fmt.Sprintf("http://127.0.0.1:%d", uiPort)
		}
	}
	if !answers(addr) {
		return nil, fmt.Errorf("Temporal is not running at %s (start nanobot gateway, or set TEMPORAL_ADDRESS)", addr)
	}
	c, err := dial(ctx, addr, ns, a.log, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s: %w", addr, err)
	}
	inst := protocol.DefaultInstance
	if cfg, err := a.loadConfig(); err == nil {
		inst = cfg.Instance()
	}
	return &inspectConn{Client: c, ns: ns, ui: ui, instance: inst}, nil
}

func (a *app) turnList(ctx context.Context, args []string) error {
	fs := a.flags("turn list")
	session := fs.String("session", "", "only this session's turns (channel:chat_id)")
	limit := fs.Int("limit", 20, "at most this many turns, newest first")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *limit < 1 {
		return usageError{fmt.Errorf("turn list: --limit must be at least 1, got %d", *limit)}
	}
	c, err := a.connectToInspect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	query := fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s'", protocol.TurnWorkflowName, c.instance.TaskQueue())
	if *session != "" {
		query += fmt.Sprintf(" AND WorkflowId = '%s'", strings.ReplaceAll(c.instance.TurnWorkflowID(*session), "'", "''"))
	}
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "STARTED\tSTATUS\tDURATION\tWORKFLOW ID\tRUN ID\tMODEL\tSTOP\tTOKENS")
	shown := 0
	var token []byte
	dc := converter.GetDefaultDataConverter()
	for shown < *limit {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: c.ns, Query: query, PageSize: int32(min(*limit, 100)), NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list turns: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			if shown == *limit {
				break
			}
			shown++
			start := e.GetStartTime().AsTime()
			d := "-"
			if ct := e.GetCloseTime(); ct != nil && ct.IsValid() && !ct.AsTime().IsZero() {
				d = ct.AsTime().Sub(start).Round(time.Millisecond).String()
			}
			memo := map[string]string{}
			for k, p := range e.GetMemo().GetFields() {
				var v any
				if dc.FromPayload(p, &v) == nil {
					memo[k] = fmt.Sprint(v)
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", start.Local().Format("2006-01-02 15:04:05"), statusName(e.GetStatus()), d,
				e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), dash(memo["model"]), dash(memo["stop_reason"]), dash(memo["tokens"]))
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if shown == 0 {
		fmt.Fprintln(a.stdout, "No turns found.")
	}
	return nil
}

func (a *app) turnShow(ctx context.Context, args []string) error {
	fs := a.flags("turn show")
	runID := fs.String("run", "", "a run of the workflow (default: the latest)")
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	// The target may come before or after the flags.
	var target string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if target == "" && fs.NArg() == 1 {
		target = fs.Arg(0)
	} else if fs.NArg() > 0 || target == "" {
		return usageError{errors.New(turnUsage)}
	}
	c, err := a.connectToInspect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	id := target
	if !strings.Contains(target, "/") {
		id = c.instance.TurnWorkflowID(target)
	}
	t, st, err := inspect.Load(ctx, c, id, *runID)
	if errors.Is(err, inspect.ErrNoTurn) {
		return fmt.Errorf("no turn %s (try nanobot turn list)", id)
	}
	if err != nil {
		return err
	}
	if t.Status == "running" && t.Current == "" {
		a.log.Warn("the running turn did not answer the state query (no worker?)", "workflow", id)
	}
	if *asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*inspect.Turn
			Waiting *protocol.ApprovalRequest `json:"waiting,omitempty"`
		}{t, st.Waiting})
	}
	if err := inspect.Render(a.stdout, t, inspect.Options{UIURL: c.ui, Namespace: c.ns, Location: time.Local}); err != nil {
		return err
	}
	if w := st.Waiting; w != nil {
		_, err := fmt.Fprintf(a.stdout, "Waiting:  %s\n          answer in the chat: %s %s, or %s %s [reason]\n",
			waitingLine(*w, time.Now()), protocol.ApproveCommand, w.ID, protocol.DenyCommand, w.ID)
		return err
	}
	return nil
}

// waitingLine is the request a turn waits on, as the Web UI's details say it.
func waitingLine(w protocol.ApprovalRequest, now time.Time) string {
	return w.WaitingLine(now.Sub(w.AskedAt))
}

func statusName(s enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"), "_", " "))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

package integration

import (
	"fmt"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// prodCosts are the production way's per-turn costs under B4 (PostgreSQL store, Temporal on
// PostgreSQL): what docs/capacity.md takes as its inputs.
type prodCosts struct {
	store, temporal pgCounters
	gwCPU, devCPU   float64
}

// shapeCosts are one turn shape's costs, run one turn at a time through the gateway on SQLite Temporal.
type shapeCosts struct {
	turns          int
	events, bytes  float64 // the last turn's history
	gwCPU, devCPU  float64 // CPU-ms per turn
	gwPid, devPid  int
	gw0, dev0      float64
	lastID, lastRn string
}

// startCosts notes the two processes' CPU before a shape's turns.
func startCosts(gwPid, devPid int) *shapeCosts {
	return &shapeCosts{gwPid: gwPid, devPid: devPid, gw0: cpuMS(gwPid), dev0: cpuMS(devPid)}
}

// turn counts one turn and remembers its run, whose history stands for the shape.
func (c *shapeCosts) turn(run client.WorkflowRun) {
	c.turns++
	c.lastID, c.lastRn = run.GetID(), run.GetRunID()
}

// finish takes the CPU used since startCosts and the last turn's history.
func (c *shapeCosts) finish(t *testing.T, dev *testenv.DevServer) {
	n := float64(max(c.turns, 1))
	c.gwCPU, c.devCPU = (cpuMS(c.gwPid)-c.gw0)/n, (cpuMS(c.devPid)-c.dev0)/n
	if c.lastID != "" {
		c.events = float64(len(testenv.History(t, dev.Client, c.lastID, c.lastRn).Events))
		c.bytes = float64(historyBytes(t, dev.Client, c.lastID, c.lastRn))
	}
}

func (c *shapeCosts) String() string {
	return fmt.Sprintf("%.0f history events, %.1f KiB; CPU-ms: gateway %.1f, temporal-dev %.1f", c.events, c.bytes/1024, c.gwCPU, c.devCPU)
}

// costRows print the per-turn costs docs/capacity.md takes as inputs.
func costRows(b1, b2 *shapeCosts, def b4Result, prod *prodCosts) []benchRow {
	rows := []benchRow{
		{"C", "per-turn cost, 1-iteration turn (B1, one at a time, SQLite Temporal)", b1.String(), "-", "-", "", ""},
		{"C", "per-turn cost, 5 iterations and 10 tool calls (B2)", b2.String(), "-", "-", "", ""},
		{"C", "… per extra iteration (B2 − B1) / 4", fmt.Sprintf("%.1f history events, %.2f KiB; CPU-ms: gateway %.1f, temporal-dev %.1f",
			(b2.events-b1.events)/4, (b2.bytes-b1.bytes)/4/1024, (b2.gwCPU-b1.gwCPU)/4, (b2.devCPU-b1.devCPU)/4), "-", "-", "", ""},
	}
	if def.tps > 0 { // B4 ran
		rows = append(rows,
			benchRow{"C", "idle cost (no turns)", fmt.Sprintf("CPU-ms per second: gateway %.2f, temporal-dev %.2f", def.idleGwCPU, def.idleDevCPU), "-", "-", "", ""},
			benchRow{"C", "per turn under B4, file store + SQLite Temporal", fmt.Sprintf("CPU-ms: gateway %.1f, temporal-dev %.1f", def.gwCPU, def.devCPU), "-", "-", "", ""})
	}
	if prod != nil {
		rows = append(rows,
			benchRow{"C", "per turn under B4, production (PostgreSQL store + Temporal on PostgreSQL): Temporal's databases", prod.temporal.String(), "-", "-", "", ""},
			benchRow{"C", "… the store's database", prod.store.String(), "-", "-", "", ""},
			benchRow{"C", "… CPU-ms per turn", fmt.Sprintf("gateway %.1f, temporal-dev %.1f", prod.gwCPU, prod.devCPU), "-", "-", "", ""})
	}
	return rows
}

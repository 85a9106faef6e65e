package testenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// History fetches a run's full event history ("" = the latest run).
func History(t testing.TB, c client.Client, workflowID, runID string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// RecordHistory writes a run's history as JSON into NANOBOT_RECORD_HISTORY_DIR
// (when set), for the replay tests in workflows/testdata.
func RecordHistory(t testing.TB, c client.Client, workflowID, runID, name string) {
	t.Helper()
	dir := os.Getenv("NANOBOT_RECORD_HISTORY_DIR")
	if dir == "" {
		return
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(History(t, c, workflowID, runID))
	if err != nil {
		t.Fatalf("encode history of %s: %v", workflowID, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

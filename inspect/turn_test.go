package inspect

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestShowRecordedTurnGolden renders recorded turn histories and compares
// them with the golden text (go test ./inspect -update rewrites it).
func TestShowRecordedTurnGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := os.Open(f)
			require.NoError(t, err)
			defer r.Close()
			h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
			require.NoError(t, err)
			turn, err := FromHistory("turn/cli:recorded", h.GetEvents())
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, Render(&out, turn, Options{UIURL: "http://127.0.0.1:8233", Namespace: "default"}))
			golden := f[:len(f)-len(".json")] + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./inspect -update to write %s", golden)
			require.Equal(t, string(want), out.String())
		})
	}
}

func TestHistoryWithoutStartIsAnError(t *testing.T) {
	_, err := FromHistory("turn/x", nil)
	require.ErrorContains(t, err, "no start event")
}

package chat

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCutAndPreviewKeepRunesWhole(t *testing.T) {
	s := "héllo wörld"
	require.Equal(t, "h", Cut(s, 2), "é is two bytes: the cut steps back")
	require.Equal(t, s, Cut(s, 100))
	require.Equal(t, "", Cut(s, 0))
	require.Equal(t, "hé…", Preview(s, 6))
	require.Equal(t, s, Preview(s, len(s)))
}

func TestMessageJSONRoundTrips(t *testing.T) {
	for _, raw := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
		`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"x"}}]}`,
	} {
		var m Message
		require.NoError(t, json.Unmarshal([]byte(raw), &m))
		out, err := json.Marshal(m)
		require.NoError(t, err)
		require.JSONEq(t, raw, string(out))
	}
	var m Message
	require.Error(t, json.Unmarshal([]byte(`{"role":"user","content":42}`), &m))
}

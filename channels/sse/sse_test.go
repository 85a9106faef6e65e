package sse

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEventsAreReadInOrderAfterTheLastID: the request names the last id,
// events come with their ids and joined data lines, keep-alive comments
// are not events, and a stream gone silent is ended by the watchdog.
func TestEventsAreReadInOrderAfterTheLastID(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/events" || r.Header.Get("Last-Event-ID") != "6" || r.Header.Get("Accept") != "text/event-stream" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, ": keep-alive\n\nid: 7\ndata: {\"a\":\ndata: 1}\n\nid: 8\n\ndata: no id\n\n")
		w.(http.Flusher).Flush()
		select { // silent until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)

	_, err := Open(context.Background(), srv.Client(), srv.URL+"/events", "")
	require.ErrorContains(t, err, "404", "the last id is asked for")

	s, err := Open(context.Background(), srv.Client(), srv.URL+"/events", "6")
	require.NoError(t, err)
	defer s.Close()
	var got []Event
	lines := 0
	err = s.Each(300*time.Millisecond, func() { lines++ }, func(ev Event) error { got = append(got, ev); return nil })
	require.Error(t, err, "the silent stream was ended")
	require.Equal(t, []Event{{ID: "7", Data: "{\"a\":\n1}"}, {ID: "8"}, {Data: "no id"}}, got)
	require.Equal(t, 10, lines, "every line counts as a sign of life")
}

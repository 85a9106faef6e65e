// Package sse is the Server-Sent Events client of the channels whose
// platform streams its events over HTTP (signal-cli's daemon): the request
// that resumes after Last-Event-ID, a watchdog that takes a silent stream
// for dead, and the events parsed one by one.
package sse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Event is one event of the stream: its id ("" when it named none) and
// its data lines joined ("" for an event that only moves the id).
type Event struct{ ID, Data string }

// Stream is one open event stream.
type Stream struct {
	resp   *http.Response
	cancel context.CancelFunc
}

// Open asks url for its events after lastEventID ("": from now on); an
// answer that is not 200 is an error.
func Open(ctx context.Context, hc *http.Client, url, lastEventID string) (*Stream, error) {
	sctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s: HTTP %s", req.URL.Path, resp.Status)
	}
	return &Stream{resp: resp, cancel: cancel}, nil
}

// Close ends the stream.
func (s *Stream) Close() {
	s.cancel()
	s.resp.Body.Close()
}

// maxLine bounds one line of the stream (an event's data line).
const maxLine = 16 << 20

// Each hands the stream's events to handle in order until the stream ends
// or handle fails. A stream that brings nothing for silence (not even a
// keep-alive comment) is taken for dead (0: never); the watchdog waits
// while handle runs. alive (nil: none) is told of every line.
func (s *Stream) Each(silence time.Duration, alive func(), handle func(Event) error) error {
	if silence <= 0 {
		silence = time.Duration(1<<63 - 1)
	}
	watchdog := time.AfterFunc(silence, s.cancel)
	defer watchdog.Stop()
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var ev Event
	var data []string
	for sc.Scan() {
		watchdog.Reset(silence)
		if alive != nil {
			alive()
		}
		line := sc.Text()
		if line != "" {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.ID = value
			case "data":
				data = append(data, value)
			}
			continue
		}
		if ev.ID != "" || len(data) > 0 { // a blank line ends an event
			ev.Data = strings.Join(data, "\n")
			watchdog.Stop()
			if err := handle(ev); err != nil {
				return err
			}
			watchdog.Reset(silence)
		}
		ev, data = Event{}, nil
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the server closed the stream")
}

package dendritepeer

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// Event is a room event as /messages returns it.
type Event struct {
	ID      string         `json:"event_id"`
	Type    string         `json:"type"`
	Sender  string         `json:"sender"`
	Content map[string]any `json:"content"`
	TS      int64          `json:"origin_server_ts"`
}

// Body is the event's content.body ("" if none).
func (e Event) Body() string { s, _ := e.Content["body"].(string); return s }

// String is a content field as a string ("" if absent).
func (e Event) String(key string) string { s, _ := e.Content[key].(string); return s }

// Relation is content.m.relates_to (nil if none).
func (e Event) Relation() map[string]any {
	r, _ := e.Content["m.relates_to"].(map[string]any)
	return r
}

// ReplyTo is the event this one answers (m.in_reply_to), "" if none.
func (e Event) ReplyTo() string {
	r := e.Relation()
	if r == nil {
		return ""
	}
	in, _ := r["m.in_reply_to"].(map[string]any)
	s, _ := in["event_id"].(string)
	return s
}

// Replaces is the event this one edits (rel_type m.replace), "" if none.
func (e Event) Replaces() string {
	r := e.Relation()
	if r == nil || r["rel_type"] != "m.replace" {
		return ""
	}
	s, _ := r["event_id"].(string)
	return s
}

// Messages are the room's m.room.message events, oldest first (up to 500).
func (u *User) Messages(t testing.TB, roomID string) []Event {
	t.Helper()
	var resp struct {
		Chunk []Event `json:"chunk"`
	}
	filter := url.QueryEscape(`{"types":["m.room.message"]}`)
	u.call(t, http.MethodGet, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/messages?dir=b&limit=500&filter="+filter, nil, &resp)
	slices.Reverse(resp.Chunk)
	return resp.Chunk
}

// From are the messages sent by one user, edits left out.
func From(events []Event, sender *User) []Event {
	var out []Event
	for _, e := range events {
		if e.Sender == sender.ID && e.Replaces() == "" {
			out = append(out, e)
		}
	}
	return out
}

// Edits are the m.replace events of one message, oldest first.
func Edits(events []Event, eventID string) []Event {
	var out []Event
	for _, e := range events {
		if e.Replaces() == eventID {
			out = append(out, e)
		}
	}
	return out
}

// Shown is what a client shows for a message: the m.new_content of its
// latest edit, or its own content.
func Shown(events []Event, original Event) map[string]any {
	shown := original.Content
	for _, e := range Edits(events, original.ID) {
		if nc, ok := e.Content["m.new_content"].(map[string]any); ok && e.Sender == original.Sender {
			shown = nc
		}
	}
	return shown
}

// ShownBody is Shown's body.
func ShownBody(events []Event, original Event) string {
	s, _ := Shown(events, original)["body"].(string)
	return s
}

// JSON is raw event content, sent as given (for malformed events).
func JSON(s string) []byte { return []byte(s) }

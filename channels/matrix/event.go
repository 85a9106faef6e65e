package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"maunium.net/go/mautrix/event"
)

// maxInboundRunes drops texts no person types to a bot (a homeserver
// allows events up to 64 KiB): they would only fill the model's context.
const maxInboundRunes = 30_000

// rawEvent is a room event's envelope; its content is read by type.
type rawEvent struct {
	ID       string          `json:"event_id"`
	Type     string          `json:"type"`
	Sender   string          `json:"sender"`
	StateKey *string         `json:"state_key"`
	TS       int64           `json:"origin_server_ts"`
	Content  json.RawMessage `json:"content"`
}

// eventIDOf is an event's id for a log line, whatever shape the event has.
func eventIDOf(raw json.RawMessage) string {
	var v struct {
		ID any `json:"event_id"`
	}
	if json.Unmarshal(raw, &v) != nil || v.ID == nil {
		return "(none)"
	}
	return fmt.Sprint(v.ID)
}

// decodeEvent reads an event's envelope, refusing what no homeserver
// should send: invalid UTF-8, fields of the wrong type, no id or sender.
func decodeEvent(raw json.RawMessage) (rawEvent, error) {
	var ev rawEvent
	if !utf8.Valid(raw) {
		return ev, errors.New("invalid UTF-8")
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		return ev, fmt.Errorf("malformed event: %w", err)
	}
	if ev.ID == "" || ev.Type == "" || ev.Sender == "" {
		return ev, errors.New("event without event_id, type or sender")
	}
	return ev, nil
}

// message is an m.room.message the channel answers, read and checked.
type message struct {
	event.MessageEventContent
	media bool // m.image, m.file, m.audio, m.video
}

// errIgnored marks a valid event the channel does not answer (a notice,
// an edit): logged at debug, not as bad input.
type errIgnored struct{ why string }

func (e errIgnored) Error() string { return e.why }

// decodeMessage reads an m.room.message's content strictly: wrong types,
// a missing body, an oversized text or a media event without an mxc:// URL
// are errors; notices, edits and other msgtypes are ignored.
func decodeMessage(content json.RawMessage) (message, error) {
	var m message
	if len(content) == 0 || content[0] != '{' {
		return m, errors.New("content is not an object")
	}
	if err := json.Unmarshal(content, &m.MessageEventContent); err != nil {
		return m, fmt.Errorf("malformed content: %w", err)
	}
	if rel := m.RelatesTo; rel != nil && rel.Type == event.RelReplace {
		return m, errIgnored{"an edit"}
	}
	switch m.MsgType {
	case event.MsgText:
	case event.MsgImage, event.MsgFile, event.MsgAudio, event.MsgVideo:
		m.media = true
	case "":
		return m, errors.New("content without msgtype")
	default:
		return m, errIgnored{"msgtype " + string(m.MsgType)}
	}
	switch {
	case m.media && m.File != nil && !strings.HasPrefix(string(m.File.URL), "mxc://"):
		return m, fmt.Errorf("encrypted %s without an mxc:// url", m.MsgType)
	case m.media && m.File == nil && !strings.HasPrefix(string(m.URL), "mxc://"):
		return m, fmt.Errorf("%s without an mxc:// url", m.MsgType)
	case !m.media && strings.TrimSpace(m.Body) == "":
		return m, errors.New("text without body")
	case utf8.RuneCountInString(m.Body) > maxInboundRunes:
		return m, fmt.Errorf("body of %d runes is over the %d-rune limit", utf8.RuneCountInString(m.Body), maxInboundRunes)
	}
	return m, nil
}

// threadRoot is the thread the message is in ("" if none).
func (m message) threadRoot() string {
	if rel := m.RelatesTo; rel != nil && rel.Type == event.RelThread {
		return string(rel.EventID)
	}
	return ""
}

// caption is what the user wrote with a file: the body, unless the body
// is only the file's name.
func (m message) caption() string {
	if m.FileName == "" || m.FileName == m.Body {
		return ""
	}
	return strings.TrimSpace(m.Body)
}

// fileName is the file's name as sent.
func (m message) fileName() string {
	if m.FileName != "" {
		return m.FileName
	}
	return m.Body
}

// kind is the file's kind as the model reads it.
func (m message) kind() string {
	if m.MsgType == event.MsgImage {
		return "image"
	}
	return strings.TrimPrefix(string(m.MsgType), "m.")
}

package session

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nanobot-durable/nanobot/chat"
)

// DecodeMessage reads one journaled message, as every backend stores it.
func DecodeMessage(raw []byte) (chat.Message, error) {
	var m chat.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return chat.Message{}, err
	}
	if !knownRole(m.Role) {
		// A roleless row ({} or null) would make every later model request fail.
		return chat.Message{}, fmt.Errorf("not a message (role %q)", m.Role)
	}
	return m, nil
}

// EncodeMessage writes one message as a JSONL line holds it (no trailing newline).
func EncodeMessage(m chat.Message) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func knownRole(r string) bool {
	return r == chat.RoleUser || r == chat.RoleAssistant || r == chat.RoleTool || r == chat.RoleSystem
}

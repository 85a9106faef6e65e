package channels

import (
	"strings"
	"sync"
)

// ChatHistory keeps each group chat's recent messages (nanobot's
// groupMessageBufferSize, Signal's): a message addressing the bot carries
// the ones before it to the model as context.
type ChatHistory struct {
	mu   sync.Mutex
	size int
	msgs map[string][]string // "name: text", oldest first, the newest last
}

// NewChatHistory keeps the last size messages of each chat.
func NewChatHistory(size int) *ChatHistory {
	return &ChatHistory{size: max(size, 1), msgs: map[string][]string{}}
}

// maxHistoryRunes bounds one kept message, as in nanobot.
const maxHistoryRunes = 200

// Add keeps one message of chat, by name.
func (h *ChatHistory) Add(chat, name, text string) {
	if r := []rune(text); len(r) > maxHistoryRunes {
		text = string(r[:maxHistoryRunes])
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	buf := append(h.msgs[chat], name+": "+text)
	if len(buf) > h.size {
		buf = buf[len(buf)-h.size:]
	}
	h.msgs[chat] = buf
}

// Context is the block put before a message addressing the bot: the
// chat's messages before the newest (that message itself), "" when there
// are none.
func (h *ChatHistory) Context(chat string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	buf := h.msgs[chat]
	if len(buf) <= 1 {
		return ""
	}
	return "[Recent group messages for context:]\n" + strings.Join(buf[:len(buf)-1], "\n") + "\n---\n"
}

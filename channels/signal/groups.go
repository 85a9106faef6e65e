package signal

import (
	"strings"
	"sync"
)

// groupBuffers keep each group's recent messages, nanobot's
// groupMessageBufferSize: a mention carries them to the model as context.
type groupBuffers struct {
	mu   sync.Mutex
	size int
	msgs map[string][]string // "name: text", oldest first, the newest last
}

func newGroupBuffers(size int) *groupBuffers {
	return &groupBuffers{size: size, msgs: map[string][]string{}}
}

// maxContextRunes bounds one buffered message, as in nanobot.
const maxContextRunes = 200

func (g *groupBuffers) add(group, name, text string) {
	if r := []rune(text); len(r) > maxContextRunes {
		text = string(r[:maxContextRunes])
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	buf := append(g.msgs[group], name+": "+text)
	if len(buf) > g.size {
		buf = buf[len(buf)-g.size:]
	}
	g.msgs[group] = buf
}

// context is the block put before a mention: the group's messages before
// the newest (the mention itself), "" when there are none.
func (g *groupBuffers) context(group string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	buf := g.msgs[group]
	if len(buf) <= 1 {
		return ""
	}
	return "[Recent group messages for context:]\n" + strings.Join(buf[:len(buf)-1], "\n") + "\n---\n"
}

package providers

import "strings"

// thinkSplitter separates streamed content into visible text and inline
// reasoning as it arrives, holding back a tail that might be the start of a
// tag split across chunks, so channels never flash "<think>".
type thinkSplitter struct {
	closer   string // "</tag>" while inside a block, "" outside
	pending  string
	trimLead bool // drop the whitespace that usually follows a closing tag
}

func (s *thinkSplitter) feed(chunk string) (visible, reasoning string) {
	s.pending += chunk
	var vis, rea strings.Builder
	for {
		if s.closer == "" {
			j, tag := nextOpenThink(s.pending, 0)
			if j >= 0 {
				s.writeVisible(&vis, s.pending[:j])
				s.pending = s.pending[j+len(tag)+2:]
				s.closer = "</" + tag + ">"
				continue
			}
			cut := len(s.pending) - heldTail(s.pending, openers)
			s.writeVisible(&vis, s.pending[:cut])
			s.pending = s.pending[cut:]
			break
		}
		if k := strings.Index(s.pending, s.closer); k >= 0 {
			rea.WriteString(s.pending[:k])
			s.pending = s.pending[k+len(s.closer):]
			s.closer = ""
			s.trimLead = true
			continue
		}
		cut := len(s.pending) - heldTail(s.pending, []string{s.closer})
		rea.WriteString(s.pending[:cut])
		s.pending = s.pending[cut:]
		break
	}
	return vis.String(), rea.String()
}

// flush releases whatever was held back at the end of the stream.
func (s *thinkSplitter) flush() (visible, reasoning string) {
	rest := s.pending
	s.pending = ""
	if s.closer != "" {
		return "", rest
	}
	var vis strings.Builder
	s.writeVisible(&vis, rest)
	return vis.String(), ""
}

func (s *thinkSplitter) writeVisible(b *strings.Builder, text string) {
	if s.trimLead {
		text = strings.TrimLeft(text, " \t\r\n")
		if text == "" {
			return
		}
		s.trimLead = false
	}
	b.WriteString(text)
}

var openers = func() []string {
	out := make([]string, 0, len(thinkTags))
	for _, t := range thinkTags {
		out = append(out, "<"+t+">")
	}
	return out
}()

// heldTail is the length of the longest suffix of s that is a proper prefix
// of one of the tags, i.e. what must wait for the next chunk.
func heldTail(s string, tags []string) int {
	longest := 0
	for _, t := range tags {
		longest = max(longest, len(t)-1)
	}
	for n := min(len(s), longest); n > 0; n-- {
		suffix := s[len(s)-n:]
		for _, t := range tags {
			if len(t) > n && strings.HasPrefix(t, suffix) {
				return n
			}
		}
	}
	return 0
}

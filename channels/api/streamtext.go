package api

import (
	"strings"

	"github.com/nanobot-durable/nanobot/providers"
)

// streamText decides what of a turn's stream events a streaming client is
// sent. SSE cannot take back what it sent, so a retried model call (a
// Reset) is handled by replay: while the retry repeats what the client
// already has, nothing is sent; once it goes past that, only the new text
// is sent; if it says something else, it starts its own paragraph. Model
// calls of one turn (text before tool calls, then the answer) are separated
// by a blank line.
type streamText struct {
	turn      string
	iteration int
	started   bool   // a model call's text has begun
	sentAny   bool   // the client has been sent some text
	seg       string // the current model call's text, as generated
	shown     string // the current model call's text, as the client has it
	replaying bool   // a retry is repeating shown
}

// Delta returns what to send for one piece of a model call's text.
func (s *streamText) Delta(turn string, iteration int, d string) string {
	if d == "" {
		return ""
	}
	prefix := ""
	if !s.started || turn != s.turn || iteration != s.iteration {
		if s.sentAny {
			prefix = "\n\n"
		}
		s.turn, s.iteration, s.started = turn, iteration, true
		s.seg, s.shown, s.replaying = "", "", false
	}
	s.seg += d
	out := d
	if s.replaying {
		switch {
		case strings.HasPrefix(s.shown, s.seg):
			return "" // the client already has this
		case strings.HasPrefix(s.seg, s.shown):
			out = s.seg[len(s.shown):]
		default:
			out = "\n\n" + s.seg // the retry says something else
		}
		s.replaying = false
		s.shown = s.seg
	} else {
		s.shown += d
	}
	s.sentAny = true
	return prefix + out
}

// Reset starts replay for a retried model call the client has text of.
func (s *streamText) Reset(turn string, iteration int) {
	if !s.started || turn != s.turn || iteration != s.iteration || s.shown == "" {
		return
	}
	s.seg, s.replaying = "", true
}

// Final returns what to send for the delivered reply: all of it if nothing
// streamed here (the model ran in another process, or a command answered),
// nothing if the client already has it as the last model call's text, else
// the reply on its own paragraph, so the client always ends with the answer.
func (s *streamText) Final(reply string) string {
	if !s.sentAny {
		return reply
	}
	if strings.TrimSpace(providers.StripThink(s.shown)) == strings.TrimSpace(reply) {
		return ""
	}
	return "\n\n" + reply
}

package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// step is one stream event or the final reply, for a streamText script.
type step struct {
	turn      string
	iteration int
	delta     string
	reset     bool
	final     *string
}

func delta(iter int, d string) step { return step{turn: "t1", iteration: iter, delta: d} }
func reset(iter int) step           { return step{turn: "t1", iteration: iter, reset: true} }
func final(s string) step           { return step{final: &s} }

// client plays a script and returns what a client would have joined.
func client(steps ...step) string {
	var s streamText
	var out strings.Builder
	for _, st := range steps {
		switch {
		case st.final != nil:
			out.WriteString(s.Final(*st.final))
		case st.reset:
			s.Reset(st.turn, st.iteration)
		default:
			out.WriteString(s.Delta(st.turn, st.iteration, st.delta))
		}
	}
	return out.String()
}

func TestStreamTextJoinsToTheReply(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		want  string
	}{
		{"deltas then the same reply", []step{delta(1, "Hel"), delta(1, "lo!"), final("Hello!")}, "Hello!"},
		{"nothing streamed: the reply whole", []step{final("/help text")}, "/help text"},
		{"text before tools, then the answer", []step{delta(1, "Let me look."), delta(2, "Found "), delta(2, "it."), final("Found it.")},
			"Let me look.\n\nFound it."},
		{"a retry that repeats the text is not shown twice",
			[]step{delta(1, "Hel"), delta(1, "lo"), reset(1), delta(1, "Hel"), delta(1, "lo"), delta(1, " world"), final("Hello world")},
			"Hello world"},
		{"a retry that repeats only part sends the rest",
			[]step{delta(1, "The answer"), reset(1), delta(1, "The ans"), delta(1, "wer is 42."), final("The answer is 42.")},
			"The answer is 42."},
		{"a retry that says something else gets its own paragraph",
			[]step{delta(1, "The answer is 4"), reset(1), delta(1, "It is "), delta(1, "42."), final("It is 42.")},
			"The answer is 4\n\nIt is 42."},
		{"a retry that stops short: the reply follows",
			[]step{delta(1, "Hello world"), reset(1), delta(1, "Hello"), final("Hello")},
			"Hello world\n\nHello"},
		{"a reset of a call that drew nothing changes nothing",
			[]step{reset(1), delta(1, "Hi"), final("Hi")}, "Hi"},
		{"a reply that differs from the stream ends the stream",
			[]step{delta(1, "partial"), final("I completed the tool steps but couldn't produce a final answer.")},
			"partial\n\nI completed the tool steps but couldn't produce a final answer."},
		{"think blocks streamed are not a different reply",
			[]step{delta(1, "<think>hmm</think>"), delta(1, "Yes."), final("Yes.")}, "<think>hmm</think>Yes."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, client(tc.steps...))
		})
	}
}

func TestStreamTextNewTurnStartsNewSegment(t *testing.T) {
	var s streamText
	require.Equal(t, "a", s.Delta("t1", 1, "a"))
	require.Equal(t, "\n\nb", s.Delta("t2", 1, "b"))
	s.Reset("t1", 1) // a late reset of the old turn's call is not this segment's
	require.Equal(t, "c", s.Delta("t2", 1, "c"))
	require.Equal(t, "", s.Final("bc"))
}

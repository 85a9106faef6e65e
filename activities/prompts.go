package activities

import (
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Transient instructions of the recovery modes. nanobot's texts where the
// spec gives them (the empty retry, the start of the finalization prompt).
const (
	EmptyRetryPrompt = "Please provide your response to the user based on the conversation above."
	FinalizePrompt   = "The tool-call budget for this turn is exhausted. Do not call any more tools: " +
		"using only what you have gathered so far, give the user your best final answer now, and say what is left undone."
	RepeatedPrompt = "You called the same tool with the same arguments again after being told its result will not change. " +
		"Do not call any more tools: using only what you have gathered so far, give the user your best final answer now, and say what is left undone."
	MalformedPrompt = "Your previous reply contained a tool call without a tool name, so it was dropped. " +
		"Call a tool by its exact name, or answer the user directly."
	lengthPromptHead = "Your previous reply was cut off by the output limit. Continue exactly where it stopped, " +
		"without repeating anything already written. It ended with:\n<already_delivered_tail>"
	lengthPromptTail = "</already_delivered_tail>"
	// lengthTailChars is how much of the cut reply the continuation prompt quotes.
	lengthTailChars = 64
)

// recoveryPrompt returns the transient user message of a mode, and whether
// the call goes without tools.
func recoveryPrompt(mode string, history []chat.Message) (prompt string, noTools bool) {
	switch mode {
	case protocol.ModeEmptyRetry:
		return EmptyRetryPrompt, true
	case protocol.ModeFinalize:
		return FinalizePrompt, true
	case protocol.ModeRepeated:
		return RepeatedPrompt, true
	case protocol.ModeMalformed:
		return MalformedPrompt, false
	case protocol.ModeLength:
		tail := ""
		for i := len(history) - 1; i >= 0; i-- {
			if history[i].Role == chat.RoleAssistant {
				tail = lastRunes(history[i].Content, lengthTailChars)
				break
			}
		}
		return lengthPromptHead + tail + lengthPromptTail, false
	}
	return "", false
}

func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

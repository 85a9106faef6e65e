package protocol

import "fmt"

// Texts the user sees when a turn ends without a model answer, as nanobot
// words them; workflows say them, channels recognise them.
const (
	ModelErrorFallback = "Sorry, I encountered an error calling the AI model."
	ArrearsText        = "The AI provider rejected the request because the API key is out of quota or the account is in arrears. Please top up / check the billing status of your API key and try again."
	EmptyFinalText     = "I completed the tool steps but couldn't produce a final answer. Please try again or narrow the task."
	// NoFinalResponseText ends a subagent that spent its iterations without an answer.
	NoFinalResponseText = "Task completed but no final response was generated."
	// failedTurnText is the one reply of a turn that failed.
	failedTurnText = "Sorry, this turn failed: %s. Nothing was lost; /history shows what was saved."
)

// FailedTurnText is what a chat is told when its turn failed, and why.
func FailedTurnText(reason string) string { return fmt.Sprintf(failedTurnText, reason) }

package activities

import (
	"errors"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/secrets"
)

// secretCache holds the secrets of the config it was built from.
type secretCache struct {
	mu  sync.Mutex
	cfg *config.Config
	set *secrets.Set
}

var workerSecrets secretCache

// redactor masks the configured secrets in what goes to workflow history.
type redactor struct{ config func() *config.Config }

// secrets are the keys and tokens of the worker's current config and environment.
func (a redactor) secrets() *secrets.Set {
	var cfg *config.Config // nil: the environment's secrets only
	if a.config != nil {
		cfg = a.config()
	}
	c := &workerSecrets
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set == nil || c.cfg != cfg {
		c.cfg, c.set = cfg, secrets.FromEnv(cfg)
	}
	return c.set
}

// redact masks the configured secrets in text bound for workflow history.
func (a redactor) redact(text string) string { return a.secrets().Redact(text) }

// redactLLM masks secrets in what a model call hands to the workflow.
func (a redactor) redactLLM(res protocol.LLMCallResult) protocol.LLMCallResult {
	res.ContentPreview = a.redact(res.ContentPreview)
	for i := range res.ToolCalls {
		res.ToolCalls[i].ArgsPreview = a.redact(res.ToolCalls[i].ArgsPreview)
		res.ToolCalls[i].Hint = a.redact(res.ToolCalls[i].Hint)
		res.ToolCalls[i].Summary = a.redact(res.ToolCalls[i].Summary)
	}
	return res
}

// redactError rebuilds an activity error whose text holds a secret (a
// provider echoing the key back); its type and retry delay stay.
func (a redactor) redactError(err error) error {
	if err == nil {
		return nil
	}
	msg := a.redact(err.Error())
	if msg == err.Error() {
		return err
	}
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return errors.New(msg)
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: appErr.NonRetryable(), NextRetryDelay: appErr.NextRetryDelay()}
	return temporal.NewApplicationErrorWithOptions(a.redact(appErr.Message()), appErr.Type(), opts)
}

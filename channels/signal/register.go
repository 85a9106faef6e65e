package signal

import "github.com/nanobot-durable/nanobot/channels"

// format is how Signal shows a reply: plain text with text styles
// (markdown.Signal, rendered by SendPart since styles travel beside the text).
var format = channels.Format{Hint: channels.ChatAppHint}

// The Signal channel: channels.signal in config.json.
func init() {
	channels.Register(channels.BlockSpec(channels.Spec{
		Name:   Name,
		New:    func(deps channels.Deps) (channels.Channel, error) { return New(deps) },
		Format: format,
	}, defaults))
}

package channels

import (
	"context"

	"github.com/nanobot-durable/nanobot/protocol"
)

// The optional capabilities a channel may have. The manager looks for them
// and does the shared work (splitting, delivery progress, typing), so a
// channel implements the platform calls only.

// Part is one piece of a reply as the manager hands it to a PartSender:
// a file or a piece of text no longer than the channel's MaxLength.
type Part struct {
	// Index counts the reply's parts from 0, files first.
	Index int
	// Text is Markdown, already split; "" for a file.
	Text string
	// Media is a workspace path or an http(s) URL; "" for text.
	Media string
	// Last marks the reply's final part.
	Last bool
	// Hint marks a tool hint the manager draws while a turn runs, for a
	// platform with a quieter way to show one (Telegram's collapsed quote).
	Hint bool
}

// PartSender is a channel that sends a reply a part at a time. The manager
// splits the reply once, skips the parts an earlier attempt already sent
// (on any gateway: see Progress) and records each part it sends.
type PartSender interface {
	Channel
	// MaxLength is the platform's limit on one message, in runes.
	MaxLength() int
	// SendPart shows one part and returns the platform's message id ("" if none).
	SendPart(ctx context.Context, r Reply, p Part) (messageID string, err error)
}

// Finisher is a PartSender with work to do once a reply is all shown,
// whether its last part was sent or took a streamed message over (Slack
// swaps its reaction for doneEmoji). It runs again on a retried delivery.
type Finisher interface {
	ReplyShown(ctx context.Context, r Reply)
}

// Typer is a channel that can show "typing…". The manager shows it from
// the moment a message is admitted until its turn's answer is delivered,
// repeating it as the platform's indicator expires.
type Typer interface {
	SendTyping(ctx context.Context, route protocol.Route) error
}

// Reactor is a channel that acknowledges a message with an emoji (nanobot's
// reactEmoji) while its turn runs; the manager puts it on at admission and
// takes it off with the answer.
type Reactor interface {
	// AckEmoji is the configured emoji; "" turns reactions off.
	AckEmoji() string
	React(ctx context.Context, route protocol.Route, messageID, emoji string) error
	Unreact(ctx context.Context, route protocol.Route, messageID, emoji string) error
}

package activities

// The tests route replies to real channels: link the registry's channels.
import _ "github.com/nanobot-durable/nanobot/channels/all"

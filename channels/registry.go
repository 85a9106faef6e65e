package channels

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Spec is what a channel package registers: everything the rest of the
// program needs to know about a channel, in one place. The names a message
// may be sent to, who may talk, the delivery queues a gateway polls, the
// banner and the "enabled but cannot start" warnings all come from here.
type Spec struct {
	Name string
	// Enabled tells whether the config turns the channel on in a gateway.
	Enabled func(cfg *config.Config) bool
	// Missing names the config keys the channel cannot start without.
	Missing func(cfg *config.Config) []string
	// Check validates the channel's config block (nil: nothing to check):
	// its error names the key and the file, its warnings unknown keys.
	Check func(cfg *config.Config) ([]config.Warning, error)
	// AllowFrom is who may talk to the agent through the channel; nil: the
	// channel is guarded by its own key or token and lets its user in.
	AllowFrom func(cfg *config.Config) AllowFrom
	// PerProcess channels deliver only through the queue of the process that
	// received the message (a terminal, a waiting HTTP request); the others
	// through the channel's shared queue, served by any gateway holding it.
	PerProcess bool
	// New builds the channel; nil for channels a command builds itself (the CLI).
	New func(deps Deps) (Channel, error)
	// Login is the channel's interactive login (`nanobot channels login`);
	// nil for channels whose config holds all they need.
	Login func(ctx context.Context, l LoginDeps) error
	// Format is how the channel shows the model's reply.
	Format Format
}

// Format is how a channel shows the model's Markdown: the flavour it
// renders with and the line the system prompt tells the model about it.
type Format struct {
	// Markdown renders the model's Markdown as the platform shows it (a
	// flavour of channels/markdown); nil: the text goes as written.
	Markdown func(md string) string
	// Hint is the system prompt's "Output format" line for this channel.
	Hint string
}

// ChatAppHint is the format hint of chat apps that render Markdown
// converted to their own.
const ChatAppHint = "Your reply is shown in a chat app: keep it short; Markdown is converted."

// FormatHint is the system prompt's format line for a channel of this
// build ("" for none, or a channel this build lacks).
func FormatHint(channel string) string {
	s, _ := Lookup(channel)
	return s.Format.Hint
}

var registry struct {
	mu    sync.RWMutex
	specs map[string]Spec
}

// Register adds a channel to this build. Channel packages call it from
// init; a name registered twice is a programming error.
func Register(s Spec) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.specs == nil {
		registry.specs = map[string]Spec{}
	}
	if _, dup := registry.specs[s.Name]; dup || s.Name == "" {
		panic(fmt.Sprintf("channels: channel %q registered twice (or unnamed)", s.Name))
	}
	registry.specs[s.Name] = s
	if s.PerProcess {
		protocol.MarkPerProcess(s.Name)
	}
}

// Specs are the registered channels, sorted by name.
func Specs() []Spec {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	out := make([]Spec, 0, len(registry.specs))
	for _, s := range registry.specs {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the spec of a channel of this build.
func Lookup(name string) (Spec, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	s, ok := registry.specs[name]
	return s, ok
}

// StampReach writes on r whether anyone can take a reply on it, from this
// build's registry: nobody without a channel or on a per-process channel
// without its process queue; someone otherwise (a channel this build lacks
// included: its gateway may run elsewhere).
func StampReach(r *protocol.Route) {
	s, known := Lookup(r.Channel)
	if r.Channel == "" || (known && s.PerProcess && r.Queue == "") {
		r.Reach = protocol.ReachNobody
		return
	}
	r.Reach = protocol.ReachSomeone
}

// Known are the channels this build has; a message tool send to any other
// name fails at once instead of waiting for a gateway that cannot exist.
func Known() []string {
	var names []string
	for _, s := range Specs() {
		names = append(names, s.Name)
	}
	return names
}

// IsKnown tells whether this build has the channel.
func IsKnown(name string) bool { return slices.Contains(Known(), name) }

// AllowFromFor is the allow list of a channel in the config: a channel
// guarded by its own key or token (the CLI, the API, the web chat) lets its
// user in; an unknown channel lets nobody in.
func AllowFromFor(cfg *config.Config, channel string) AllowFrom {
	s, ok := Lookup(channel)
	switch {
	case !ok:
		return nil
	case s.AllowFrom == nil:
		return AllowFrom{"*"}
	case cfg == nil:
		return nil
	}
	return s.AllowFrom(cfg)
}

// CheckConfig validates the blocks of every registered channel, so a
// malformed block fails at start, naming its key and file.
func CheckConfig(cfg *config.Config) ([]config.Warning, error) {
	var warnings []config.Warning
	for _, s := range Specs() {
		if s.Check == nil {
			continue
		}
		w, err := s.Check(cfg)
		warnings = append(warnings, w...)
		if err != nil {
			return warnings, err
		}
	}
	return warnings, nil
}

// EnabledNames are the channels the config turns on in a gateway.
func EnabledNames(cfg *config.Config) []string {
	var names []string
	for _, s := range Specs() {
		if s.Enabled != nil && s.Enabled(cfg) {
			names = append(names, s.Name)
		}
	}
	return names
}

// Built are the channels a gateway starts and the delivery queues it polls.
type Built struct {
	Channels []Channel
	Queues   []string
	Warnings []string
	// Refused are settings the process must not start with (Unsafe errors).
	Refused []error
}

// unsafeError is a constructor's refusal of a setting that would expose the
// agent (a listener beyond loopback without its token): the process stops.
type unsafeError struct{ error }

func (e unsafeError) Unwrap() error { return e.error }

// Unsafe marks err as a setting the process must not start with.
func Unsafe(err error) error { return unsafeError{err} }

// Build makes every enabled channel (or only those named in only). A
// channel enabled but unable to run here — a block for a channel this build
// lacks, a missing token, a constructor error — is named in a warning,
// never silently left out.
func Build(cfg *config.Config, deps Deps, only map[string]bool) Built {
	var b Built
	if deps.ProcessQueue != "" {
		b.Queues = append(b.Queues, deps.ProcessQueue)
	}
	for _, s := range Specs() {
		if s.New == nil || (only != nil && !only[s.Name]) || (only == nil && (s.Enabled == nil || !s.Enabled(cfg))) {
			continue
		}
		if s.Missing != nil {
			if keys := s.Missing(cfg); len(keys) > 0 {
				b.Warnings = append(b.Warnings, fmt.Sprintf("channels.%s is enabled but lacks %s: the channel is not started",
					s.Name, strings.Join(keys, " and ")))
				continue
			}
		}
		c, err := s.New(deps)
		if errors.As(err, new(unsafeError)) {
			b.Refused = append(b.Refused, err)
			continue
		}
		if err != nil {
			b.Warnings = append(b.Warnings, fmt.Sprintf("channels.%s: %v: the channel is not started", s.Name, err))
			continue
		}
		b.Channels = append(b.Channels, c)
		if !s.PerProcess {
			b.Queues = append(b.Queues, cfg.Instance().ChannelQueue(s.Name))
		}
	}
	if only == nil {
		b.Warnings = append(b.Warnings, unbuilt(cfg)...)
	}
	return b
}

// unbuilt warns about enabled blocks of channels this build lacks, which
// nanobot users may carry in their config.
func unbuilt(cfg *config.Config) []string {
	var names []string
	for name := range cfg.Channels.Other {
		if _, ok := Lookup(config.BlockName(name)); ok {
			continue // built in: its block is read however it is spelt
		}
		var block struct {
			Enabled bool `json:"enabled"`
		}
		if _, err := cfg.ChannelBlock(name, &block); err == nil && block.Enabled {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("channels.%s is enabled but this build has no %s channel (built in: %v): it is not started", n, n, Known()))
	}
	return out
}

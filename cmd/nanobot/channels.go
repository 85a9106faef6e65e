package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// channelSpec is a chat channel this binary can run.
type channelSpec struct {
	name    string
	enabled func(*config.Config) bool
	// missing names what the channel cannot start without ("" = nothing missing).
	missing func(*config.Config) string
	build   func(deps channels.Deps) (channels.Channel, error)
	// perProcess channels deliver through this process's own queue (an HTTP
	// request waits here); the others through the channel's shared queue,
	// which any gateway holding the connection serves.
	perProcess bool
}

// channelSpecs are the channels built into this binary; each channel
// package adds its row.
var channelSpecs []channelSpec

// builtChannels are the channels a gateway starts, and its delivery queues.
type builtChannels struct {
	list     []channels.Channel
	queues   []string
	warnings []string
}

// buildChannels makes every enabled channel from the config. A channel that
// is enabled but cannot run here (not built in, or missing its token) is
// named in a warning, never silently ignored.
func buildChannels(cfg *config.Config, deps channels.Deps, only map[string]bool) builtChannels {
	var b builtChannels
	b.queues = append(b.queues, deps.ProcessQueue)
	for _, spec := range channelSpecs {
		if only != nil && !only[spec.name] {
			continue
		}
		if only == nil && !spec.enabled(cfg) {
			continue
		}
		if spec.missing != nil {
			if what := spec.missing(cfg); what != "" {
				b.warnings = append(b.warnings, fmt.Sprintf("channels.%s is enabled but lacks %s: the channel is not started", spec.name, what))
				continue
			}
		}
		c, err := spec.build(deps)
		if err != nil {
			b.warnings = append(b.warnings, fmt.Sprintf("channels.%s: %v: the channel is not started", spec.name, err))
			continue
		}
		b.list = append(b.list, c)
		if !spec.perProcess {
			b.queues = append(b.queues, protocol.ChannelQueue(spec.name))
		}
	}
	if only == nil {
		b.warnings = append(b.warnings, unbuiltChannels(cfg)...)
	}
	return b
}

// unbuiltChannels warns about enabled blocks of channels this binary lacks
// (discord, feishu, …), which nanobot users may carry in their config.
func unbuiltChannels(cfg *config.Config) []string {
	var names []string
	for name, raw := range cfg.Channels.Other {
		var block struct {
			Enabled bool `json:"enabled"`
		}
		if json.Unmarshal(raw, &block) == nil && block.Enabled {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("channels.%s is enabled but this build has no %s channel (built in: %v): it is not started", n, n, builtInNames()))
	}
	return out
}

func builtInNames() []string {
	names := []string{"cli"}
	for _, s := range channelSpecs {
		names = append(names, s.name)
	}
	return names
}

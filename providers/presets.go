package providers

import (
	"sort"

	"github.com/nanobot-durable/nanobot/config"
)

// DefaultPresetName selects agents.defaults' own model fields, so a
// session switched to a preset can switch back ("/model default").
const DefaultPresetName = "default"

// PresetFor looks up a preset for "/model <name>": a modelPresets entry, or
// "default" for agents.defaults' own model when no preset is named so.
func PresetFor(cfg *config.Config, name string) (config.ModelPreset, bool) {
	if cfg == nil || name == "" {
		return config.ModelPreset{}, false
	}
	if p, ok := cfg.ModelPresets[name]; ok {
		return p, true
	}
	if name != DefaultPresetName {
		return config.ModelPreset{}, false
	}
	d := cfg.Agents.Defaults
	return config.ModelPreset{
		Model: d.Model, Provider: d.Provider, MaxTokens: d.MaxTokens, ContextWindowTokens: d.ContextWindowTokens,
		Temperature: d.Temperature, ReasoningEffort: d.ReasoningEffort,
	}, true
}

// PresetNames lists modelPresets names, sorted, for "/model" without arguments.
func PresetNames(cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	names := make([]string, 0, len(cfg.ModelPresets))
	for name := range cfg.ModelPresets {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

package config

import (
	"fmt"
	"regexp"
)

// Transcription is nanobot's top-level "transcription" block: voice notes and
// audio files are turned into text before the model sees them. The key and
// endpoint live under providers.<provider>, as in nanobot.
type Transcription struct {
	Enabled        bool   `json:"enabled"`
	Provider       string `json:"provider"` // "" is groq
	Model          string `json:"model"`    // "" is the provider's default
	Language       string `json:"language"` // an ISO-639 hint, e.g. "en"
	MaxDurationSec int    `json:"maxDurationSec"`
	MaxUploadMB    int    `json:"maxUploadMb"`
}

var languageCode = regexp.MustCompile(`^[a-z]{2,3}$`)

// validate checks the ranges nanobot's schema enforces, naming the key.
func (t Transcription) validate(src string) error {
	if t.Language != "" && !languageCode.MatchString(t.Language) {
		return &Error{Source: src, Key: "transcription.language", Msg: fmt.Sprintf("%q is not an ISO-639 code of 2 or 3 lower-case letters (e.g. \"en\")", t.Language)}
	}
	if t.MaxDurationSec < 1 || t.MaxDurationSec > 600 {
		return &Error{Source: src, Key: "transcription.maxDurationSec", Msg: fmt.Sprintf("%d is outside 1–600", t.MaxDurationSec)}
	}
	if t.MaxUploadMB < 1 || t.MaxUploadMB > 100 {
		return &Error{Source: src, Key: "transcription.maxUploadMb", Msg: fmt.Sprintf("%d is outside 1–100", t.MaxUploadMB)}
	}
	return nil
}

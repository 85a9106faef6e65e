package protocol

import (
	"path/filepath"
	"strings"
)

// ActivityTranscribe turns a message's audio into text before BUILD.
const ActivityTranscribe = "Transcribe"

// TranscribeAttempts is how often a provider error that may pass is tried
// (nanobot's 4); the last attempt gives the user the hint instead.
const TranscribeAttempts = 4

// Transcript is one audio file of a message and what became of it: Text when
// transcribed, otherwise Hint (nanobot's words for the user) and Detail (why).
type Transcript struct {
	Path   string `json:"path"`
	Text   string `json:"text,omitempty"`
	Hint   string `json:"hint,omitempty"`
	Detail string `json:"detail,omitempty"` // nanobot's error detail: duration, size, not_configured, disabled, empty, failed
}

// TranscribeResult is every audio file's outcome; the texts stay in the journal.
type TranscribeResult struct {
	Transcripts []Transcript `json:"transcripts"`
	// Hints are the distinct hints to show the user, in file order.
	Hints []string `json:"hints,omitempty"`
}

// nanobot's hints when a voice note cannot be read (its Web UI's voiceErrors).
const (
	HintTranscriptionFailed = "Could not transcribe audio."
	HintRecordingTooLong    = "Recording is too long."
	HintNotConfigured       = "Configure a transcription provider first."
)

// audioExts are the files transcribed: the formats the Whisper API takes
// and the voice-note containers chat apps send (Telegram/WhatsApp .ogg/.oga/.opus).
var audioExts = map[string]bool{
	".ogg": true, ".oga": true, ".opus": true, ".mp3": true, ".mpga": true, ".mpeg": true,
	".m4a": true, ".wav": true, ".webm": true, ".weba": true, ".flac": true, ".aac": true,
}

// IsAudio says whether a media path is an audio file to transcribe (by name:
// the workflow decides with it, so it must not read the file).
func IsAudio(path string) bool {
	return audioExts[strings.ToLower(filepath.Ext(path))]
}

// HasAudio says whether any of the media is audio.
func HasAudio(media []string) bool {
	for _, m := range media {
		if IsAudio(m) {
			return true
		}
	}
	return false
}

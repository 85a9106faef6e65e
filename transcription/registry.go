// Package transcription turns voice notes and audio files into text through
// the OpenAI-compatible audio API (POST {base}/audio/transcriptions), with
// nanobot's providers, default models and limits.
package transcription

import "strings"

// Provider is one speech-to-text backend nanobot knows.
type Provider struct {
	Name         string // also its slot under providers (key, apiBase, default base, env key)
	DefaultModel string
	// JSONBody: the audio goes base64 in a JSON body (OpenRouter) instead of multipart.
	JSONBody bool
}

// providers are nanobot's transcription providers that speak the OpenAI audio API;
// xiaomi_mimo, stepfun and assemblyai use other APIs and are refused by name.
var known = []Provider{
	{Name: "groq", DefaultModel: "whisper-large-v3"},
	{Name: "openai", DefaultModel: "whisper-1"},
	{Name: "openrouter", DefaultModel: "openai/whisper-1", JSONBody: true},
	{Name: "siliconflow", DefaultModel: "FunAudioLLM/SenseVoiceSmall"},
}

// aliases are nanobot's other spellings.
var aliases = map[string]string{"silicon": "siliconflow"}

// DefaultProvider is nanobot's choice when transcription.provider is empty.
const DefaultProvider = "groq"

// Lookup finds a provider by name or alias; "" is groq.
func Lookup(name string) (Provider, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = DefaultProvider
	}
	if a, ok := aliases[n]; ok {
		n = a
	}
	for _, p := range known {
		if p.Name == n {
			return p, true
		}
	}
	return Provider{}, false
}

// Names lists the providers, for error messages.
func Names() []string {
	out := make([]string, len(known))
	for i, p := range known {
		out[i] = p.Name
	}
	return out
}

package session

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// copyMetadata is a deep copy of a session's metadata that equals its JSON round trip (what a
// reader of the stored session gets: numbers as float64), without encoding the values JSON
// already decodes to; anything else (an int set by code) goes through the round trip.
func copyMetadata(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !utf8.ValidString(k) {
			return roundTrip(m)
		}
		c, ok := copyJSONValue(v)
		if !ok {
			return roundTrip(m)
		}
		out[k] = c
	}
	return out
}

// copyJSONValue copies a value of the types encoding/json decodes into; false for any other.
func copyJSONValue(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0) // these do not encode: the round trip fails
	case string:
		return v, utf8.ValidString(v) // JSON replaces invalid bytes
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, ok := copyJSONValue(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, ok := copyJSONValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

func roundTrip(m map[string]any) map[string]any {
	out := map[string]any{}
	if raw, err := json.Marshal(m); err == nil {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

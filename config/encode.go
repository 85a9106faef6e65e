package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// fallbackObject is FallbackModel's object form, without its methods.
type fallbackObject FallbackModel

// decodeTree accepts a preset name or an inline model object.
func (f *FallbackModel) decodeTree(d *decoder, src, path string, val any) error {
	switch v := val.(type) {
	case string:
		if v == "" {
			return &Error{Source: src, Key: path, Msg: "empty preset name"}
		}
		*f = FallbackModel{Preset: v}
		return nil
	case map[string]any:
		var obj fallbackObject
		obj.setDefaults()
		if err := d.decodeStruct(src, path, v, reflect.ValueOf(&obj).Elem()); err != nil {
			return err
		}
		if obj.Model == "" {
			return &Error{Source: src, Key: joinKey(path, "model"), Msg: "required"}
		}
		*f = FallbackModel(obj)
		return nil
	}
	return typeError(src, path, "a preset name or an object", val)
}

// MarshalJSON writes a preset reference as its bare name, like nanobot.
func (f FallbackModel) MarshalJSON() ([]byte, error) {
	if f.Preset != "" {
		return json.Marshal(f.Preset)
	}
	return json.Marshal(fallbackObject(f))
}

// nullable turns "" into nil so optional names are written as null.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type defaultsFields Defaults

// MarshalJSON writes an empty modelPreset as null, which nanobot reads as
// "no preset" (it rejects "" as an unknown preset name).
func (d Defaults) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ModelPreset *string `json:"modelPreset"`
		defaultsFields
	}{nullable(d.ModelPreset), defaultsFields(d)})
}

type dreamFields Dream

// MarshalJSON writes empty cron and modelOverride as null, nanobot's "unset".
func (d Dream) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		dreamFields
		Cron          *string `json:"cron"`
		ModelOverride *string `json:"modelOverride"`
	}{dreamFields(d), nullable(d.Cron), nullable(d.ModelOverride)})
}

// channelsFields is Channels without MarshalJSON, to avoid recursion.
type channelsFields Channels

// MarshalJSON writes the unknown channel blocks beside the known ones so a
// Load/Save cycle keeps them.
func (c Channels) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(channelsFields(c))
	if err != nil || len(c.Other) == 0 {
		return b, err
	}
	names := make([]string, 0, len(c.Other))
	for name := range c.Other {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop the closing brace
	for _, name := range names {
		raw := c.Other[name]
		if len(raw) == 0 {
			raw = json.RawMessage("null")
		}
		if !json.Valid(raw) {
			return nil, fmt.Errorf("channels.%s: invalid JSON", name)
		}
		k, _ := json.Marshal(name)
		buf.WriteByte(',')
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(raw)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

package config

import (
	"encoding/json"
	"reflect"
)

// Key is one setting config.json can hold, by its dotted path as written
// ("agents.defaults.model"; "<name>" stands for a map key, "[]" for a list
// entry), with the Go field behind it.
type Key struct {
	Path  string
	Field reflect.StructField
	// Owner is the struct type Field belongs to (a kit type, say, shared by channels).
	Owner reflect.Type
	// Unused says why this build reads the key but does nothing with it
	// (the field's `unused:"…"` tag); "" for a key that is acted on.
	Unused string
}

// Keys lists every leaf key the config decodes, derived from the types, so
// a field added to them is a key here.
func Keys() []Key {
	var out []Key
	walkKeys(reflect.TypeFor[Config](), "", &out)
	return out
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func walkKeys(t reflect.Type, path string, out *[]Key) {
	info := structInfoOf(t)
	for _, fi := range info.fields {
		f := t.Field(fi.index)
		p := joinKey(path, fi.name)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && ft != rawMessage && !ft.Implements(treeDecoderType) && !reflect.PointerTo(ft).Implements(treeDecoderType):
			walkKeys(ft, p, out)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			walkKeys(ft.Elem(), p+".<name>", out)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !reflect.PointerTo(ft.Elem()).Implements(treeDecoderType):
			walkKeys(ft.Elem(), p+"[]", out)
		default:
			*out = append(*out, Key{Path: p, Field: f, Owner: t, Unused: fi.unused})
		}
	}
}

// BlockKeys lists every leaf key of channels.<name> as block's type (a
// channel package's typed block) decodes it.
func BlockKeys(name string, block any) []Key {
	var out []Key
	walkKeys(reflect.TypeOf(block), "channels."+name, &out)
	return out
}

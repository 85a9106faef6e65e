package config

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// envPrefix starts every override variable; "__" separates key levels, as
// in nanobot's pydantic-settings setup.
const (
	envPrefix    = "NANOBOT_"
	envDelimiter = "__"
	envConfigVar = "NANOBOT_CONFIG"
)

// envValue is a tree value that came from an environment variable; it keeps
// the variable's name for messages and its text for string fields.
type envValue struct {
	name string
	raw  string
	val  any
}

func envSource(name string) string { return "env " + name }

// parseEnvValue reads the text as JSON when it is JSON, else as a string.
func parseEnvValue(raw string) any {
	if !json.Valid([]byte(raw)) {
		return raw
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	return v
}

// applyEnv writes NANOBOT_* overrides into the tree. Variables whose first
// segment is not a top-level key (NANOBOT_LLM_TIMEOUT_S …) are other
// settings and are skipped silently.
func applyEnv(tree map[string]any, environ []string, d *decoder) {
	type envVar struct{ name, raw string }
	var vars []envVar
	for _, kv := range environ {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) || name == envConfigVar {
			continue
		}
		vars = append(vars, envVar{name, raw})
	}
	// Shorter names sort first, so NANOBOT_X__Y refines a whole-object NANOBOT_X.
	sort.SliceStable(vars, func(i, j int) bool { return vars[i].name < vars[j].name })
	root := reflect.TypeFor[Config]()
	rootInfo := structInfoOf(root)
	for _, v := range vars {
		segs := strings.Split(strings.TrimPrefix(v.name, envPrefix), envDelimiter)
		if _, ok := rootInfo.lookup(segs[0]); !ok {
			continue
		}
		ev := envValue{name: v.name, raw: v.raw, val: parseEnvValue(v.raw)}
		setEnvPath(tree, root, segs, ev, d)
	}
}

// setEnvPath walks segs through the tree alongside the Go type the tree
// decodes into, creating objects on the way, and stores ev at the end.
func setEnvPath(node map[string]any, t reflect.Type, segs []string, ev envValue, d *decoder) {
	src := envSource(ev.name)
	path := ""
	for i, seg := range segs {
		if seg == "" {
			d.warn(src, path, "empty segment in variable name; ignored")
			return
		}
		key, child, ok := envChild(node, t, seg)
		if !ok {
			d.warn(src, joinKey(path, strings.ToLower(seg)), "unknown key; variable ignored")
			return
		}
		path = joinKey(path, key)
		if i == len(segs)-1 {
			node[key] = ev
			return
		}
		next, ok := descend(node, key)
		if !ok {
			d.warn(src, path, "not an object; variable ignored")
			return
		}
		node, t = next, child
	}
}

// envChild resolves one segment against the type of node; a nil type means
// free-form JSON (raw blocks, map[string]any) where any key goes.
func envChild(node map[string]any, t reflect.Type, seg string) (string, reflect.Type, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nil || t == rawMessageType || t.Kind() == reflect.Interface:
		return matchKey(node, seg), nil, true
	case t.Kind() == reflect.Map:
		return matchKey(node, seg), t.Elem(), true
	case t.Kind() == reflect.Struct:
		info := structInfoOf(t)
		fi, ok := info.lookup(seg)
		if !ok {
			if info.rest >= 0 {
				return matchKey(node, seg), nil, true
			}
			return "", nil, false
		}
		f := info.fields[fi]
		// Reuse the file's spelling so the decoder sees one key, not two.
		for k := range node {
			if i, ok := info.lookup(k); ok && i == fi {
				return k, t.Field(f.index).Type, true
			}
		}
		return f.name, t.Field(f.index).Type, true
	}
	return "", nil, false
}

// matchKey finds an existing key spelled like seg, else uses seg lowercased
// (env names are upper-case by convention; nanobot matches them case-insensitively).
func matchKey(node map[string]any, seg string) string {
	want := normKey(seg)
	keys := make([]string, 0, len(node))
	for k := range node {
		if normKey(k) == want {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return strings.ToLower(seg)
	}
	sort.Strings(keys)
	return keys[0]
}

// descend returns the object at node[key], creating it when absent or null.
func descend(node map[string]any, key string) (map[string]any, bool) {
	cur := node[key]
	if ev, ok := cur.(envValue); ok {
		cur = ev.val
	}
	switch v := cur.(type) {
	case nil:
		m := map[string]any{}
		node[key] = m
		return m, true
	case map[string]any:
		return v, true
	}
	return nil, false
}

package config

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// decoder fills a struct from a generic JSON tree (maps, slices, json.Number,
// envValue) so that key spelling is forgiving and errors name the key path.
type decoder struct {
	warnings []Warning
}

func (d *decoder) warn(src, key, msg string) {
	d.warnings = append(d.warnings, Warning{Source: src, Key: key, Msg: msg})
}

// treeDecoder is implemented by types whose JSON shape isn't a plain struct.
type treeDecoder interface {
	decodeTree(d *decoder, src, path string, val any) error
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	treeDecoderType = reflect.TypeFor[treeDecoder]()
)

// decodeValue stores val into rv; null leaves rv (the default) untouched.
func (d *decoder) decodeValue(src, path string, val any, rv reflect.Value, snakeKeys bool) error {
	if ev, ok := val.(envValue); ok {
		src = envSource(ev.name)
		val = ev.val
		// Env text like "007" parses as a number; a string field wants the text.
		if _, isStr := val.(string); !isStr && val != nil && wantsString(rv.Type()) {
			val = ev.raw
		}
	}
	if val == nil {
		return nil
	}
	if rv.CanAddr() && rv.Addr().Type().Implements(treeDecoderType) {
		return rv.Addr().Interface().(treeDecoder).decodeTree(d, src, path, val)
	}
	if rv.Type() == rawMessageType {
		b, err := json.Marshal(stripEnv(val, false))
		if err != nil {
			return &Error{Source: src, Key: path, Msg: "cannot re-encode value", Err: err}
		}
		rv.SetBytes(b)
		return nil
	}
	switch rv.Kind() {
	case reflect.Pointer:
		elem := reflect.New(rv.Type().Elem())
		if !rv.IsNil() {
			elem.Elem().Set(rv.Elem())
		}
		if err := d.decodeValue(src, path, val, elem.Elem(), snakeKeys); err != nil {
			return err
		}
		rv.Set(elem)
		return nil
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			return typeError(src, path, "an object", val)
		}
		return d.decodeStruct(src, path, obj, rv)
	case reflect.Map:
		obj, ok := val.(map[string]any)
		if !ok {
			return typeError(src, path, "an object", val)
		}
		return d.decodeMap(src, path, obj, rv, snakeKeys)
	case reflect.Slice:
		arr, ok := val.([]any)
		if !ok {
			return typeError(src, path, "an array", val)
		}
		out := reflect.MakeSlice(rv.Type(), len(arr), len(arr))
		for i, item := range arr {
			elem := newElem(rv.Type().Elem())
			if err := d.decodeValue(src, fmt.Sprintf("%s[%d]", path, i), item, elem, false); err != nil {
				return err
			}
			out.Index(i).Set(elem)
		}
		rv.Set(out)
		return nil
	case reflect.Interface:
		rv.Set(reflect.ValueOf(stripEnv(val, true)))
		return nil
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return typeError(src, path, "a string", val)
		}
		rv.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return typeError(src, path, "a boolean", val)
		}
		rv.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := val.(json.Number)
		if !ok {
			return typeError(src, path, "an integer", val)
		}
		i, ok := toInt(n)
		if !ok || rv.OverflowInt(i) {
			return typeError(src, path, "an integer", val)
		}
		rv.SetInt(i)
		return nil
	case reflect.Float32, reflect.Float64:
		n, ok := val.(json.Number)
		if !ok {
			return typeError(src, path, "a number", val)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || rv.OverflowFloat(f) {
			return typeError(src, path, "a number", val)
		}
		rv.SetFloat(f)
		return nil
	}
	return &Error{Source: src, Key: path, Msg: "unsupported field type " + rv.Type().String()}
}

func (d *decoder) decodeStruct(src, path string, obj map[string]any, rv reflect.Value) error {
	info := structInfoOf(rv.Type())
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	// The exact camelCase spelling wins over a snake_case duplicate, as in pydantic.
	sort.Slice(keys, func(i, j int) bool {
		ei, ej := info.exact(keys[i]), info.exact(keys[j])
		if ei != ej {
			return ei
		}
		return keys[i] < keys[j]
	})
	seen := map[int]string{}
	for _, k := range keys {
		kp := joinKey(path, k)
		fi, ok := info.lookup(k)
		if !ok {
			if info.rest >= 0 {
				d.storeRest(src, kp, k, obj[k], rv.Field(info.rest))
				continue
			}
			d.warn(valueSource(src, obj[k]), kp, "unknown key")
			continue
		}
		if prev, dup := seen[fi]; dup {
			d.warn(valueSource(src, obj[k]), kp, fmt.Sprintf("same setting as %q, ignored", prev))
			continue
		}
		seen[fi] = k
		f := info.fields[fi]
		var before reflect.Value
		if f.unused != "" {
			before = reflect.New(rv.Field(f.index).Type()).Elem()
			before.Set(rv.Field(f.index))
		}
		if err := d.decodeValue(src, kp, obj[k], rv.Field(f.index), f.snakeKeys); err != nil {
			return err
		}
		if f.unused != "" && !sameSetting(before, rv.Field(f.index)) && !f.isNanobotDefault(rv.Field(f.index)) {
			d.warnings = append(d.warnings, Warning{Source: valueSource(src, obj[k]), Key: kp, Msg: "has no effect in this build: " + f.unused, Unsupported: true})
		}
	}
	return nil
}

// storeRest keeps a key the struct has no field for, verbatim.
func (d *decoder) storeRest(src, path, key string, val any, rest reflect.Value) {
	if rest.IsNil() {
		rest.Set(reflect.MakeMap(rest.Type()))
	}
	plain := stripEnv(val, false)
	if _, isObj := plain.(map[string]any); !isObj {
		// Channel blocks are objects; anything else is likely a misspelt shared key.
		d.warn(valueSource(src, val), path, "unknown key (kept as is)")
	}
	b, err := json.Marshal(plain)
	if err != nil {
		d.warn(src, path, "cannot keep value: "+err.Error())
		return
	}
	rest.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(json.RawMessage(b)))
}

func (d *decoder) decodeMap(src, path string, obj map[string]any, rv reflect.Value, snakeKeys bool) error {
	if rv.IsNil() {
		rv.Set(reflect.MakeMap(rv.Type()))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := k
		if snakeKeys {
			name = toSnake(k)
		}
		// Start from the existing entry so a file merges into the defaults.
		elem := newElem(rv.Type().Elem())
		if cur := rv.MapIndex(reflect.ValueOf(name)); cur.IsValid() {
			elem.Set(cur)
		}
		if err := d.decodeValue(src, joinKey(path, k), obj[k], elem, false); err != nil {
			return err
		}
		rv.SetMapIndex(reflect.ValueOf(name), elem)
	}
	return nil
}

// newElem makes a settable zero value, with defaults if the type has them.
func newElem(t reflect.Type) reflect.Value {
	v := reflect.New(t)
	if dv, ok := v.Interface().(defaulter); ok {
		dv.setDefaults()
	}
	return v.Elem()
}

// toInt accepts integral JSON numbers, including 8192.0 and 1e3.
func toInt(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

func wantsString(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.String
}

func typeError(src, path, want string, val any) error {
	return &Error{Source: src, Key: path, Msg: fmt.Sprintf("want %s, got %s", want, describe(val))}
}

// describe renders a value for an error message, quoting strings.
func describe(val any) string {
	switch v := val.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("boolean %t", v)
	case json.Number:
		return "number " + string(v)
	case string:
		if utf8.RuneCountInString(v) > 40 {
			v = string([]rune(v)[:40]) + "…"
		}
		return "string " + strconv.Quote(v)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case envValue:
		return describe(v.val)
	}
	return fmt.Sprintf("%T", val)
}

// stripEnv removes envValue wrappers; floats=true also turns json.Number into
// float64 for map[string]any consumers.
func stripEnv(val any, floats bool) any {
	switch v := val.(type) {
	case envValue:
		return stripEnv(v.val, floats)
	case json.Number:
		if floats {
			f, _ := strconv.ParseFloat(string(v), 64)
			return f
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = stripEnv(item, floats)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[k] = stripEnv(item, floats)
		}
		return out
	}
	return val
}

// valueSource names the env var when a value came from one.
func valueSource(src string, val any) string {
	if ev, ok := val.(envValue); ok {
		return envSource(ev.name)
	}
	return src
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// normKey folds camelCase, snake_case and env-var spellings to one form.
func normKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// toSnake turns "azureOpenai" into "azure_openai"; already-snake or
// all-caps names only get lowercased.
func toSnake(s string) string {
	var b strings.Builder
	var prev rune
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

type fieldInfo struct {
	index     int
	name      string // the json key Save writes
	alias     string
	snakeKeys bool
	// unused says why this build reads the key but does nothing with it
	// (tag `unused:"…"`): a value other than the default is warned about.
	unused string
	// nanobotDefault is nanobot's spelling of the default where it differs
	// from ours (tag `nanobot:"auto"` for an empty default), not warned about either.
	nanobotDefault string
}

func (f fieldInfo) isNanobotDefault(v reflect.Value) bool {
	return f.nanobotDefault != "" && v.Kind() == reflect.String && v.String() == f.nanobotDefault
}

type structInfo struct {
	fields []fieldInfo
	byNorm map[string]int // normKey(name or alias) → index in fields
	rest   int            // struct field index of the "rest" map, or -1
}

func (s *structInfo) lookup(key string) (int, bool) {
	i, ok := s.byNorm[normKey(key)]
	return i, ok
}

func (s *structInfo) exact(key string) bool {
	i, ok := s.byNorm[normKey(key)]
	return ok && s.fields[i].name == key
}

var structInfoCache sync.Map // reflect.Type → *structInfo

func structInfoOf(t reflect.Type) *structInfo {
	if v, ok := structInfoCache.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{byNorm: map[string]int{}, rest: -1}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		opts := strings.Split(f.Tag.Get("config"), ",")
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fi := fieldInfo{index: i, name: name, unused: f.Tag.Get("unused"), nanobotDefault: f.Tag.Get("nanobot")}
		for _, o := range opts {
			switch {
			case o == "rest":
				info.rest = i
			case o == "snakekeys":
				fi.snakeKeys = true
			case strings.HasPrefix(o, "alias="):
				fi.alias = strings.TrimPrefix(o, "alias=")
			}
		}
		if name == "-" || name == "" || info.rest == i {
			continue
		}
		info.byNorm[normKey(name)] = len(info.fields)
		if fi.alias != "" {
			info.byNorm[normKey(fi.alias)] = len(info.fields)
		}
		info.fields = append(info.fields, fi)
	}
	v, _ := structInfoCache.LoadOrStore(t, info)
	return v.(*structInfo)
}

// sameSetting tells whether a decoded value leaves the default as it was
// (nanobot's dumps write an empty list where the default is none).
func sameSetting(before, after reflect.Value) bool {
	switch after.Kind() {
	case reflect.Slice, reflect.Map:
		if before.Len() == 0 && after.Len() == 0 {
			return true
		}
	}
	return reflect.DeepEqual(before.Interface(), after.Interface())
}

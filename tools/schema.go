package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders validator messages; English, like the rest of the text the model sees.
var printer = message.NewPrinter(language.English)

// compiledSchema is a tool's parameter schema, compiled once (Registry).
type compiledSchema struct {
	raw       map[string]any // drives coercion
	validator *jsonschema.Schema
}

// compileSchema compiles a tool's JSON Schema; an empty schema means "no
// arguments constrained" rather than an error, since MCP servers send those.
func compileSchema(name string, params json.RawMessage) (*compiledSchema, error) {
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("tool %q: parse parameters schema: %w", name, err)
	}
	raw, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("tool %q: parameters schema must be a JSON object, got %s", name, jsonKind(doc))
	}
	if t, ok := raw["type"]; ok && t != "object" {
		return nil, fmt.Errorf("tool %q: parameters schema must have type \"object\", got %v", name, t)
	}
	loc := "mem:///tools/" + url.PathEscape(name) + ".json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("tool %q: add schema: %w", name, err)
	}
	v, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("tool %q: compile schema: %w", name, err)
	}
	return &compiledSchema{raw: raw, validator: v}, nil
}

// parseArgs turns the model's argument string into an object, forgiving the
// shapes nanobot forgives: empty or null means {}, a double-encoded object
// is decoded again, and a lone {"arguments": …} wrapper is unwrapped.
func parseArgs(argsJSON string, schema map[string]any) (map[string]any, error) {
	v, err := decodeLoose(argsJSON)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		if v, err = decodeLoose(s); err != nil {
			return nil, fmt.Errorf("arguments are a string that is not a JSON object: %w", err)
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parameters must be a JSON object, got %s; use named parameters matching the tool schema", jsonKind(v))
	}
	if inner, wrapped := obj["arguments"]; wrapped && len(obj) == 1 && !hasProperty(schema, "arguments") {
		switch inner := inner.(type) {
		case map[string]any:
			return inner, nil
		case string:
			return parseArgs(inner, schema)
		case nil:
			return map[string]any{}, nil
		}
	}
	return obj, nil
}

// decodeLoose decodes one JSON value keeping number precision; blank or
// "null" decodes to an empty object.
func decodeLoose(s string) (any, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return map[string]any{}, nil
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return nil, err
	}
	if v == nil {
		return map[string]any{}, nil
	}
	return v, nil
}

func hasProperty(schema map[string]any, name string) bool {
	props, _ := schema["properties"].(map[string]any)
	_, ok := props[name]
	return ok
}

// coerceArgs applies nanobot's safe, schema-driven casts before validation
// ("5" → 5 for integers, "true" → true for booleans, a JSON string for an
// array or object). It never fails; values it cannot cast are left for the
// validator to reject. It returns a new map and leaves args untouched.
func coerceArgs(schema map[string]any, args map[string]any) map[string]any {
	out, _ := coerceObject(args, schema).(map[string]any)
	return out
}

func coerceObject(obj map[string]any, schema map[string]any) any {
	props, _ := schema["properties"].(map[string]any)
	additional, _ := schema["additionalProperties"].(map[string]any)
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch sub, ok := props[k].(map[string]any); {
		case ok:
			out[k] = coerceValue(v, sub)
		case additional != nil:
			out[k] = coerceValue(v, additional)
		default:
			out[k] = normalize(v)
		}
	}
	return out
}

func coerceValue(v any, schema map[string]any) any {
	switch schemaType(schema) {
	case "integer":
		return toInteger(v)
	case "number":
		return toNumber(v)
	case "boolean":
		return toBool(v)
	case "string":
		return toString(v)
	case "array":
		v = decodeIfJSON(v, '[')
		arr, ok := v.([]any)
		if !ok {
			return normalize(v)
		}
		items, _ := schema["items"].(map[string]any)
		out := make([]any, len(arr))
		for i, x := range arr {
			if items != nil {
				out[i] = coerceValue(x, items)
			} else {
				out[i] = normalize(x)
			}
		}
		return out
	case "object":
		v = decodeIfJSON(v, '{')
		if obj, ok := v.(map[string]any); ok {
			return coerceObject(obj, schema)
		}
	}
	return normalize(v)
}

// schemaType picks the first non-null type of a schema ("['string','null']" → "string").
func schemaType(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// numericText is the text of a number given as a JSON number or a string.
func numericText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case string:
		return strings.TrimSpace(x), true
	}
	return "", false
}

func toInteger(v any) any {
	text, ok := numericText(v)
	if !ok {
		return normalize(v)
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n
	}
	// 5.0 is an integer in JSON Schema; keep anything else for the validator.
	if f, ok := finiteFloat(text); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return normalize(v)
}

func toNumber(v any) any {
	text, ok := numericText(v)
	if !ok {
		return normalize(v)
	}
	if f, ok := finiteFloat(text); ok {
		return f
	}
	return normalize(v)
}

// finiteFloat parses a decimal float, refusing NaN and ±Inf, which JSON has
// no notation for and the validator cannot compare.
func finiteFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func toBool(v any) any {
	s, ok := v.(string)
	if !ok {
		return normalize(v)
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return true
	case "false", "0", "no":
		return false
	}
	return s
}

func toString(v any) any {
	switch x := v.(type) {
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return normalize(v)
}

// decodeIfJSON decodes a string that looks like a JSON array or object
// (models often send those double-encoded).
func decodeIfJSON(v any, open byte) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	t := strings.TrimSpace(s)
	if t == "" || t[0] != open {
		return v
	}
	parsed, err := jsonschema.UnmarshalJSON(strings.NewReader(t))
	if err != nil {
		return v
	}
	return parsed
}

// normalize replaces json.Number with int64 or float64 all the way down, so
// tools see plain Go values; numbers that fit neither stay json.Number.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, ok := finiteFloat(x.String()); ok {
			return f
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

// validate checks args against the compiled schema and describes every
// failure by the parameter it concerns.
func (s *compiledSchema) validate(args map[string]any) error {
	err := s.validator.Validate(map[string]any(args))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	collectLeaves(ve, &msgs)
	if len(msgs) == 0 {
		return errors.New(ve.Error())
	}
	sort.Strings(msgs)
	return errors.New(strings.Join(dedupe(msgs), "; "))
}

func collectLeaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectLeaves(c, out)
		}
		return
	}
	msg := e.Error()
	if _, isRef := e.ErrorKind.(*kind.Reference); !isRef {
		msg = e.ErrorKind.LocalizedString(printer)
	}
	if len(e.InstanceLocation) == 0 {
		*out = append(*out, msg)
		return
	}
	*out = append(*out, fmt.Sprintf("parameter '%s': %s", paramPath(e.InstanceLocation), msg))
}

// paramPath renders an instance location the way nanobot does: a.b[0].c.
func paramPath(loc []string) string {
	var sb strings.Builder
	for i, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, int64, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

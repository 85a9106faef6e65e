package tools

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/nanobot-durable/nanobot/chat"
)

// errorHint is appended to every error result, as nanobot's registry does,
// to steer the model away from retrying the same call.
const errorHint = "\n\n[Analyze the error above and try a different approach.]"

// Registry holds the tools offered to the model. It is safe for concurrent
// use: batches execute in parallel while MCP servers may (re)register tools.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*entry
	order   []string // cached Names order; nil when stale
}

type entry struct {
	tool     Tool
	schema   func() (*compiledSchema, error)
	external bool
}

// RegisterOption adjusts how a tool is registered.
type RegisterOption func(*entry)

// External marks a tool as coming from outside the binary (MCP); external
// tools sort after all built-ins so the prompt prefix stays cache-stable.
func External() RegisterOption { return func(e *entry) { e.external = true } }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{entries: map[string]*entry{}} }

// Register adds a built-in tool and panics on a duplicate name, a
// programming error. Its schema is compiled on its first call, not at
// every process start (TestBuiltinSchemasCompile compiles each).
func (r *Registry) Register(t Tool, opts ...RegisterOption) {
	if err := r.add(t, builtinSchema(t), opts...); err != nil {
		panic(err)
	}
}

// TryRegister adds a tool whose definition comes from outside (MCP),
// compiling its parameter schema now: a bad one is refused here.
func (r *Registry) TryRegister(t Tool, opts ...RegisterOption) error {
	schema, err := compileSchema(t.Name(), t.Parameters())
	if err != nil {
		return fmt.Errorf("tools: register: %w", err)
	}
	return r.add(t, func() (*compiledSchema, error) { return schema, nil }, opts...)
}

// builtinSchema compiles a built-in's schema once, on first use.
func builtinSchema(t Tool) func() (*compiledSchema, error) {
	return sync.OnceValues(func() (*compiledSchema, error) { return compileSchema(t.Name(), t.Parameters()) })
}

func (r *Registry) add(t Tool, schema func() (*compiledSchema, error), opts ...RegisterOption) error {
	name := t.Name()
	if name == "" {
		return errors.New("tools: register: empty tool name")
	}
	e := &entry{tool: t, schema: schema}
	for _, o := range opts {
		o(e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.entries[name]; dup {
		return fmt.Errorf("tools: register: duplicate tool name %q", name)
	}
	r.entries[name] = e
	r.order = nil
	return nil
}

// Unregister removes a tool; removing an unknown name is a no-op.
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[name]; ok {
		delete(r.entries, name)
		r.order = nil
	}
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Names lists tool names: built-ins by name, then external tools by name.
func (r *Registry) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sortedLocked()...)
}

// Definitions describes the tools to the model, in Names order.
func (r *Registry) Definitions() []chat.ToolDefinition {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := r.sortedLocked()
	defs := make([]chat.ToolDefinition, 0, len(names))
	for _, n := range names {
		t := r.entries[n].tool
		defs = append(defs, chat.ToolDefinition{Name: n, Description: t.Description(), Parameters: t.Parameters()})
	}
	return defs
}

func (r *Registry) sortedLocked() []string {
	if r.order != nil {
		return r.order
	}
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ei, ej := r.entries[names[i]].external, r.entries[names[j]].external
		if ei != ej {
			return !ei
		}
		return names[i] < names[j]
	})
	r.order = names
	return names
}

// Execute runs one tool call the way nanobot's registry does: it resolves
// the name, parses, coerces and validates the arguments, runs the tool with
// panics recovered, appends the retry hint to errors and marks empty output.
func (r *Registry) Execute(ctx context.Context, env Env, name string, argsJSON string) Result {
	res := r.execute(ctx, env, name, argsJSON)
	if res.IsError {
		if strings.TrimSpace(res.Text) == "" {
			res.Text = fmt.Sprintf("Error: %s failed without a message", name)
		}
		res.Text += errorHint
		return res
	}
	if strings.TrimSpace(res.Text) == "" {
		res.Text = fmt.Sprintf("(%s completed with no output)", name)
	}
	return res
}

// execute recovers panics from argument handling as well as from the tool,
// turning them into nanobot's "Error: {Type}: {msg}" so one broken tool
// cannot take the turn down.
func (r *Registry) execute(ctx context.Context, env Env, name, argsJSON string) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = ErrorResult("Error: %s: %v", panicType(p), p)
		}
	}()
	r.mu.RLock()
	e, ok := r.entries[name]
	r.mu.RUnlock()
	if !ok {
		return r.unknownTool(env.Policy, name)
	}
	if refusal := env.Policy.permitName(name); refusal != nil {
		return Result{Text: refusal.Text, IsError: true}
	}
	args, errRes := e.args(name, argsJSON)
	if errRes != nil {
		return *errRes
	}
	if err := env.Policy.Permit(name, args); err != nil {
		return Result{Text: err.Error(), IsError: true}
	}
	if err := ctx.Err(); err != nil {
		return ErrorResult("Error: tool '%s' was not run: %v", name, err)
	}
	return e.tool.Run(ctx, env, args)
}

// RetrySafe reports whether a call of name with these arguments may run
// again on a retry: its tool dedupes its own effect by the call (RetrySafe).
func (r *Registry) RetrySafe(name, argsJSON string) bool {
	r.mu.RLock()
	e, ok := r.entries[name]
	r.mu.RUnlock()
	if !ok {
		return false
	}
	rs, ok := e.tool.(RetrySafe)
	if !ok {
		return false
	}
	args, errRes := e.args(name, argsJSON)
	return errRes == nil && rs.RetrySafe(args)
}

// args parses, coerces and validates a call's arguments against the tool's schema.
func (e *entry) args(name, argsJSON string) (map[string]any, *Result) {
	schema, err := e.schema()
	if err != nil {
		res := ErrorResult("Error: tool '%s' cannot be called: %s", name, err)
		return nil, &res
	}
	args, err := parseArgs(argsJSON, schema.raw)
	if err != nil {
		res := ErrorResult("Error: Invalid parameters for tool '%s': %s", name, err)
		return nil, &res
	}
	args = coerceArgs(schema.raw, args)
	if err := schema.validate(args); err != nil {
		res := ErrorResult("Error: Invalid parameters for tool '%s': %s", name, err)
		return nil, &res
	}
	return args, nil
}

// Permit asks the policy about a call before anything acts on it (a side
// effect's claim): nil when it may run, or when Execute will report its
// name or arguments as wrong; else a *Refusal, the model's result.
func (r *Registry) Permit(p Policy, name, argsJSON string) error {
	r.mu.RLock()
	e, ok := r.entries[name]
	r.mu.RUnlock()
	if !ok {
		return nil
	}
	if refusal := p.permitName(name); refusal != nil {
		return refusal
	}
	args, errRes := e.args(name, argsJSON)
	if errRes != nil {
		return nil
	}
	return p.Permit(name, args)
}

func (r *Registry) unknownTool(p Policy, name string) Result {
	var names []string
	for _, n := range r.Names() {
		if p.permitName(n) == nil {
			names = append(names, n) // only what the turn is offered
		}
	}
	hint := ""
	if s := suggestName(name, names); s != "" {
		hint = fmt.Sprintf(" Did you mean '%s'? Tool names must match exactly.", s)
	}
	return ErrorResult("Error: Tool '%s' not found.%s Available: %s", name, hint, strings.Join(names, ", "))
}

// panicType names a panic value's type without pointer or package noise.
func panicType(p any) string {
	if _, ok := p.(string); ok {
		return "panic"
	}
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return t.String()
	}
	return t.Name()
}

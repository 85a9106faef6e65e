package secrets

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler masks the secrets of set in every message and attribute before inner writes them.
func Handler(inner slog.Handler, set *Set) slog.Handler {
	if set == nil { // the process's registered secrets are still masked
		set = &process
	}
	return &handler{inner: inner, set: set}
}

type handler struct {
	inner slog.Handler
	set   *Set
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.set.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &handler{inner: h.inner.WithAttrs(clean), set: h.set}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), set: h.set}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.set.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = h.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if s := fmt.Sprint(v.Any()); s != h.set.Redact(s) {
			return slog.String(a.Key, h.set.Redact(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

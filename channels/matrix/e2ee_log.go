//go:build goolm

package matrix

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/rs/zerolog"
)

// zerologTo is a zerolog logger (what mautrix's crypto logs with) whose
// lines go to the channel's slog logger: its info at debug, its warnings
// and errors as they are; its debug (every request, with its body) is dropped.
func zerologTo(log *slog.Logger) zerolog.Logger {
	return zerolog.New(slogWriter{log.With("component", "matrix-crypto")}).Level(zerolog.InfoLevel)
}

// slogWriter turns one zerolog JSON line into one slog record.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(line []byte) (int, error) {
	var fields map[string]any
	if json.Unmarshal(line, &fields) != nil {
		w.log.Debug(string(line))
		return len(line), nil
	}
	level := slog.LevelDebug
	switch fields[zerolog.LevelFieldName] {
	case "warn":
		level = slog.LevelWarn
	case "error", "fatal", "panic":
		level = slog.LevelError
	}
	msg, _ := fields[zerolog.MessageFieldName].(string)
	delete(fields, zerolog.LevelFieldName)
	delete(fields, zerolog.MessageFieldName)
	delete(fields, zerolog.TimestampFieldName)
	attrs := make([]slog.Attr, 0, len(fields))
	for k, v := range fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	w.log.LogAttrs(context.Background(), level, "matrix crypto: "+msg, attrs...)
	return len(line), nil
}

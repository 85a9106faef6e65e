package activities

import (
	"context"
	"log/slog"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/diskgc"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Upkeep keeps disk bounded on the host holding the workspace.
type Upkeep struct {
	journal
	media  media.Store
	config func() *config.Config
	log    *slog.Logger
}

// DiskGC runs the retention rules of the current config (what `nanobot gc` does).
func (u *Upkeep) DiskGC(ctx context.Context, _ protocol.DiskGCInput) (protocol.DiskGCResult, error) {
	cfg := currentConfig(u.config)
	rep, err := diskgc.For(cfg, u.store, u.media, u.log).Run(ctx)
	res := protocol.DiskGCResult{Removed: map[string]int{}, Freed: rep.Freed(), Kept: rep.Kept}
	for _, r := range rep.Removed {
		res.Removed[r.Kind]++
		u.log.Info("disk gc removed", "kind", r.Kind, "what", r.What, "bytes", r.Bytes)
	}
	u.log.Info("disk gc", "removed", len(rep.Removed), "freed_bytes", rep.Total(), "kept", rep.Kept, "error", err)
	return res, err
}

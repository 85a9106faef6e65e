package main

import "context"

// serve runs the workers and only the OpenAI-compatible API (nanobot serve),
// whatever api.enabled says.
func (a *app) serve(ctx context.Context, args []string) error {
	return a.serveWorkers(ctx, "serve", args, map[string]bool{"api": true})
}

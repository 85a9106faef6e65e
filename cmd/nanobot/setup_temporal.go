package main

import (
	"context"
	"fmt"
	"sort"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"

	"github.com/nanobot-durable/nanobot/visibility"
)

// setupTemporal registers nanobot's search attributes on the namespace of an
// external cluster (temporal-dev registers them itself at start). Without
// them a cluster runs turns but the Web UI cannot list them by session.
func (a *app) setupTemporal(ctx context.Context, args []string) error {
	fs := a.flags("setup-temporal")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	c, err := a.connectToInspect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	op := c.OperatorService()
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: c.ns})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %s: %w", c.ns, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range visibility.SearchAttributes {
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case got != typ:
			return fmt.Errorf("namespace %s already has search attribute %s as %s, nanobot needs %s", c.ns, name, got, typ)
		}
	}
	names := make([]string, 0, len(visibility.SearchAttributes))
	for name := range visibility.SearchAttributes {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(missing) == 0 {
		fmt.Fprintf(a.stdout, "Namespace %s already has nanobot's search attributes: %v\n", c.ns, names)
		return nil
	}
	if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: c.ns, SearchAttributes: missing}); err != nil {
		return fmt.Errorf("add search attributes to namespace %s: %w", c.ns, err)
	}
	fmt.Fprintf(a.stdout, "Registered %d search attribute(s) on namespace %s; nanobot's are now: %v\n", len(missing), c.ns, names)
	return nil
}

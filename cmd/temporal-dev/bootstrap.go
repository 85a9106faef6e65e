package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"
)

// namespaceCacheRefresh is the server's default system.namespaceCacheRefreshInterval plus slack.
const namespaceCacheRefresh = 2500 * time.Millisecond

// errStartTimeout marks a frontend that never became ready.
var errStartTimeout = errors.New("frontend did not become ready")

// bootstrap waits for the frontend to answer and adds search attributes that namespaces from an
// earlier run (reused DB file) lack; new namespaces already got them when pre-registered.
func bootstrap(ctx context.Context, o *options, frontend string, frontendTLS *frontendTLS, logger *slog.Logger) error {
	creds := insecure.NewCredentials()
	if tlsCfg, err := frontendTLS.clientConfig(); err != nil {
		return err
	} else if tlsCfg != nil {
		creds = credentials.NewTLS(tlsCfg)
	}
	conn, err := grpc.NewClient(frontend, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("dialing frontend %s: %w", frontend, err)
	}
	defer func() { _ = conn.Close() }()
	wf := workflowservice.NewWorkflowServiceClient(conn)
	op := operatorservice.NewOperatorServiceClient(conn)

	added := false
	for _, ns := range o.Namespaces {
		desc, err := describeWhenReady(ctx, wf, ns)
		if err != nil {
			return err
		}
		updated, err := keepRetention(ctx, wf, desc, o.Retention, logger)
		if err != nil {
			return err
		}
		added = added || updated
		missing := missingSearchAttributes(desc.GetConfig().GetCustomSearchAttributeAliases(), o.SearchAttributes)
		if len(missing) == 0 {
			continue
		}
		req := &operatorservice.AddSearchAttributesRequest{Namespace: ns, SearchAttributes: missing}
		if _, err := op.AddSearchAttributes(ctx, req); err != nil {
			return fmt.Errorf("adding search attributes to namespace %q: %w", ns, err)
		}
		logger.Info("added search attributes", "namespace", ns, "count", len(missing))
		added = true
	}
	if added {
		// Other services see new aliases or retention only after their namespace cache refreshes.
		select {
		case <-time.After(namespaceCacheRefresh):
		case <-ctx.Done():
			return fmt.Errorf("waiting for namespace cache refresh: %w", ctx.Err())
		}
	}
	return nil
}

// keepRetention sets the namespace's retention to want when a database
// from an earlier run holds another; a new namespace got it when pre-registered.
func keepRetention(ctx context.Context, wf workflowservice.WorkflowServiceClient, desc *workflowservice.DescribeNamespaceResponse, want time.Duration, logger *slog.Logger) (bool, error) {
	ns := desc.GetNamespaceInfo().GetName()
	had := desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
	if had == want {
		return false, nil
	}
	_, err := wf.UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{Namespace: ns,
		Config: &namespacepb.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(want)}})
	if err != nil {
		return false, fmt.Errorf("setting the retention of namespace %q to %s: %w", ns, want, err)
	}
	logger.Info("namespace retention set", "namespace", ns, "was", had, "now", want)
	return true, nil
}

// describeWhenReady retries DescribeNamespace until the frontend serves it or ctx ends.
func describeWhenReady(ctx context.Context, wf workflowservice.WorkflowServiceClient, ns string) (*workflowservice.DescribeNamespaceResponse, error) {
	var lastErr error
	for {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := wf.DescribeNamespace(callCtx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
		cancel()
		if err == nil {
			return resp, nil
		}
		lastErr = err
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: describing namespace %q: %w", errStartTimeout, ns, lastErr)
		}
	}
}

// missingSearchAttributes returns the wanted attributes whose names are not yet aliased.
// An existing alias of another type is left alone, as the server would do.
func missingSearchAttributes(aliases map[string]string, wanted []searchAttribute) map[string]enumspb.IndexedValueType {
	existing := make([]string, 0, len(aliases))
	for _, alias := range aliases {
		existing = append(existing, alias)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, sa := range wanted {
		if !slices.Contains(existing, sa.Name) {
			missing[sa.Name] = sa.Type
		}
	}
	return missing
}

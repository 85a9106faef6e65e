package main

import (
	"fmt"
	"slices"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// keptVisibilityIndexes serve the Web UI's default list (default_idx) and nanobot's queries:
// `nanobot turn list` (WorkflowType, WorkflowId) and the subagent lookup (WorkflowType,
// ExecutionStatus, ParentWorkflowId). The custom search attributes' indexes are kept too.
var keptVisibilityIndexes = []string{"default_idx", "by_workflow_id", "by_workflow_type", "by_status", "by_parent_workflow_id"}

// unqueriedVisibilityIndexes are the other secondary indexes of the server's SQLite visibility
// schema (v1.32.1): every visibility write updates each of them, and nothing here reads them.
// A filter on one of these columns still works, by scanning.
var unqueriedVisibilityIndexes = []string{
	"by_execution_time", "by_history_length", "by_history_size_bytes", "by_execution_duration",
	"by_state_transition_count", "by_task_queue", "by_parent_run_id", "by_root_workflow_id", "by_root_run_id",
	"by_batcher_user", "by_temporal_scheduled_start_time", "by_temporal_scheduled_by_id",
	"by_temporal_schedule_paused", "by_temporal_namespace_division", "by_temporal_pause_info",
	"by_temporal_worker_deployment_version", "by_temporal_workflow_versioning_behavior", "by_temporal_worker_deployment",
	"by_temporal_bool_01", "by_temporal_bool_02", "by_temporal_datetime_01", "by_temporal_datetime_02",
	"by_temporal_double_01", "by_temporal_double_02", "by_temporal_int_01", "by_temporal_int_02",
	"by_temporal_keyword_01", "by_temporal_keyword_02", "by_temporal_keyword_03", "by_temporal_keyword_04",
	"by_temporal_low_cardinality_keyword_01",
}

// customFieldIndexes maps the pre-allocated custom search attribute columns to their indexes;
// those no namespace aliases are dropped.
var customFieldIndexes = func() map[string]string {
	m := map[string]string{}
	for _, kind := range []struct {
		field, index string
		n            int
	}{{"Bool", "bool", 3}, {"Datetime", "datetime", 3}, {"Double", "double", 3}, {"Int", "int", 3}, {"Keyword", "keyword", 10}} {
		for i := 1; i <= kind.n; i++ {
			m[fmt.Sprintf("%s%02d", kind.field, i)] = fmt.Sprintf("by_%s_%02d", kind.index, i)
		}
	}
	return m
}()

// aliasedFields are the custom search attribute columns the namespaces use.
func aliasedFields(namespaces []*sqliteschema.NamespaceConfig) []string {
	var fields []string
	for _, ns := range namespaces {
		for field := range ns.Detail.GetConfig().GetCustomSearchAttributeAliases() {
			if !slices.Contains(fields, field) {
				fields = append(fields, field)
			}
		}
	}
	return fields
}

// leanVisibilityDrops lists the indexes to drop: the unqueried ones and the custom columns'
// indexes that no namespace aliases.
func leanVisibilityDrops(aliased []string) []string {
	drops := slices.Clone(unqueriedVisibilityIndexes)
	for field, index := range customFieldIndexes {
		if !slices.Contains(aliased, field) {
			drops = append(drops, index)
		}
	}
	slices.Sort(drops)
	return drops
}

// dropUnqueriedVisibilityIndexes trims a schema made just now; IF EXISTS keeps it idempotent.
func dropUnqueriedVisibilityIndexes(cfg *config.SQL, aliased []string) error {
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindVisibility, cfg, resolver.NewNoopResolver(), log.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("opening %s to trim the visibility indexes: %w", cfg.DatabaseName, err)
	}
	defer func() { _ = db.Close() }()
	for _, index := range leanVisibilityDrops(aliased) {
		if err := db.Exec("DROP INDEX IF EXISTS " + index); err != nil {
			return fmt.Errorf("dropping visibility index %s in %s: %w", index, cfg.DatabaseName, err)
		}
	}
	return nil
}

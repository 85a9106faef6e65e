package protocol

// Disk upkeep: the retention rules (`nanobot gc`) run on a schedule, on
// the host holding the workspace.
const (
	// ActivityDiskGC applies the retention settings of the config of its time.
	ActivityDiskGC = "DiskGC"

	DiskGCWorkflowName = "DiskGCWorkflow"
)

// DiskGCInput is the disk-gc schedule's action: nothing, the firing reads
// the retention settings from the config of its time.
type DiskGCInput struct{}

// DiskGCResult counts what a sweep removed and freed, by kind
// (sessions, media, temp); the paths are in the worker's log.
type DiskGCResult struct {
	Removed map[string]int   `json:"removed,omitempty"`
	Freed   map[string]int64 `json:"freed,omitempty"`
	// Kept counts old things still named by unarchived messages.
	Kept int `json:"kept"`
}

package protocol

import (
	"fmt"
	"regexp"
	"strings"
)

// Instance names one nanobot among several on one Temporal namespace
// (config gateway.instance): its task queues, workflow IDs and schedule IDs
// carry it, so two instances never take each other's work. The default
// instance keeps the bare names, so existing runs and schedules stay found.
type Instance string

// DefaultInstance is the instance of a config that names none.
const DefaultInstance Instance = "default"

// instanceSeparator joins an instance to a name; instance names never hold it.
const instanceSeparator = "."

var instanceName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// ParseInstance checks a configured instance name ("" is the default).
func ParseInstance(name string) (Instance, error) {
	if name == "" {
		return DefaultInstance, nil
	}
	if !instanceName.MatchString(name) {
		return "", fmt.Errorf("instance %q: want 1-40 of a-z, 0-9, '-' or '_', starting with a letter or digit", name)
	}
	return Instance(name), nil
}

func (i Instance) prefix() string {
	if i == "" || i == DefaultInstance {
		return ""
	}
	return string(i) + instanceSeparator
}

// Name is a task queue, workflow ID or schedule ID of this instance.
func (i Instance) Name(name string) string { return i.prefix() + name }

// TaskQueue is the instance's turn queue.
func (i Instance) TaskQueue() string { return i.Name(TaskQueue) }

// LLMTaskQueue is the instance's model-call queue.
func (i Instance) LLMTaskQueue() string { return i.Name(LLMTaskQueue) }

// WorkspaceQueue is the instance's workspace queue.
func (i Instance) WorkspaceQueue() string { return i.Name(WorkspaceTaskQueue) }

// TurnWorkflowID is the instance's workflow ID of a session's turns.
func (i Instance) TurnWorkflowID(sessionKey string) string { return i.Name(TurnWorkflowID(sessionKey)) }

// ChannelQueue is the instance's delivery queue of a channel.
func (i Instance) ChannelQueue(channel string) string { return i.Name(ChannelQueue(channel)) }

// InstanceOfQueue is the instance a task queue belongs to; a workflow finds
// its own from its task queue, which is fixed for the run and its successors.
func InstanceOfQueue(queue string) Instance {
	if p, _, ok := strings.Cut(queue, instanceSeparator); ok && instanceName.MatchString(p) {
		return Instance(p)
	}
	return DefaultInstance
}

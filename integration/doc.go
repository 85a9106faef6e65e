// Package integration runs nanobot end to end: the real nanobot binary and
// temporal-dev, a scripted OpenAI-compatible server at the wire, real files.
package integration

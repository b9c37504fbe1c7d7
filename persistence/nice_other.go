//go:build !linux

package persistence

// lowerPriority does nothing where threads have no nice value of their own.
func lowerPriority(int) {}

package engine

// KeyTracker follows key changes for client-side caching (CLIENT TRACKING).
// The server installs one only while something is tracked, so an engine
// nobody tracks pays one nil check per change.
type KeyTracker interface {
	// KeyModified is called for every change of key, in any database
	// (tracking is by key name, as in Redis), expiry included.
	KeyModified(key []byte)
	// Flushed is called when a database, or all of them, was emptied;
	// async for FLUSHDB/FLUSHALL ASYNC.
	Flushed(async bool)
	// BeforeUnlock is called at the end of every section under the engine
	// lock, the equivalent of Redis's beforeSleep: broadcast invalidations
	// gathered in the section go out then.
	BeforeUnlock()
}

// SetKeyTracker installs t (nil removes it). Under the engine lock.
func (e *Engine) SetKeyTracker(t KeyTracker) { e.tracker = t }

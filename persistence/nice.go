package persistence

import "sync"

// Threads at a lower priority for the applier's work. A goroutine locks
// itself to a thread and raises that thread's nice value (no privilege
// needed; lowering it back would need one), then runs the work sent to it.
// The goroutine never ends: a thread whose locked goroutine ends is ended
// with it, and that would kill any child process started from the thread
// with a parent-death signal (os/exec's Pdeathsig follows the thread, not
// the process). So the threads are kept in a pool and reused by the next
// store; there are at most as many as stores were ever open at once.

type niceWorker struct {
	jobs chan func()
	done chan struct{}
}

var nicePool struct {
	mu   sync.Mutex
	idle []*niceWorker
}

// takeNiceWorker returns an idle worker at applierNice, or starts one.
func takeNiceWorker() *niceWorker {
	nicePool.mu.Lock()
	defer nicePool.mu.Unlock()
	if n := len(nicePool.idle); n > 0 {
		w := nicePool.idle[n-1]
		nicePool.idle = nicePool.idle[:n-1]
		return w
	}
	w := &niceWorker{jobs: make(chan func()), done: make(chan struct{})}
	go func() {
		lowerPriority(applierNice)
		for f := range w.jobs {
			f()
			w.done <- struct{}{}
		}
	}()
	return w
}

// run runs f on the worker's thread and returns when it is done.
func (w *niceWorker) run(f func()) {
	w.jobs <- f
	<-w.done
}

// release gives the worker back to the pool.
func (w *niceWorker) release() {
	nicePool.mu.Lock()
	nicePool.idle = append(nicePool.idle, w)
	nicePool.mu.Unlock()
}

package experiment

import "sync"

// Parallel runs work(i) for every index of todo, in todo's order, on at
// most jobs goroutines (at least one), each run on a kernel of its own, so
// the results do not depend on jobs. done(i, r) is called under one lock
// after each success, in completion order (for counters and progress).
// The first error stops the handing out of further work and is returned
// once the runs in flight have finished; work wraps its errors as its
// caller wants them reported. Sweeps and the fidelity corpus both run
// through it.
func Parallel(jobs int, todo []int, work func(i int) (*Record, error), done func(i int, r *Record)) error {
	var (
		mu       sync.Mutex
		firstErr error
		next     int
		wg       sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil || next >= len(todo) {
			return 0, false
		}
		i := todo[next]
		next++
		return i, true
	}
	for w := 0; w < max(jobs, 1) && w < len(todo); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := take()
				if !ok {
					return
				}
				r, err := work(i)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
				} else {
					done(i, r)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

//go:build !unix

package hub

import "sync"

// held guards downloads within this process where flock(2) is missing;
// other processes are not excluded on these systems.
var held sync.Map // path -> struct{}

func tryLock(path string) (unlock func(), ok bool, err error) {
	if _, busy := held.LoadOrStore(path, struct{}{}); busy {
		return nil, false, nil
	}
	return func() { held.Delete(path) }, true, nil
}

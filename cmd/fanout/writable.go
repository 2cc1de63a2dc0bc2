package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// checkWritable checks, before any work, that the file a flag names can be
// written: its folder exists and takes a new file, and the path is not a
// folder. A benchmark of minutes must not fail at its end on a typo. The
// error names the flag and the path.
func checkWritable(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s: %s is a folder; name a file", flag, path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".fanout-check-*")
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%s: cannot write %s: the folder %s does not exist", flag, path, dir)
		}
		return fmt.Errorf("%s: cannot write %s: the folder %s takes no new file (%v)", flag, path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// checkWritables is checkWritable over flag, path pairs.
func checkWritables(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := checkWritable(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

package checkpoint

import (
	"fmt"
)

// OldFormatNote says what a checkpoint in an older format lacks, or "".
func OldFormatNote(path string, c *Checkpoint) string {
	if c.Format >= CurrentFormat || c.Format == 0 {
		return ""
	}
	return fmt.Sprintf("note: %s is a format-%d checkpoint: it has no checksum and no dataset fingerprint, so neither was checked (the next save writes format %d)",
		path, c.Format, CurrentFormat)
}

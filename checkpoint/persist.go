package checkpoint

import (
	"fmt"
	"reflect"
	"strings"
)

// Changed names, as "lr 0.01 (was 0.003), epochs 4 (was 2)", the
// settings of now that differ from was, each by its flag's name. Resume
// refuses a changed seed, batch or fanouts, and the model's shape; any
// other change is allowed, and said.
func Changed(was, now Config) string {
	var out []string
	a, b := reflect.ValueOf(was), reflect.ValueOf(now)
	for i := range a.NumField() {
		if reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			continue
		}
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
		out = append(out, fmt.Sprintf("%s %v (was %v)", strings.ReplaceAll(name, "_", "-"), b.Field(i).Interface(), a.Field(i).Interface()))
	}
	return strings.Join(out, ", ")
}

// OldFormatNote says what a checkpoint in an older format lacks, or "".
func OldFormatNote(path string, c *Checkpoint) string {
	if c.Format >= CurrentFormat || c.Format == 0 {
		return ""
	}
	return fmt.Sprintf("note: %s is a format-%d checkpoint: it has no checksum and no dataset fingerprint, so neither was checked (the next save writes format %d)",
		path, c.Format, CurrentFormat)
}

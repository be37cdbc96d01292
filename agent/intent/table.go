package intent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// TableID is the routing table of a route or a rule: its number, or in
// the intent a name, the kernel's own (main, local, default) or one of
// /etc/iproute2/rt_tables (or iproute2's /usr/share/iproute2/rt_tables).
// A name is resolved as the document is parsed (the shape check names an
// unknown one with its JSON path); the value is the number, and a
// document is written back with numbers.
type TableID uint32

// JSONNumberOrName marks the type as a number or a name in JSON (for the
// shape check and the schema test).
func (TableID) JSONNumberOrName() {}

// checkJSONName is the shape check of a name given for a table.
func (TableID) checkJSONName(name string) error {
	if len(name) > maxTableName {
		return fmt.Errorf("the name is %d bytes: a table's is at most %d", len(name), maxTableName)
	}
	_, err := LookupTable(name)
	return err
}

// maxTableName bounds a table's name (iproute2's are shorter).
const maxTableName = 64

// UnmarshalJSON reads a table's number or name.
func (t *TableID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return err
		}
		n, err := LookupTable(s)
		*t = TableID(n)
		return err
	}
	n, err := strconv.ParseUint(string(b), 10, 32)
	if err != nil {
		return fmt.Errorf("%s: not a table number (0-4294967295) or name", b)
	}
	*t = TableID(n)
	return nil
}

// kernelTables are the tables the kernel names itself.
var kernelTables = map[string]uint32{"main": TableMain, "local": 255, "default": 253}

// RTTablesFiles are where iproute2 keeps the table names, read in order
// (a name of the first wins).
var RTTablesFiles = []string{"/etc/iproute2/rt_tables", "/usr/share/iproute2/rt_tables"}

// maxRTTables bounds a table names file: one larger is not read.
const maxRTTables = 64 << 10

var rtTables struct {
	once  sync.Once
	names map[string]uint32
}

// errUnknownTable is a table name neither the kernel nor iproute2 knows.
var errUnknownTable = errors.New("unknown table name")

// LookupTable returns the number of the table name: the kernel's main,
// local, default, or a name of the RTTablesFiles (read once, untrusted:
// bounded, a malformed line skipped).
func LookupTable(name string) (uint32, error) {
	if n, ok := kernelTables[name]; ok {
		return n, nil
	}
	rtTables.once.Do(func() {
		rtTables.names = map[string]uint32{}
		for _, f := range RTTablesFiles {
			for k, v := range readRTTables(f) {
				if _, seen := rtTables.names[k]; !seen {
					rtTables.names[k] = v
				}
			}
		}
	})
	if n, ok := rtTables.names[name]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("%w %q: give a number, main, local, default or a name of %s", errUnknownTable, name, RTTablesFiles[0])
}

// rtTableName is a name iproute2 would print: no space, no comment.
var rtTableName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`) })

// readRTTables reads a table names file ("NUMBER NAME" lines, "#"
// comments); nil when it cannot be read or is larger than maxRTTables.
func readRTTables(path string) map[string]uint32 {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRTTables+1))
	if err != nil || len(data) > maxRTTables {
		return nil
	}
	return parseRTTables(data)
}

// parseRTTables parses the lines of a table names file, skipping those
// that are not a number (decimal or 0x hex, 1-4294967295) and a name.
func parseRTTables(data []byte) map[string]uint32 {
	out := map[string]uint32{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) != 2 || !rtTableName().MatchString(fields[1]) {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 0, 32)
		if err != nil || n == 0 {
			continue
		}
		if _, dup := out[fields[1]]; !dup {
			out[fields[1]] = uint32(n)
		}
	}
	return out
}

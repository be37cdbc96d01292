package intent

import (
	"fmt"
	"strconv"
	"time"
)

// Centiseconds is a duration the kernel keeps in centiseconds (a bridge's
// forward delay): in the intent either that number, as ip-link takes it
// (1500 is 15 seconds), or a duration with its unit, as show prints it
// ("15s", "1.5s", "800ms"), a whole number of centiseconds. Text holds
// the form with a unit; Validate checks it with its JSON path.
type Centiseconds struct {
	Count int
	Text  string
}

// JSONNumberOrName marks the type as a number or a string in JSON (for the
// shape check and the schema test).
func (Centiseconds) JSONNumberOrName() {}

// CentisecondsOf is d in the form with a unit (what the kernel holds, as
// show prints it).
func CentisecondsOf(d time.Duration) Centiseconds {
	if d == 0 {
		return Centiseconds{}
	}
	return Centiseconds{Text: d.String()}
}

// IsZero reports whether nothing was given (the kernel's default).
func (c Centiseconds) IsZero() bool { return c.Count == 0 && c.Text == "" }

// Duration is the value; a Text that does not parse (Validate refuses it)
// is 0.
func (c Centiseconds) Duration() time.Duration {
	if c.Text == "" {
		return time.Duration(c.Count) * 10 * time.Millisecond
	}
	d, _ := time.ParseDuration(c.Text)
	return d
}

// Centi is the value in centiseconds, as the range checks state it.
func (c Centiseconds) Centi() int { return int(c.Duration() / (10 * time.Millisecond)) }

// String is the value as given: the number, or the duration quoted.
func (c Centiseconds) String() string {
	if c.Text != "" {
		return strconv.Quote(c.Text)
	}
	return strconv.Itoa(c.Count)
}

// MarshalJSON writes the form it was given in.
func (c Centiseconds) MarshalJSON() ([]byte, error) {
	if c.Text != "" {
		return []byte(strconv.Quote(c.Text)), nil
	}
	return []byte(strconv.Itoa(c.Count)), nil
}

// UnmarshalJSON reads a number of centiseconds or a duration with a unit
// (checked by Validate).
func (c *Centiseconds) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return err
		}
		*c = Centiseconds{Text: s}
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return fmt.Errorf("%s: not an integer or a duration", b)
	}
	*c = Centiseconds{Count: int(n)}
	return nil
}

// centiseconds checks a Centiseconds at o: a duration with a unit that
// parses, is not negative and is a whole number of centiseconds, within
// [lo, hi] centiseconds.
func (c *checker) centiseconds(o Origin, v Centiseconds, lo, hi int) bool {
	if v.Text == "" {
		return c.inRange(o, v.Count, lo, hi)
	}
	const maxText = 32
	if len(v.Text) > maxText {
		c.fail(o, "is %d bytes: a duration is at most %d", len(v.Text), maxText)
		return false
	}
	d, err := time.ParseDuration(v.Text)
	switch {
	case err != nil:
		c.fail(o, "%q is no duration: give centiseconds (1500) or a duration with its unit (\"15s\")", v.Text)
		return false
	case d%(10*time.Millisecond) != 0:
		c.fail(o, "%q is not a whole number of centiseconds (10ms)", v.Text)
		return false
	case d < time.Duration(lo)*10*time.Millisecond || d > time.Duration(hi)*10*time.Millisecond:
		c.fail(o, "%q is out of range %s-%s", v.Text, time.Duration(lo)*10*time.Millisecond, time.Duration(hi)*10*time.Millisecond)
		return false
	}
	return true
}

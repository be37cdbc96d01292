package intent

import (
	"strconv"
	"time"

	"github.com/netagent/netagent/internal/jsonstr"
)

// Duration is a duration of the intent that the kernel keeps as a number
// of a unit U (a bridge's forward delay in centiseconds, a bond's miimon
// in milliseconds, a WireGuard keepalive in seconds): in the intent that
// number, as ip-link takes it, or a duration with its unit, as show
// prints it ("15s", "1.5s", "800ms"), a whole number of U. Text holds the
// form with a unit; Validate checks it with its JSON path.
type Duration[U durationUnit] struct {
	Count int
	Text  string
}

// durationUnit is the unit a Duration counts in.
type durationUnit interface {
	unit() (time.Duration, string)
}

type centi struct{}
type milli struct{}
type second struct{}

func (centi) unit() (time.Duration, string)  { return 10 * time.Millisecond, "centiseconds" }
func (milli) unit() (time.Duration, string)  { return time.Millisecond, "milliseconds" }
func (second) unit() (time.Duration, string) { return time.Second, "seconds" }

// Centiseconds, Milliseconds and Seconds are the Durations of the intent.
type (
	Centiseconds = Duration[centi]
	Milliseconds = Duration[milli]
	Seconds      = Duration[second]
)

// JSONNumberOrName marks the type as a number or a string in JSON (for the
// shape check and the schema test).
func (Duration[U]) JSONNumberOrName() {}

func (Duration[U]) unit() (time.Duration, string) {
	var u U
	return u.unit()
}

// Of is d in the form with a unit (what the kernel holds, as show prints
// it; zero for 0): intent.Centiseconds{}.Of(d).
func (Duration[U]) Of(d time.Duration) Duration[U] {
	if d == 0 {
		return Duration[U]{}
	}
	return Duration[U]{Text: d.String()}
}

// IsZero reports whether nothing was given (the kernel's default).
func (c Duration[U]) IsZero() bool { return c.Count == 0 && c.Text == "" }

// Duration is the value; a Text that does not parse (Validate refuses it)
// is 0.
func (c Duration[U]) Duration() time.Duration {
	u, _ := c.unit()
	if c.Text == "" {
		return time.Duration(c.Count) * u
	}
	d, _ := time.ParseDuration(c.Text)
	return d
}

// Units is the value as a number of U, as the range checks state it.
func (c Duration[U]) Units() int {
	u, _ := c.unit()
	return int(c.Duration() / u)
}

// Centi is the value in centiseconds.
func (c Duration[U]) Centi() int { return int(c.Duration() / (10 * time.Millisecond)) }

// String is the value as given: the number, or the duration quoted.
func (c Duration[U]) String() string {
	if c.Text != "" {
		return strconv.Quote(c.Text)
	}
	return strconv.Itoa(c.Count)
}

// MarshalJSON writes the form it was given in.
func (c Duration[U]) MarshalJSON() ([]byte, error) {
	if c.Text != "" {
		return []byte(strconv.Quote(c.Text)), nil
	}
	return []byte(strconv.Itoa(c.Count)), nil
}

// UnmarshalJSON reads a number of U or a duration with a unit (checked by
// Validate).
func (c *Duration[U]) UnmarshalJSON(b []byte) error {
	s, n, _, err := jsonstr.NumberOrString(b, "a duration")
	*c = Duration[U]{Count: n, Text: s}
	return err
}

// setDuration sets a Duration from what parseFast read: a string is its
// Text, a number its Count.
func (c *Duration[U]) setDuration(text string, count int) { *c = Duration[U]{Count: count, Text: text} }

// durationSetter is every Duration, for parseFast.
type durationSetter interface{ setDuration(text string, count int) }

// maxDurationText bounds a duration with its unit.
const maxDurationText = 32

// duration checks a Duration at o: a number within [lo, hi] of U, or a
// duration with its unit that parses, is a whole number of U and within
// the same range.
func checkDuration[U durationUnit](c *checker, o Origin, v Duration[U], lo, hi int) bool {
	if v.Text == "" {
		return c.inRange(o, v.Count, lo, hi)
	}
	u, name := v.unit()
	if len(v.Text) > maxDurationText {
		c.fail(o, "is %d bytes: a duration is at most %d", len(v.Text), maxDurationText)
		return false
	}
	d, err := time.ParseDuration(v.Text)
	switch {
	case err != nil:
		c.fail(o, "%q is no duration: give %s (%d) or a duration with its unit (%q)", v.Text, name, 15*time.Second/u, "15s")
		return false
	case d%u != 0:
		c.fail(o, "%q is not a whole number of %s (%s)", v.Text, name, u)
		return false
	case d < time.Duration(lo)*u || d > time.Duration(hi)*u:
		c.fail(o, "%q is out of range %s-%s", v.Text, time.Duration(lo)*u, time.Duration(hi)*u)
		return false
	}
	return true
}

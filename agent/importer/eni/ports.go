package eni

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// MaxPorts bounds the ports one bridge-ports or bond-slaves line names,
// its globs expanded.
const MaxPorts = 1024

// portList reads bridge-ports or bond-slaves as ifupdown2 does
// (modulebase.parse_port_list): "none", names, and `glob EXPR` (the next
// word only) expanded as ifupdown2's parse_glob. `regex EXPR` matches the
// interfaces the host has, which a file alone does not say: refused.
func portList(args []string) ([]string, string) {
	if args[0] == "none" {
		return nil, ""
	}
	var out []string
	glob := false
	for _, w := range args {
		switch {
		case w == "glob":
			glob = true
		case w == "noglob" || w == "noregex":
			glob = false
		case w == "regex":
			return nil, "ifupdown2's regex port patterns match the interfaces the host has, which the file does not say: list the ports by name"
		case glob:
			glob = false
			ports, why := expandGlob(w, MaxPorts-len(out))
			if why != "" {
				return nil, why
			}
			out = append(out, ports...)
		default:
			out = append(out, w)
		}
		if len(out) > MaxPorts {
			return nil, fmt.Sprintf("invalid: more than %d ports", MaxPorts)
		}
	}
	return out, ""
}

// portGlobs are ifupdown2's glob forms (modulebase.glob_regexs):
// swp[1-2]s[0-3].100, swp1-10.100 and swp[1-10].100.
var portGlobs = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^([A-Za-z0-9\-]+)\[(\d+)\-(\d+)\]([A-Za-z0-9\-]+)\[(\d+)\-(\d+)\](.*)$`),
		regexp.MustCompile(`^([A-Za-z0-9\-]+[A-Za-z])(\d+)\-(\d+)(.*)$`),
		regexp.MustCompile(`^([A-Za-z0-9\-]+)\[(\d+)\-(\d+)\](.*)$`),
	}
})

// expandGlob expands one glob word into at most max names.
func expandGlob(expr string, max int) ([]string, string) {
	if m := portGlobs()[0].FindStringSubmatch(expr); m != nil {
		var out []string
		for _, i := range portRange(m[2], m[3]) {
			for _, j := range portRange(m[5], m[6]) {
				if len(out) >= max {
					return nil, fmt.Sprintf("invalid: glob %s names more than %d ports", expr, MaxPorts)
				}
				out = append(out, fmt.Sprintf("%s%d%s%d%s", m[1], i, m[4], j, m[7]))
			}
		}
		return out, ""
	}
	for _, re := range portGlobs()[1:] {
		if m := re.FindStringSubmatch(expr); m != nil {
			r := portRange(m[2], m[3])
			if len(r) > max {
				return nil, fmt.Sprintf("invalid: glob %s names more than %d ports", expr, MaxPorts)
			}
			out := make([]string, len(r))
			for k, i := range r {
				out[k] = fmt.Sprintf("%s%d%s", m[1], i, m[4])
			}
			return out, ""
		}
	}
	return []string{expr}, "" // ifupdown2 warns and takes the word as a name
}

// portRange is from..to (empty when from > to), bounded by MaxPorts+1.
func portRange(from, to string) []int {
	a, errA := strconv.Atoi(from)
	b, errB := strconv.Atoi(to)
	if errA != nil || errB != nil || a > b {
		return nil
	}
	if b-a > MaxPorts {
		b = a + MaxPorts
	}
	out := make([]int, 0, b-a+1)
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

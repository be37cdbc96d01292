package intent

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// schemaChecker is a small JSON Schema validator for the keywords schema.json
// uses, so that tests can check documents against the schema without a
// dependency. It refuses keywords it does not know, so that the schema
// cannot grow a keyword the tests would silently ignore.
type schemaChecker struct {
	root map[string]any
}

// annotations are keywords with no effect on validation.
var annotations = []string{"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples"}

// loadSchema decodes schema.json for the tests.
func loadSchema(t testing.TB) *schemaChecker {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	return &schemaChecker{root: root}
}

// resolve follows $ref (only "#/$defs/<name>") until a schema without one.
func (sc *schemaChecker) resolve(s any) any {
	for {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			panic("unsupported $ref " + ref)
		}
		s = sc.root["$defs"].(map[string]any)[name]
		if s == nil {
			panic("undefined $ref " + ref)
		}
	}
}

// validateJSON decodes data and validates it against the root schema.
func (sc *schemaChecker) validateJSON(data []byte) []string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return []string{err.Error()}
	}
	return sc.validate(sc.root, v, "")
}

// validate returns the problems of v against the schema s, at path.
func (sc *schemaChecker) validate(s, v any, path string) []string {
	switch s := s.(type) {
	case bool:
		if !s {
			return []string{path + ": not allowed"}
		}
		return nil
	case map[string]any:
		var errs []string
		for _, kw := range slices.Sorted(maps.Keys(s)) {
			errs = append(errs, sc.keyword(s, kw, v, path)...)
		}
		return errs
	}
	panic(fmt.Sprintf("%s: schema is a %T", path, s))
}

// keyword applies one keyword of s to v.
func (sc *schemaChecker) keyword(s map[string]any, kw string, v any, path string) []string {
	arg := s[kw]
	fail := func(format string, args ...any) []string {
		return []string{fmt.Sprintf("%s: %s %s", path, kw, fmt.Sprintf(format, args...))}
	}
	switch kw {
	case "$ref":
		return sc.validate(sc.resolve(map[string]any{"$ref": arg}), v, path)
	case "type":
		types, ok := arg.([]any) // ["boolean", "object"]
		if !ok {
			types = []any{arg}
		}
		if !slices.ContainsFunc(types, func(t any) bool { return hasJSONType(v, t.(string)) }) {
			return fail("%s: got %T", arg, v)
		}
	case "const":
		if !reflect.DeepEqual(arg, v) {
			return fail("%v: got %v", arg, v)
		}
	case "enum":
		if !slices.ContainsFunc(arg.([]any), func(e any) bool { return reflect.DeepEqual(e, v) }) {
			return fail("%v: got %v", arg, v)
		}
	case "minimum", "maximum":
		return sc.bound(kw, arg.(float64), v, path)
	case "minLength", "maxLength":
		return sc.length(kw, arg.(float64), v, path)
	case "pattern":
		if str, ok := v.(string); ok && !regexp.MustCompile(arg.(string)).MatchString(str) {
			return fail("%s: got %q", arg, str)
		}
	case "properties", "additionalProperties", "propertyNames", "required", "dependentRequired":
		if obj, ok := v.(map[string]any); ok {
			return sc.object(s, kw, obj, path)
		}
	case "minItems":
		if arr, ok := v.([]any); ok && float64(len(arr)) < arg.(float64) {
			return fail("%v: got %d", arg, len(arr))
		}
	case "items":
		var errs []string
		arr, _ := v.([]any)
		for i, e := range arr {
			errs = append(errs, sc.validate(arg, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return errs
	case "allOf", "anyOf":
		return sc.combine(kw, arg.([]any), v, path)
	case "not":
		if len(sc.validate(arg, v, path)) == 0 {
			return fail("matched")
		}
	case "if":
		return sc.ifThenElse(s, v, path)
	case "then", "else":
		// applied by "if"
	default:
		if !slices.Contains(annotations, kw) {
			panic(fmt.Sprintf("%s: keyword %q is unknown to the test's checker", path, kw))
		}
	}
	return nil
}

// hasJSONType reports whether v is of the JSON type t.
func hasJSONType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case float64:
		return t == "number" || (t == "integer" && v == math.Trunc(v))
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

// bound applies minimum or maximum.
func (sc *schemaChecker) bound(kw string, limit float64, v any, path string) []string {
	n, ok := v.(float64)
	if ok && ((kw == "minimum" && n < limit) || (kw == "maximum" && n > limit)) {
		return []string{fmt.Sprintf("%s: %s %v: got %v", path, kw, limit, n)}
	}
	return nil
}

// length applies minLength or maxLength, counting code points.
func (sc *schemaChecker) length(kw string, limit float64, v any, path string) []string {
	str, ok := v.(string)
	n := float64(utf8.RuneCountInString(str))
	if ok && ((kw == "minLength" && n < limit) || (kw == "maxLength" && n > limit)) {
		return []string{fmt.Sprintf("%s: %s %v: got %q", path, kw, limit, str)}
	}
	return nil
}

// object applies one object keyword.
func (sc *schemaChecker) object(s map[string]any, kw string, obj map[string]any, path string) []string {
	var errs []string
	props, _ := s["properties"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		sub := joinPath(path, name)
		switch ps, declared := props[name]; {
		case kw == "properties" && declared:
			errs = append(errs, sc.validate(ps, obj[name], sub)...)
		case kw == "additionalProperties" && !declared:
			errs = append(errs, sc.validate(s[kw], obj[name], sub)...)
		case kw == "propertyNames":
			errs = append(errs, sc.validate(s[kw], name, sub)...)
		}
	}
	switch kw {
	case "required":
		errs = append(errs, missing(obj, s[kw].([]any), path, "required")...)
	case "dependentRequired":
		for name, deps := range s[kw].(map[string]any) {
			if _, ok := obj[name]; ok {
				errs = append(errs, missing(obj, deps.([]any), path, "dependentRequired by "+name)...)
			}
		}
	}
	return errs
}

// missing lists the names not in obj.
func missing(obj map[string]any, names []any, path, why string) []string {
	var errs []string
	for _, n := range names {
		if _, ok := obj[n.(string)]; !ok {
			errs = append(errs, fmt.Sprintf("%s: %s %q is missing", path, why, n))
		}
	}
	return errs
}

// combine applies allOf or anyOf.
func (sc *schemaChecker) combine(kw string, subs []any, v any, path string) []string {
	var all []string
	for _, sub := range subs {
		errs := sc.validate(sub, v, path)
		if kw == "anyOf" && len(errs) == 0 {
			return nil
		}
		all = append(all, errs...)
	}
	if kw == "anyOf" {
		return []string{fmt.Sprintf("%s: anyOf: no match (%s)", path, strings.Join(all, "; "))}
	}
	return all
}

// ifThenElse applies then or else by whether v matches if.
func (sc *schemaChecker) ifThenElse(s map[string]any, v any, path string) []string {
	branch := "else"
	if len(sc.validate(s["if"], v, path)) == 0 {
		branch = "then"
	}
	if sub, ok := s[branch]; ok {
		return sc.validate(sub, v, path)
	}
	return nil
}

// joinPath appends a member name to a path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// sortedStrings converts and sorts a JSON array of strings.
func sortedStrings(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprint(v)
	}
	sort.Strings(out)
	return out
}

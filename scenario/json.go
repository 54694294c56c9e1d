package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kindkit/kindkit/internal/jsonx"
)

// placeholder is a string value that stands for a captured variable.
var placeholder = regexp.MustCompile(`^\{\{([A-Za-z0-9_.-]+)\}\}$`)

func validVarName(name string) bool { return placeholder.MatchString("{{" + name + "}}") }

// placeholders lists the variable names a frame refers to, in the places
// substitute looks: string values of objects, recursively through objects,
// never inside arrays or longer strings.
func placeholders(frame json.RawMessage) []string {
	var v any
	if err := jsonx.Decode(frame, &v); err != nil {
		return nil
	}
	var names []string
	var walk func(obj map[string]any)
	walk = func(obj map[string]any) {
		for _, k := range sortedKeys(obj) {
			switch x := obj[k].(type) {
			case string:
				if m := placeholder.FindStringSubmatch(x); m != nil {
					names = append(names, m[1])
				}
			case map[string]any:
				walk(x)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		walk(obj)
	}
	return names
}

// substitute replaces every placeholder of frame by its captured value. A
// frame without placeholders is sent as written, compacted.
func substitute(frame json.RawMessage, vars map[string]any) ([]byte, error) {
	var v any
	if err := jsonx.Decode(frame, &v); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("send: not a JSON object")
	}
	replaced := false
	var walk func(obj map[string]any) error
	walk = func(obj map[string]any) error {
		for _, k := range sortedKeys(obj) {
			switch x := obj[k].(type) {
			case string:
				m := placeholder.FindStringSubmatch(x)
				if m == nil {
					continue
				}
				val, ok := vars[m[1]]
				if !ok {
					known := "no variable is captured yet"
					if len(vars) > 0 {
						known = "captured: " + strings.Join(sortedKeys(vars), ", ")
					}
					return fmt.Errorf("send: unknown variable {{%s}} (%s)", m[1], known)
				}
				obj[k] = val
				replaced = true
			case map[string]any:
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(obj); err != nil {
		return nil, err
	}
	if !replaced {
		var buf bytes.Buffer
		if err := json.Compact(&buf, frame); err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		return buf.Bytes(), nil
	}
	return jsonx.Marshal(obj)
}

// checkPath rejects a dot path with an empty segment.
func checkPath(path string) error {
	if path == "" {
		return fmt.Errorf("empty path")
	}
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			return fmt.Errorf("path %q has an empty segment", path)
		}
	}
	return nil
}

// lookup resolves a dot path from root: a segment indexes an object by key,
// or an array when it is a non-negative integer. It reports why a path does
// not exist.
func lookup(root any, path string) (any, error) {
	cur := root
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		at := strings.Join(segs[:i], ".")
		if at == "" {
			at = "the event root"
		}
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[seg]
			if !ok {
				return nil, fmt.Errorf("%s has no key %q", at, seg)
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || seg[0] == '+' || seg[0] == '-' {
				return nil, fmt.Errorf("%s is an array, and %q is not an index", at, seg)
			}
			if n >= len(x) {
				return nil, fmt.Errorf("%s has %d elements, no index %d", at, len(x), n)
			}
			cur = x[n]
		default:
			return nil, fmt.Errorf("%s is %s, not an object or array", at, jsonKind(cur))
		}
	}
	return cur, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonEqual is structural JSON equality; numbers compare by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numberEqual(x, y)
	default: // nil, bool, string
		return a == b
	}
}

func numberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, errX := strconv.ParseFloat(string(a), 64)
	y, errY := strconv.ParseFloat(string(b), 64)
	return errX == nil && errY == nil && x == y
}

// compactJSON renders a value for an error message.
func compactJSON(v any) string {
	b, err := jsonx.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
